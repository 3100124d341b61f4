package report

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// A live run stopped before its end (Ctrl-C, --max-wall) is not held to
// its whole simulation's counts: its successes read -74% of a run it did
// not finish. Its counts are left out with a note; its rates stay. A run
// that finished keeps them, with the refusals that are not 429s when
// either run had some.
func TestCompareLiveLeavesOutAStoppedRunsCounts(t *testing.T) {
	sim := &metrics.Results{Complete: true, ElapsedS: 60}
	sim.Requests.Succeeded, sim.Requests.Failed = 3000, 660
	sim.Throughput.GoodputRPS = 50
	live := &metrics.Results{Complete: false, ElapsedS: 20}
	live.Requests.Succeeded, live.Requests.Failed = 1000, 220
	live.Throughput.GoodputRPS = 49.9
	c := CompareLive(sim, live, 4)
	var metricsShown []string
	for _, r := range c.Rows {
		metricsShown = append(metricsShown, r.Metric)
	}
	shown := strings.Join(metricsShown, " ")
	if strings.Contains(shown, "succeeded") || strings.Contains(shown, "failed") || !strings.Contains(shown, "goodput_rps") ||
		!strings.Contains(c.Note, "stopped at 20s") {
		t.Errorf("stopped run: rows %s, note %q", shown, c.Note)
	}
	var b strings.Builder
	if err := WriteComparison(&b, c); err != nil || !strings.Contains(b.String(), "counts are left out") {
		t.Errorf("the table lacks the note (%v):\n%s", err, b.String())
	}
	live.Complete = true
	c = CompareLive(sim, live, 4)
	metricsShown = metricsShown[:0]
	for _, r := range c.Rows {
		metricsShown = append(metricsShown, r.Metric)
	}
	if shown := strings.Join(metricsShown, " "); !strings.Contains(shown, "succeeded failed") || strings.Contains(shown, "rejected") || c.Note != "" {
		t.Errorf("finished run: rows %s, note %q", shown, c.Note)
	}
}
