package planning

import (
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// crnNoise is the replication-to-replication swing every constructed run
// shares: common random numbers move every run alike.
var crnNoise = []float64{1, 1.05, 0.97, 1.02}

// constructedRun is a run of len(crnNoise) replications (or of one, when one
// is set) whose goodput is goodput times each replication's noise.
func constructedRun(name string, goodput, rate429 float64, one bool) ComparedRun {
	r := ComparedRun{Name: name}
	reps := crnNoise
	if one {
		reps = crnNoise[:1]
	}
	for _, n := range reps {
		g := goodput * n
		r.Replications = append(r.Replications, &metrics.Results{
			Throughput:   metrics.Throughput{OfferedRPS: 100, GoodputRPS: g},
			Rate429:      rate429,
			SuccessRatio: g / 100,
			Requests:     metrics.Requests{Succeeded: int64(g * 60)},
			RequestS:     metrics.Dist{Count: int64(g * 60), P99: 0.5},
		})
	}
	r.Results = r.Replications[0]
	return r
}

func comparisonRow(t *testing.T, c *Comparison, metric string) (int, CompareRow) {
	t.Helper()
	i := slices.IndexFunc(c.Rows, func(r CompareRow) bool { return r.Metric.Name == metric })
	if i < 0 {
		t.Fatalf("no row %s", metric)
	}
	return i, c.Rows[i]
}

func comparisonVerdict(t *testing.T, c *Comparison, run int, metric string) Difference {
	t.Helper()
	i, _ := comparisonRow(t, c, metric)
	return c.Versus[run-1].Differences[i]
}

// Two identical policies are indistinguishable on every metric: nothing is
// starred or marked and no run is best overall.
func TestCompareIdenticalRuns(t *testing.T) {
	c, err := Compare([]ComparedRun{constructedRun("A", 80, 0.1, false), constructedRun("A again", 80, 0.1, false)}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range c.Versus[0].Differences {
		if d.Verdict != VerdictIndistinguishable || c.Marked(i, 1) || c.Rows[i].Star >= 0 {
			t.Errorf("%s: %s, marked %v, star %d", d.Metric.Name, d.Verdict, c.Marked(i, 1), c.Rows[i].Star)
		}
	}
	if c.Versus[0].Overall != VerdictIndistinguishable || c.BestOverall >= 0 {
		t.Errorf("overall %s, best overall %d", c.Versus[0].Overall, c.BestOverall)
	}
	if got := c.Lines()[0]; got != "A again vs A: indistinguishable on every metric" {
		t.Errorf("line %q", got)
	}
}

// 20% more goodput is better, starred and marked, and makes the run best
// overall when it is worse at nothing; the reverse comparison is worse.
func TestCompareTwentyPercentMoreGoodput(t *testing.T) {
	a, b := constructedRun("A", 80, 0.1, false), constructedRun("B", 96, 0.1, false)
	c, err := Compare([]ComparedRun{a, b}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	i, row := comparisonRow(t, c, "goodput_rps")
	if d := comparisonVerdict(t, c, 1, "goodput_rps"); d.Verdict != VerdictBetter || !c.Marked(i, 1) || row.Star != 1 {
		t.Errorf("B's goodput: %s, marked %v, star %d", d.Verdict, c.Marked(i, 1), row.Star)
	}
	if c.Versus[0].Overall != VerdictBetter || c.BestOverall != 1 {
		t.Errorf("overall %s, best overall %d", c.Versus[0].Overall, c.BestOverall)
	}
	if !strings.HasPrefix(c.Lines()[0], "B vs A: better goodput (+20.0% ± 1.06%)") || c.Lines()[1] != "best overall: B (against every other run: better on some metric, worse on none)" {
		t.Errorf("lines %q", c.Lines())
	}
	c, _ = Compare([]ComparedRun{b, a}, DefaultThreshold)
	if d := comparisonVerdict(t, c, 1, "goodput_rps"); d.Verdict != VerdictWorse || c.Versus[0].Overall != VerdictWorse || c.BestOverall != 0 {
		t.Errorf("A against B: %s, overall %s, best overall %d", d.Verdict, c.Versus[0].Overall, c.BestOverall)
	}
}

// A row's star goes to a run better than every other, not only than the
// first: two runs equally better than the baseline share no star.
func TestCompareStarNeedsEveryOtherRun(t *testing.T) {
	c, err := Compare([]ComparedRun{constructedRun("A", 80, 0.1, false), constructedRun("B", 96, 0.1, false), constructedRun("C", 96.2, 0.1, false)}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	_, row := comparisonRow(t, c, "goodput_rps")
	if row.Star >= 0 || c.BestOverall >= 0 {
		t.Errorf("goodput starred on run %d, best overall %d: B and C are indistinguishable", row.Star, c.BestOverall)
	}
	if row.Best != 2 {
		t.Errorf("the best mean is C's, yet Best is %d", row.Best)
	}
}

// A run with no 429s that gives up half the goodput is not starred for
// its 429 rate and is not best overall: its verdict is mixed. The best
// mean still names it, as `differences[].best` always has.
func TestCompareFewer429sWithWorseGoodput(t *testing.T) {
	c, err := Compare([]ComparedRun{constructedRun("A", 80, 0.1, false), constructedRun("timid", 40, 0, false)}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	i, row := comparisonRow(t, c, "rate_429")
	if d := comparisonVerdict(t, c, 1, "rate_429"); d.Verdict != VerdictBetter || !c.Marked(i, 1) {
		t.Errorf("timid's 429 rate: %s, marked %v", d.Verdict, c.Marked(i, 1))
	}
	if row.Star >= 0 || c.BestOverall >= 0 || c.Versus[0].Overall != VerdictMixed {
		t.Errorf("429 rate starred on %d, best overall %d, overall %s", row.Star, c.BestOverall, c.Versus[0].Overall)
	}
	if row.Best != 1 {
		t.Errorf("the lowest 429 rate is timid's, yet Best is %d", row.Best)
	}
	if _, g := comparisonRow(t, c, "goodput_rps"); g.Star != 0 {
		t.Errorf("A's goodput is not starred: %d", g.Star)
	}
}

// From one replication a difference beyond the threshold is a verdict
// "(one run)", and nothing is starred, marked or best overall.
func TestCompareOneReplication(t *testing.T) {
	c, err := Compare([]ComparedRun{constructedRun("A", 80, 0.1, true), constructedRun("B", 96, 0.05, true)}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range c.Rows {
		if row.Star >= 0 || c.Marked(i, 1) || row.CI95 != nil {
			t.Errorf("%s: star %d, marked %v, ci95 %v from one run", row.Metric.Name, row.Star, c.Marked(i, 1), row.CI95)
		}
	}
	if d := comparisonVerdict(t, c, 1, "goodput_rps"); d.Verdict != VerdictBetter || !d.OneRun() || d.Significant {
		t.Errorf("goodput from one run: %+v", d)
	}
	lines := c.Lines()
	if c.BestOverall >= 0 || !strings.HasPrefix(lines[0], "B vs A (one run, no interval): better goodput (+20.0%),") || lines[1] != "best overall: not judged from one run" {
		t.Errorf("best overall %d, lines %q", c.BestOverall, lines)
	}
	if key := strings.Join(c.Key(), "\n"); !strings.Contains(key, "no * and no (≠)") || strings.Contains(key, "best of the row") {
		t.Errorf("key %q", key)
	}
}

// A run with a replication that measured no steady state is judged
// against nothing and starred nowhere, however good its zeros look.
func TestCompareUnmeasuredRun(t *testing.T) {
	u := constructedRun("U", 80, 0, false)
	u.Replications[2].Warnings = []metrics.Warning{{Code: metrics.NoSteadyState, Text: "no steady state"}}
	c, err := Compare([]ComparedRun{constructedRun("A", 80, 0.1, false), u}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	i, row := comparisonRow(t, c, "rate_429")
	if c.Versus[0].Overall != VerdictUnmeasured || row.Star >= 0 || row.Best == 1 || c.Marked(i, 1) {
		t.Errorf("overall %s, star %d, best %d", c.Versus[0].Overall, row.Star, row.Best)
	}
	if got := c.Versus[0].Line(); got != "U vs A: not judged: U measured no steady state" {
		t.Errorf("line %q", got)
	}
}

// The threshold decides: 0.5% more goodput is indistinguishable at 1% and
// better at 0.1%.
func TestCompareThreshold(t *testing.T) {
	runs := []ComparedRun{constructedRun("A", 80, 0.1, false), constructedRun("B", 80.4, 0.1, false)}
	for th, want := range map[float64]Verdict{0.01: VerdictIndistinguishable, 0.001: VerdictBetter} {
		c, err := Compare(runs, th)
		if err != nil {
			t.Fatal(err)
		}
		if d := comparisonVerdict(t, c, 1, "goodput_rps"); d.Verdict != want || !d.Significant {
			t.Errorf("threshold %v: %+v", th, d)
		}
	}
	if _, err := Compare(runs, -0.01); err == nil {
		t.Error("a negative threshold accepted")
	}
	if _, err := Compare([]ComparedRun{runs[0], constructedRun("one", 80, 0.1, true)}, 0.01); err == nil {
		t.Error("runs of unequal replications compared")
	}
	if _, err := Compare(runs[:1], 0.01); err == nil {
		t.Error("one run compared")
	}
}

// A run with no success has no end-to-end p99: it reads 0, but is no
// figure, so it is neither better than a run that timed its successes
// nor the best of the row, and the comparison's overall verdict does not
// turn on it. A run that refuses everything is worse, not mixed.
func TestCompareP99OfNoSuccessIsNotCompared(t *testing.T) {
	served, refused := constructedRun("served", 80, 0, false), constructedRun("refuses all", 0, 0, false)
	for k, r := range served.Replications {
		r.RequestS = metrics.Dist{Count: 4800, P99: 0.65 * crnNoise[k]}
	}
	c, err := Compare([]ComparedRun{served, refused}, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	i, row := comparisonRow(t, c, "request_p99_s")
	if d := c.Versus[0].Differences[i]; d.Verdict != VerdictUnmeasured || c.Marked(i, 1) {
		t.Errorf("p99 of no success: verdict %s, marked %v", d.Verdict, c.Marked(i, 1))
	}
	if row.Best != 0 || row.Star == 1 || !row.Measures(0) || row.Measures(1) {
		t.Errorf("p99 row: best %d, star %d, measures %v/%v", row.Best, row.Star, row.Measures(0), row.Measures(1))
	}
	if c.Versus[0].Overall != VerdictWorse {
		t.Errorf("overall %s, want worse: %s", c.Versus[0].Overall, c.Versus[0].Line())
	}
	if line := c.Versus[0].Line(); !strings.Contains(line, "not compared (a run has no figure: no success to time): end-to-end p99") {
		t.Errorf("line %q", line)
	}
}
