package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare -o keeps to the output folder's rules, as run -o does: a folder
// never mixes a comparison with a run's outputs, in either order, and
// the manifest lists what the comparison wrote. A comparison written
// where another was left its charts, and a run's metrics.json and
// report.md, beside compare.md.
func TestCompareOutputsReplaceAFoldersOthers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	args := []string{"compare", "token-bucket", "sliding-window", "--quiet", "--set", "run.duration=20s", "--set", "run.warmup=2s", "-o", dir}
	if code, _, errOut := cli("run", "token-bucket", "--quiet", "--set", "run.duration=20s", "--set", "run.warmup=2s", "-o", dir); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli(args...); code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	if !has("compare.md") || has("metrics.json") || has("report.md") || has("timeline.png") {
		t.Errorf("compare over a run's folder left its outputs")
	}
	manifest, err := os.ReadFile(filepath.Join(dir, ".limitsim-outputs"))
	if err != nil || !strings.Contains(string(manifest), "compare.md") || !strings.Contains(string(manifest), "compare-goodput.png") {
		t.Errorf("manifest (%v):\n%s", err, manifest)
	}
	if code, _, errOut := cli("run", "token-bucket", "--quiet", "--set", "run.duration=20s", "--set", "run.warmup=2s", "-o", dir); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if has("compare.md") || has("compare-goodput.png") || !has("metrics.json") {
		t.Errorf("a run over a comparison's folder left its outputs")
	}
}

// A run drawn exactly over another in a comparison's chart is dashed and
// named as the same, as a run's own charts do, and the footer says the
// charts draw each run's first replication and on what seed: the table
// gives means over the replications.
func TestCompareChartsShowCoincidingRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli("compare", "token-bucket", "token-bucket", "--quiet", "--replications", "2", "--set", "run.duration=20s", "--set", "run.warmup=2s", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "compare-goodput.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"token-bucket-2 (same as token-bucket)", "each run&#39;s first replication (seed 1)"} {
		if !strings.Contains(string(svg), want) && !strings.Contains(string(svg), strings.ReplaceAll(want, "&#39;", "'")) {
			t.Errorf("compare-goodput.svg lacks %q", want)
		}
	}
}
