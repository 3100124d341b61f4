package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A --trace file named as an output an earlier run left in the -o folder
// (its copy of a data file, which this run removes before writing its
// own) is refused before the run, as one named as this run's outputs is:
// it had been written, then removed without a word.
func TestTraceIsNotAnEarlierRunsOutput(t *testing.T) {
	sc := traceDataScenario(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli("run", sc, "--no-verify", "--quiet", "-o", out); code != exitOK {
		t.Fatalf("the earlier run: exit %d: %s", code, errOut)
	}
	code, _, errOut := cli("run", "token-bucket", "--no-verify", "--quiet", "-o", out, "--trace", filepath.Join(out, "t.csv"))
	if code != exitInvalid || !strings.Contains(errOut, "an output an earlier run wrote") || !strings.Contains(errOut, "choose another file") {
		t.Fatalf("--trace over the earlier run's t.csv: exit %d: %s", code, errOut)
	}
	if got := mustRead(t, filepath.Join(out, "t.csv")); got != "0\n0.5\n1\n" {
		t.Fatalf("the earlier run's t.csv was touched: %q", got)
	}
}
