package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// A run written into the folder of another run, and stopped part way (a
// full disk here; a second Ctrl-C stops it the same way), leaves only its
// own files beside the INCOMPLETE marker: the earlier run's charts, whose
// limiter this run does not have, and its timeline of other data, had
// stayed beside this run's metrics.json until the end's pruning, which a
// stopped write never reaches. Only when nothing but the marker could be
// written is the earlier run left as it was, whole.
func TestRunOverAnotherRunNeverMixesThem(t *testing.T) {
	scenario := faultScenario(t)
	data, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(scenario), "other.toml")
	renamed := strings.Replace(strings.Replace(string(data), `name = "conns"`, `name = "pool"`, 1), "rate = 40.0", "rate = 30.0", 1)
	if err := os.WriteFile(other, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	earlier, ref := filepath.Join(t.TempDir(), "earlier"), filepath.Join(t.TempDir(), "ref")
	for _, c := range []struct{ file, dir string }{{other, earlier}, {scenario, ref}} {
		if code, _, errOut := cli("run", c.file, "--quiet", "-o", c.dir); code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
	}
	before, want := readFolder(t, earlier), readFolder(t, ref)
	for k := 1; ; k++ {
		dir := filepath.Join(t.TempDir(), "out")
		if err := os.CopyFS(dir, os.DirFS(earlier)); err != nil {
			t.Fatal(err)
		}
		fsys := &faultFS{failAt: k, err: syscall.ENOSPC}
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", scenario, "--quiet", "-o", dir}, &stdout, &stderr, &session{fsys: fsys})
		got := readFolder(t, dir)
		if fsys.failed == "" {
			if code != exitOK || len(got) != len(want) {
				t.Fatalf("file %d never written: exit %d with %d files, want %d", k, code, len(got), len(want))
			}
			return
		}
		unmarked := maps.Clone(got)
		delete(unmarked, incompleteMarker)
		if sameFolder(unmarked, before) { // nothing written but (some of) the marker
			continue
		}
		if _, marked := got[incompleteMarker]; !marked {
			t.Errorf("file %d (%s): no marker, and the earlier run's folder was changed: %v", k, fsys.failed, keys(got))
			continue
		}
		for name, content := range got {
			if name == incompleteMarker || name == report.OutputsManifest || tempName.MatchString(filepath.Base(name)) {
				continue
			}
			if w, ok := want[name]; !ok || !bytes.Equal(content, w) {
				t.Errorf("file %d (%s): %s is left from the earlier run, beside this run's files", k, fsys.failed, name)
			}
		}
	}
}

// sameFolder reports whether two folders hold the same files, alike.
func sameFolder(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, content := range a {
		if w, ok := b[name]; !ok || !bytes.Equal(content, w) {
			return false
		}
	}
	return true
}
