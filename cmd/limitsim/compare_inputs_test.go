package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editedExample writes the bundled example name with each of edits
// (old, new) applied, as file in the test's folder.
func editedExample(t *testing.T, name, file string, edits ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "examples", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%s has no %q", name, edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two files given different horizons, loads or seeds are not compared as
// policies in silence: a 600 s run was "better" on successes than a
// 120 s one of the same scenario, and one from another seed was called
// paired. The warning names each key that differs with its values; the
// key says the differences are not paired when the seeds differ.
func TestCompareWarnsOfDifferentInputs(t *testing.T) {
	a := editedExample(t, "token-bucket", "a.toml")
	long := editedExample(t, "token-bucket", "long.toml", `duration = "120s"`, `duration = "600s"`, "rate = 80.0", "rate = 60.0")
	code, out, errOut := cli("compare", a, long, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "warning: the runs are given different inputs besides their policies: run.duration (2m0s, 10m0s); workload.rate (80, 60)") ||
		!strings.Contains(out, "differences are paired") {
		t.Errorf("no warning of the horizon and the load, or not paired:\n%s", out)
	}
	seeded := editedExample(t, "token-bucket", "seeded.toml", "seed = 1", "seed = 7")
	_, out, _ = cli("compare", a, seeded, "--quiet")
	if !strings.Contains(out, "run.seed (1, 7)") || !strings.Contains(out, "the differences are not paired") {
		t.Errorf("other seeds read as paired:\n%s", out)
	}
	_, out, _ = cli("compare", a, editedExample(t, "token-bucket", "same.toml"), "--quiet")
	if strings.Contains(out, "warning") {
		t.Errorf("the same inputs warned of:\n%s", out)
	}
}

// A file's [[variant]] blocks are compared only when it is given alone,
// and a --set that fails on one of several files names it.
func TestCompareSaysWhatItLeavesOut(t *testing.T) {
	a := editedExample(t, "token-bucket", "a.toml")
	_, out, _ := cli("compare", "cluster-shared-limit", a, "--quiet", "--set", "run.duration=20s", "--set", "run.warmup=2s")
	if !strings.Contains(out, "cluster-shared-limit declares 7 [[variant]] blocks, compared only when it is given alone") {
		t.Errorf("variants dropped in silence:\n%s", out)
	}
	code, _, errOut := cli("compare", a, "fail-sustained-429", "--set", "client.limiter.quota.rate=50")
	if code != exitInvalid || !strings.HasPrefix(errOut, "--set on fail-sustained-429: client.limiter.quota.rate: ") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// A policy that fails nearly every request fast is worse overall, not
// mixed: its end-to-end p99 is timed over the few it served, and is
// said to be.
func TestCompareDoesNotCountALatencyOfFewerServed(t *testing.T) {
	path := editedExample(t, "token-bucket", "allfail.toml", "[run]", "[[variant]]\nname = \"allfail\"\nset = [\"client.request_timeout=50ms\"]\n\n[run]")
	code, out, errOut := cli("compare", path, "--replications", "3", "--quiet", "--set", "run.duration=30s", "--set", "run.warmup=5s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	line := strings.SplitN(out, "\n", 2)[0]
	if !strings.Contains(line, "worse goodput") || !strings.Contains(line, "better end-to-end p99 of the fewer served") || !strings.HasSuffix(line, "overall worse") {
		t.Errorf("verdict: %s", line)
	}
}
