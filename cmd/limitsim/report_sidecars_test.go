package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A live run's folder redrawn by `limitsim report` keeps its section
// holding the live run against its simulation, read back from live.json
// with each figure in its unit, byte for byte as the run wrote it.
func TestReportKeepsTheLiveSection(t *testing.T) {
	dir := t.TempDir()
	if code, _, errText := cli("live", "token-bucket", "--quiet", "--speed", "100", "--duration", "20s", "--max-wall", "20s", "-o", dir); code != 0 {
		t.Fatalf("live: exit %d: %s", code, errText)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Live against simulated") || !strings.Contains(string(md), "/s") {
		t.Fatalf("the live run's report has no comparison in units:\n%s", md)
	}
	if code, _, errText := cli("report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errText)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if string(again) != string(md) {
		t.Errorf("report.md redrawn differs:\n%s\n--- was:\n%s", again, md)
	}
}
