package planning

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// Direction says which way a headline metric is better.
type Direction int

const (
	// NoDirection marks a metric that describes a run without being
	// better either way (the offered load, the mean in flight).
	NoDirection Direction = iota
	// HigherIsBetter marks a metric of which more is better (goodput).
	HigherIsBetter
	// LowerIsBetter marks a metric of which less is better (429 rate).
	LowerIsBetter
)

// String is "higher", "lower" or "" (no direction): which way is better.
func (d Direction) String() string {
	switch d {
	case HigherIsBetter:
		return "higher"
	case LowerIsBetter:
		return "lower"
	}
	return ""
}

// HeadlineMetric is one row of a comparison: how to read it from a run,
// which way is better and how to print it.
type HeadlineMetric struct {
	Name   string // as a comparison's JSON names it: "goodput_rps"
	Label  string // in a sentence: "goodput"
	Better Direction
	Value  func(r *metrics.Results) float64
	Format func(v float64) string
	// Measures, when set, says whether a run measured the metric at all:
	// a p99 of no successes is no figure, not 0, and is not compared.
	Measures func(r *metrics.Results) bool
}

// HeadlineMetrics returns the rows of a comparison, in the table's order.
func HeadlineMetrics() []HeadlineMetric {
	// The reports' formatting: thousands grouped, significant digits, not
	// float noise ("9,568 ± 202", "649ms ± 3.98ms").
	rps := func(v float64) string { return report.Number(v, 4) + "/s" }
	share := func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
	count := func(v float64) string { return report.Grouped(int64(math.Round(v))) }
	sec := report.Seconds
	level := func(v float64) string { return report.Number(v, 3) }
	return []HeadlineMetric{
		{"goodput_rps", "goodput", HigherIsBetter, func(r *metrics.Results) float64 { return r.Throughput.GoodputRPS }, rps, nil},
		{"offered_rps", "offered load", NoDirection, func(r *metrics.Results) float64 { return r.Throughput.OfferedRPS }, rps, nil},
		{"rate_429", "429 rate", LowerIsBetter, func(r *metrics.Results) float64 { return r.Rate429 }, share, nil},
		{"success_ratio", "success ratio", HigherIsBetter, func(r *metrics.Results) float64 { return r.SuccessRatio }, share, nil},
		{"succeeded", "successes", HigherIsBetter, func(r *metrics.Results) float64 { return float64(r.Requests.Succeeded) }, count, nil},
		{"failed", "failures", LowerIsBetter, failedRequests, count, nil},
		{"request_p99_s", "end-to-end p99", LowerIsBetter, func(r *metrics.Results) float64 { return r.RequestS.P99 }, sec,
			func(r *metrics.Results) bool { return r.RequestS.Count > 0 }},
		{"worst_wait_p99_s", "worst p99 wait", LowerIsBetter, worstWaitP99, sec, nil},
		{"mean_in_flight", "mean in flight", NoDirection, func(r *metrics.Results) float64 { return r.InFlight.Mean }, level, nil},
		{"diagnoses", "findings", LowerIsBetter, func(r *metrics.Results) float64 { return float64(len(r.Diagnoses)) }, count, nil},
	}
}

// failedRequests counts the requests that did not succeed: 429s given up
// on, rejections, timeouts and those still in progress at the end.
func failedRequests(r *metrics.Results) float64 {
	q := r.Requests
	return float64(q.Throttled429 + q.Failed + q.Rejected + q.AcquireTimeouts + q.TimedOut + q.InProgress)
}

// worstWaitP99 is the highest p99 wait of any limiter of r.
func worstWaitP99(r *metrics.Results) float64 {
	w := 0.0
	for _, l := range r.Limiters {
		w = math.Max(w, l.WaitS.P99)
	}
	return w
}

// CompareRow is one headline metric over every run of a comparison.
type CompareRow struct {
	Metric HeadlineMetric
	Values []float64 // per run: the mean over replications
	CI95   []float64 // per run: the 95% confidence half-width; nil with one replication
	// Best is the run with the best mean (the first on a tie; -1 when
	// every value is equal, the metric has no direction or no run measured
	// a steady state), noise or not: what `differences[].best` has always
	// named.
	Best int
	// Star is the run marked best of the row (-1 for none): better than
	// every other measured run, paired by seed, significantly and beyond
	// the threshold, and no worse on goodput than any. Never from one
	// replication.
	Star int
	// measures, per run: every replication measured the metric.
	measures []bool
}

// Comparison is the judgement of a comparison's runs: every headline
// metric's values, each later run's verdicts against the first (the
// baseline), the stars of the rows and the run best overall.
type Comparison struct {
	Names        []string // the runs', the baseline first
	Replications int
	Threshold    float64 // the practical threshold, relative to the baseline's mean
	// Measured is false for a run with a replication that measured no
	// steady state, whose figures are zeros: it is never starred.
	Measured []bool
	Rows     []CompareRow // in the order of HeadlineMetrics
	Versus   []Versus     // one per run after the first, in order
	// Warnings come before the verdicts: what the runs are given
	// differently besides their policies, what was not compared.
	Warnings []string
	// Unpaired: the runs' seeds differ, so replication k of each is not
	// on the same seed.
	Unpaired bool
	// BestOverall is the run better than every other measured run on at
	// least one directional metric and worse on none (each pair judged
	// as the verdicts are, the other run as the baseline); -1 when there
	// is none, and always with one replication.
	BestOverall int
}

// Compare judges runs, each run's replications paired by seed with every
// other's, with the practical threshold threshold (0.01: a difference
// must exceed 1% of the mean it is measured from to count). Every run must
// have the same number of replications, one or more.
func Compare(runs []ComparedRun, threshold float64) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, errors.New("compare: two runs or more are needed")
	}
	if threshold < 0 || math.IsNaN(threshold) || math.IsInf(threshold, 0) {
		return nil, fmt.Errorf("compare: threshold %v: want a finite number ≥ 0", threshold)
	}
	reps := len(runs[0].Replications)
	c := &Comparison{Replications: reps, Threshold: threshold, BestOverall: -1}
	for _, r := range runs {
		if len(r.Replications) != reps || reps == 0 {
			return nil, fmt.Errorf("compare: %s has %d replications, %s %d: want as many, one or more", r.Name, len(r.Replications), runs[0].Name, reps)
		}
		c.Names = append(c.Names, r.Name)
		c.Measured = append(c.Measured, !slices.ContainsFunc(r.Replications, func(x *metrics.Results) bool { _, none := x.NoSteadyState(); return none }))
	}
	// samples[metric][run][replication]
	samples := make([][][]float64, 0, len(HeadlineMetrics()))
	for _, m := range HeadlineMetrics() {
		per := make([][]float64, len(runs))
		measures := make([]bool, len(runs))
		for i, r := range runs {
			measures[i] = c.Measured[i]
			for _, rep := range r.Replications {
				per[i] = append(per[i], m.Value(rep))
				if m.Measures != nil && !m.Measures(rep) {
					measures[i] = false
				}
			}
		}
		samples = append(samples, per)
		c.Rows = append(c.Rows, c.row(m, per, measures))
	}
	for j := 1; j < len(runs); j++ {
		c.Versus = append(c.Versus, c.versus(samples, j, 0))
	}
	c.mark(samples)
	return c, nil
}

// row is a metric's values over the runs and its best mean among the
// runs that measure it.
func (c *Comparison) row(m HeadlineMetric, per [][]float64, measures []bool) CompareRow {
	row := CompareRow{Metric: m, Best: -1, Star: -1, measures: measures}
	for i := range per {
		s := metrics.SpreadOf(per[i])
		row.Values = append(row.Values, s.Mean)
		if c.Replications > 1 {
			row.CI95 = append(row.CI95, s.CI95)
		}
		v := s.Mean
		if measures[i] && (row.Best < 0 || (m.Better == HigherIsBetter && v > row.Values[row.Best]) || (m.Better != HigherIsBetter && v < row.Values[row.Best])) {
			row.Best = i
		}
	}
	if m.Better == NoDirection || valuesAllEqual(row.Values) {
		row.Best = -1
	}
	return row
}

func valuesAllEqual(vs []float64) bool {
	return !slices.ContainsFunc(vs, func(v float64) bool { return v != vs[0] })
}

// versus judges run j against run base on every metric.
func (c *Comparison) versus(samples [][][]float64, j, base int) Versus {
	v := Versus{Name: c.Names[j], Baseline: c.Names[base], Replications: c.Replications}
	for i, row := range c.Rows {
		d := pairedDifference(row.Metric, samples[i][base], samples[i][j], c.Threshold)
		if !row.measures[j] || !row.measures[base] {
			d.Verdict = VerdictUnmeasured
		}
		v.Differences = append(v.Differences, d)
	}
	v.Overall = overallVerdict(v.Differences)
	if !c.Measured[j] || !c.Measured[base] {
		v.Overall = VerdictUnmeasured
	}
	for _, k := range []int{base, j} {
		if !c.Measured[k] {
			v.Unmeasured = append(v.Unmeasured, c.Names[k])
		}
	}
	return v
}

// servedMetrics say how many requests a run served; ofServedMetrics are
// timed over the requests served alone.
var (
	servedMetrics   = []string{"goodput_rps", "success_ratio", "succeeded"}
	ofServedMetrics = []string{"request_p99_s", "worst_wait_p99_s"}
)

// servedFewer reports whether a run served fewer requests than its
// baseline (worse goodput, success ratio or successes).
func servedFewer(ds []Difference) bool {
	return slices.ContainsFunc(ds, func(d Difference) bool {
		return d.Verdict == VerdictWorse && slices.Contains(servedMetrics, d.Metric.Name)
	})
}

// overallVerdict sums up verdicts on the directional metrics: better on some and
// worse on none is better, the reverse worse, both mixed, neither
// indistinguishable. A metric one of the runs did not measure counts for
// neither, and a latency better only over fewer requests served (a run
// failing most of them fast) does not count as better.
func overallVerdict(ds []Difference) Verdict {
	better, worse := false, false
	fewer := servedFewer(ds)
	for _, d := range ds {
		switch {
		case d.Verdict == VerdictBetter && fewer && slices.Contains(ofServedMetrics, d.Metric.Name):
			// Timed over the fewer requests served: those the run
			// refused, timed out or failed are not in it.
		case d.Verdict == VerdictBetter:
			better = true
		case d.Verdict == VerdictWorse:
			worse = true
		}
	}
	switch {
	case better && worse:
		return VerdictMixed
	case better:
		return VerdictBetter
	case worse:
		return VerdictWorse
	}
	return VerdictIndistinguishable
}

// mark stars each row's best run and names the run best overall, judging
// every measured run against every other (the other as the baseline).
// Nothing is marked from one replication: one run has no interval, so a
// difference may be noise.
func (c *Comparison) mark(samples [][][]float64) {
	if c.Replications < 2 {
		return
	}
	goodput := slices.IndexFunc(c.Rows, func(r CompareRow) bool { return r.Metric.Name == "goodput_rps" })
	for j := range c.Names {
		if !c.Measured[j] {
			continue
		}
		var against []Versus // run j against each other measured run
		for k := range c.Names {
			if k != j && c.Measured[k] {
				against = append(against, c.versus(samples, j, k))
			}
		}
		if len(against) == 0 {
			continue // no other run to be better than
		}
		keepsGoodput := !slices.ContainsFunc(against, func(v Versus) bool { return v.Differences[goodput].Verdict == VerdictWorse })
		for i := range c.Rows {
			if keepsGoodput && !slices.ContainsFunc(against, func(v Versus) bool { return v.Differences[i].Verdict != VerdictBetter }) {
				c.Rows[i].Star = j
			}
		}
		if c.BestOverall < 0 && !slices.ContainsFunc(against, func(v Versus) bool { return v.Overall != VerdictBetter }) {
			c.BestOverall = j
		}
	}
}

// Measures reports whether run j measured the metric of row i in every
// replication (a p99 of no successes is no figure).
func (row CompareRow) Measures(j int) bool { return j < len(row.measures) && row.measures[j] }

// Marked reports whether the cell of run j (after the first) in row i
// carries (≠): its verdict against the baseline is not indistinguishable,
// from more than one replication.
func (c *Comparison) Marked(i, j int) bool {
	if j < 1 || c.Replications < 2 {
		return false
	}
	switch c.Versus[j-1].Differences[i].Verdict {
	case VerdictIndistinguishable, VerdictUnmeasured:
		return false
	}
	return true
}
