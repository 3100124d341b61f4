package planning

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// A fresh check whose run fails is named in the fix's note, never
// skipped in silence: a doubled horizon past the interval limit left the
// fix reading as checked at more load when it had not been. The seeds
// list only the runs compared.
func TestFreshCheckNamesARunThatFailed(t *testing.T) {
	src := Source{Loader: scenarios.NewLoader(), Path: "../scenarios/examples/fail-deadlock.toml"}
	before, err := src.Simulate(nil, 0, nil)
	if before == nil {
		t.Fatal(err) // a deadlock stops the run early: its results stand
	}
	opt := FixOptions{Workers: 2, runFresh: func(src Source, set map[string]any, extra []scenarios.Override, rep int, opt FixOptions) (*metrics.Results, error) {
		if len(extra) > 0 && set != nil {
			return nil, errors.New("run.interval: projects 12000000 intervals\nsecond line")
		}
		return runCandidateWith(src, set, extra, rep, opt)
	}}
	fix := VerifyFix(src, before, opt)
	if fix == nil || fix.Status == "none" {
		t.Fatalf("no fix: %+v", fix)
	}
	want := "; not checked on seed 4 at 10% more load on a run 2× as long (run.interval: projects 12000000 intervals)"
	if !strings.Contains(fix.Note, want) || strings.Contains(fix.Note, "second line") {
		t.Errorf("note %q lacks %q", fix.Note, want)
	}
	if !slices.Equal(fix.Seeds, []uint64{1, 2, 3}) {
		t.Errorf("seeds %v, want the run's own and the two compared", fix.Seeds)
	}
}

// A fix none of whose fresh runs could be made held on the run's own
// seed alone: it is partial, not verified, and says why.
func TestFreshCheckWithNoFreshRunIsPartial(t *testing.T) {
	src := Source{Loader: scenarios.NewLoader(), Path: "../scenarios/examples/fail-deadlock.toml"}
	before, err := src.Simulate(nil, 0, nil)
	if before == nil {
		t.Fatal(err)
	}
	opt := FixOptions{Workers: 2, runFresh: func(Source, map[string]any, []scenarios.Override, int, FixOptions) (*metrics.Results, error) {
		return nil, errors.New("boom")
	}}
	fix := VerifyFix(src, before, opt)
	if fix == nil || fix.Status != "partial" || !strings.Contains(fix.Note, "checked on no fresh seed") || len(fix.Seeds) != 1 {
		t.Fatalf("%+v", fix)
	}
}

// A trace's stressed run is only longer, and its name says so rather than
// claiming more load.
func TestStressOfATraceKeepsItsLoad(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(readFile(t, "../scenarios/examples/token-bucket.toml"), "arrival = \"poisson\"\nrate = 80.0", "arrival = \"trace\"\ntrace = \"trace.csv\"", 1)
	writeFile(t, filepath.Join(dir, "s.toml"), text)
	writeFile(t, filepath.Join(dir, "trace.csv"), "0\n0.5\n1\n")
	got := stressOf(Source{Loader: scenarios.NewLoader(), Path: filepath.Join(dir, "s.toml")})
	if strings.Contains(got.how, "more load") || !strings.Contains(got.how, "2× as long at its own load (a trace") {
		t.Errorf("how %q", got.how)
	}
	for _, o := range got.overrides {
		if strings.HasPrefix(o.Key, "workload.") {
			t.Errorf("a trace's load scaled: %v", o)
		}
	}
	got = stressOf(Source{Loader: scenarios.NewLoader(), Path: "../scenarios/examples/fail-deadlock.toml"})
	if got.how != "at 10% more load on a run 2× as long" || len(got.overrides) != 2 {
		t.Errorf("fail-deadlock's stress: %q %v", got.how, got.overrides)
	}
}

// A fix answers for a critical finding it cleared on the run's seed even
// when the run without it has it on a fresh seed too; one it did not
// clear, that the run without it shares, is not its doing.
func TestSplitFindings(t *testing.T) {
	after := results(1, diag("deadlock", "critical", nil), diag("memory_growth", "critical", nil), diag("herd", "critical", nil))
	before := results(1, diag("deadlock", "critical", nil), diag("memory_growth", "critical", nil))
	bad, had := splitFindings(after, before, []string{"deadlock"})
	if !slices.Equal(bad, []string{"deadlock", "herd"}) || !slices.Equal(had, []string{"memory_growth"}) {
		t.Errorf("bad %v, had %v", bad, had)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
