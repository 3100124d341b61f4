package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// A real full disk: run -o into a 64 KiB tmpfs, too small for the
// charts. Mounting needs root (CAP_SYS_ADMIN); without it the test is
// skipped. (chmod cannot make a read-only folder for root, who ignores
// permissions.)
func TestFaultOnARealFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmounting %s: %v", mnt, err)
		}
	})
	scenario := faultScenario(t)
	ref := filepath.Join(t.TempDir(), "ref")
	if code, _, errOut := cli("run", scenario, "--quiet", "-o", ref); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := readFolder(t, ref)
	dir := filepath.Join(mnt, "out")
	code, _, errOut := cli("run", scenario, "--quiet", "-o", dir)
	if code != exitInvalid || !strings.Contains(errOut, dir+"/") || !strings.Contains(errOut, syscall.ENOSPC.Error()) {
		t.Fatalf("exit %d, want %d naming a file of %s and the cause: %s", code, exitInvalid, dir, errOut)
	}
	t.Log(strings.TrimSpace(errOut))
	got := readFolder(t, dir)
	if _, ok := got[incompleteMarker]; !ok {
		t.Errorf("no %s in the full folder: %v", incompleteMarker, keys(got))
	}
	for name, data := range got {
		if name != incompleteMarker && name != report.OutputsManifest && !tempName.MatchString(filepath.Base(name)) && !bytes.Equal(data, want[name]) {
			t.Errorf("%s is not as a complete run writes it (%d bytes, want %d)", name, len(data), len(want[name]))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Errorf("report.html written on a disk too small for the charts")
	}
}
