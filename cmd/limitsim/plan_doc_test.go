package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plan.md and plan.html give the recommended point exactly as the
// terminal does, the plan's own --set included: pasted from the report
// alone, a recommended rate ran without the plan's acquisition timeout.
// With replications, each point's row says how many runs its figures are
// over, as the terminal's table does.
func TestPlanReportGivesTheTerminalsRecommendationAndRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errOut := cli("plan", "token-bucket", "--set", "run.duration=20s", "--set", "client.acquire_timeout=1s",
		"--sweep", "client.limiter.quota.rate=80,120", "--sweep", "client.limiter.conns.permits=20,40", "--replications", "3",
		"--constraint", "rate_429<0.01", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if flags, ok := strings.CutPrefix(l, "recommended: "); ok {
			line = flags
		}
	}
	if !strings.Contains(line, "--set client.acquire_timeout=1s") || !strings.Contains(line, "--set run.duration=20s") {
		t.Fatalf("the terminal's recommendation lacks the plan's own overrides: %q\n%s", line, stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "**Recommended:** `" + line + "`"; !strings.Contains(string(md), want) {
		t.Errorf("plan.md lacks %q:\n%s", want, md)
	}
	page, err := os.ReadFile(filepath.Join(out, "plan.html"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "<code>" + strings.ReplaceAll(line, "'", "&#39;") + "</code>"; !strings.Contains(string(page), want) {
		t.Errorf("plan.html lacks %q", want)
	}
	termRuns := columnOf(t, stdout, "runs")
	mdRuns := mdColumnOf(t, string(md), "runs")
	if len(termRuns) != 4 || strings.Join(termRuns, ",") != strings.Join(mdRuns, ",") {
		t.Errorf("runs: terminal %v, plan.md %v", termRuns, mdRuns)
	}
}

// columnOf is the terminal table's last column, which must be named
// name: one cell a point, up to the blank line under the table.
func columnOf(t *testing.T, out, name string) []string {
	t.Helper()
	var cells []string
	for i, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case i == 0 && (len(f) == 0 || f[len(f)-1] != name):
			t.Fatalf("the table's last column is not %s: %q", name, l)
		case len(f) == 0:
			return cells
		case i > 0:
			cells = append(cells, f[len(f)-1])
		}
	}
	return cells
}

// mdColumnOf is plan.md's table column named name, one cell a point.
func mdColumnOf(t *testing.T, md, name string) []string {
	t.Helper()
	col := -1
	var cells []string
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		f := strings.Split(strings.Trim(l, "| "), " | ")
		if col < 0 {
			for i, h := range f {
				if h == name {
					col = i
				}
			}
			continue
		}
		if col < len(f) {
			cells = append(cells, f[col])
		}
	}
	return cells
}
