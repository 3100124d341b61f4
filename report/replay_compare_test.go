package report

import (
	"strings"
	"testing"
)

// A configuration is better when no figure is worse and one is better,
// worse the other way round, mixed when some of each.
func TestReplayVerdicts(t *testing.T) {
	run := func(name string, rejected, refusals int64, p99 float64) ReplayRun {
		return ReplayRun{Name: name, Replay: &ReplayComparison{Total: ReplayRow{Rejected: rejected, Refusals: refusals, DelayP99S: p99}}}
	}
	runs := []ReplayRun{run("base", 10, 100, 1), run("fewer429", 10, 50, 1), run("slower", 10, 100, 2), run("trade", 20, 0, 1), run("twin", 10, 100, 1)}
	want := []string{"better", "worse", "mixed", "same"}
	got := ReplayVerdicts(runs)
	for i, v := range got {
		if v.Verdict != want[i] || v.Against != "base" {
			t.Errorf("%s: %s against %s, want %s", v.Name, v.Verdict, v.Against, want[i])
		}
	}
	if got[2].FailuresDiff != 10 || got[2].RefusalsDiff != -100 {
		t.Errorf("trade: %+v", got[2])
	}
}

// The replay's chart draws every minute, and refuses a comparison
// without one.
func TestReplayChart(t *testing.T) {
	c := &ReplayComparison{Log: "a.log", Start: "2026-03-01T12:00:00Z", Minutes: []ReplayRow{
		{Minute: "2026-03-01T12:00:00Z", ProductionThrottled: 5, Rejected: 2, DelayP99S: 0.5},
		{Minute: "2026-03-01T12:02:00Z", ProductionThrottled: 1, Refusals: 3, Throttled: 3}}}
	ch, err := ReplayChart(c)
	if err != nil || ch.Name != "replay" || len(ch.PNG) == 0 || !strings.Contains(string(ch.SVG), "<svg") {
		t.Fatalf("chart %q, %d PNG bytes, err %v", ch.Name, len(ch.PNG), err)
	}
	if _, err := ReplayChart(&ReplayComparison{Start: c.Start}); err == nil {
		t.Error("a comparison without minutes charted")
	}
}
