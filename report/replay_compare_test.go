package report

import "testing"

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
