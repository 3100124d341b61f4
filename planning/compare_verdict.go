package planning

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// DefaultThreshold is the practical threshold of a comparison: a
// difference within 1% of the baseline's mean is indistinguishable,
// however significant.
const DefaultThreshold = 0.01

// Verdict is how a run stands against another on a metric, or overall.
type Verdict string

const (
	// VerdictBetter: better in the metric's direction, significantly (with
	// replications) and beyond the threshold; from one run, beyond the
	// threshold alone.
	VerdictBetter Verdict = "better"
	// VerdictWorse is the reverse of VerdictBetter.
	VerdictWorse Verdict = "worse"
	// VerdictIndistinguishable: within the noise or within the threshold.
	VerdictIndistinguishable Verdict = "indistinguishable"
	// VerdictHigher and VerdictLower are the verdicts on a metric with no
	// better direction that differs as VerdictBetter would require.
	VerdictHigher Verdict = "higher"
	VerdictLower  Verdict = "lower"
	// VerdictMixed is an overall verdict: better on some metric, worse on
	// another.
	VerdictMixed Verdict = "mixed"
	// VerdictUnmeasured: one of the two runs measured no steady state in
	// some replication; its figures are zeros and are not judged.
	VerdictUnmeasured Verdict = "unmeasured"
)

// Difference is a run's paired difference from a baseline on one metric,
// and the verdict on it.
type Difference struct {
	Metric HeadlineMetric
	// Baseline and Value are the two runs' means over the replications.
	Baseline, Value float64
	// Diff is the mean of the differences value − baseline, replication
	// by replication (the same seed on both sides), and CI95 its 95%
	// confidence half-width (Student's t; 0 with one replication, which
	// has no interval).
	Diff, CI95   float64
	Replications int
	// Significant: the interval excludes 0 (never with one replication).
	Significant bool
	// BeyondThreshold: |Diff| exceeds the threshold times |Baseline|
	// (any difference from a baseline of 0); a difference exactly at the
	// threshold is not beyond it.
	BeyondThreshold bool
	Verdict         Verdict
}

// OneRun reports whether the difference is from a single replication:
// its verdict has no interval behind it.
func (d Difference) OneRun() bool { return d.Replications < 2 }

// Relative returns Diff and CI95 as shares of |Baseline|; ok is false
// when the baseline is 0.
func (d Difference) Relative() (diff, ci95 float64, ok bool) {
	if d.Baseline == 0 {
		return 0, 0, false
	}
	return d.Diff / math.Abs(d.Baseline), d.CI95 / math.Abs(d.Baseline), true
}

// Judge compares alternative with baseline on metric m, replication k of
// one paired with replication k of the other (both ran on the same seed),
// with the practical threshold threshold (relative to the baseline's
// mean). The two must have as many replications, one or more.
func Judge(m HeadlineMetric, baseline, alternative []float64, threshold float64) (Difference, error) {
	if len(baseline) == 0 || len(baseline) != len(alternative) {
		return Difference{}, fmt.Errorf("judge %s: %d replications against %d: want as many, one or more", m.Name, len(alternative), len(baseline))
	}
	return pairedDifference(m, baseline, alternative, threshold), nil
}

// pairedDifference is Judge on samples of equal, non-zero length.
func pairedDifference(m HeadlineMetric, baseline, alternative []float64, threshold float64) Difference {
	diffs := make([]float64, len(baseline))
	for k := range diffs {
		diffs[k] = alternative[k] - baseline[k]
	}
	s := metrics.SpreadOf(diffs)
	d := Difference{
		Metric:       m,
		Baseline:     metrics.SpreadOf(baseline).Mean,
		Value:        metrics.SpreadOf(alternative).Mean,
		Diff:         s.Mean,
		CI95:         s.CI95,
		Replications: len(diffs),
	}
	d.Significant, d.BeyondThreshold, d.Verdict = classifyDifference(m.Better, d.Baseline, d.Diff, d.CI95, d.Replications, threshold)
	return d
}

// classifyDifference is the verdict on a mean paired difference diff ±
// ci95 from a baseline mean over replications runs: better or worse
// (higher or lower for a metric without a direction) when the difference
// is beyond the threshold and, with replications, significant; otherwise
// indistinguishable.
func classifyDifference(better Direction, baseline, diff, ci95 float64, replications int, threshold float64) (significant, beyond bool, v Verdict) {
	significant = replications > 1 && math.Abs(diff) > ci95
	if baseline == 0 {
		beyond = diff != 0
	} else {
		beyond = math.Abs(diff)/math.Abs(baseline) > threshold
	}
	if !beyond || (replications > 1 && !significant) {
		return significant, beyond, VerdictIndistinguishable
	}
	up := diff > 0
	switch {
	case better == NoDirection && up:
		v = VerdictHigher
	case better == NoDirection:
		v = VerdictLower
	case up == (better == HigherIsBetter):
		v = VerdictBetter
	default:
		v = VerdictWorse
	}
	return significant, beyond, v
}

// Versus is one run judged against another (the baseline) on every
// headline metric.
type Versus struct {
	Name, Baseline string
	Replications   int
	// Overall is better (better on some directional metric, worse on
	// none), worse, mixed, indistinguishable or unmeasured.
	Overall     Verdict
	Differences []Difference // in the order of HeadlineMetrics
	// Unmeasured names the runs of the two that measured no steady state.
	Unmeasured []string
}

// Line is the verdict in one line, the differences first and then what
// is indistinguishable: "B vs A: better goodput (+12.3% ± 2.1%), worse
// end-to-end p99 (+40% ± 5.2%); indistinguishable 429 rate, failures;
// overall mixed". From one replication it says so and gives no interval.
func (v Versus) Line() string {
	head := v.Name + " vs " + v.Baseline
	if v.Replications < 2 {
		head += " (one run, no interval)"
	}
	if v.Overall == VerdictUnmeasured {
		return head + ": not judged: " + strings.Join(v.Unmeasured, " and ") + " measured no steady state"
	}
	var changed, same, unmeasured []string
	for _, d := range v.Differences {
		switch d.Verdict {
		case VerdictIndistinguishable:
			same = append(same, d.Metric.Label)
			continue
		case VerdictUnmeasured:
			unmeasured = append(unmeasured, d.Metric.Label)
			continue
		}
		label := d.Metric.Label
		if d.Verdict == VerdictBetter && slices.Contains(ofServedMetrics, d.Metric.Name) && servedFewer(v.Differences) {
			label += " of the fewer served" // not better: not counted overall
		}
		changed = append(changed, string(d.Verdict)+" "+label+" ("+d.amount()+")")
	}
	notCompared := ""
	if len(unmeasured) > 0 {
		notCompared = "; not compared (a run has no figure: no success to time): " + strings.Join(unmeasured, ", ")
	}
	if len(changed) == 0 {
		return head + ": indistinguishable on every metric" + notCompared
	}
	line := head + ": " + strings.Join(changed, ", ")
	if len(same) > 0 {
		line += "; indistinguishable " + strings.Join(same, ", ")
	}
	return line + notCompared + "; overall " + string(v.Overall)
}

// amount is the difference in a verdict: relative to the baseline with
// its interval ("+12.3% ± 2.1%"), or, from a baseline of 0 or by 100% or
// more, from the baseline's mean to the run's in the metric's unit with
// the interval of the difference ("0.16% → 22.45% ± 0.01%", "1 → 2").
func (d Difference) amount() string {
	rel, ci, ok := d.Relative()
	if ok && math.Abs(rel) < 1 {
		s := signedPercent(rel)
		if !d.OneRun() {
			s += " ± " + strings.TrimPrefix(signedPercent(ci), "+")
		}
		return s
	}
	s := d.Metric.Format(d.Baseline) + " → " + d.Metric.Format(d.Value)
	if !d.OneRun() {
		s += " ± " + d.Metric.Format(d.CI95)
	}
	return s
}

// signedPercent prints a share as a signed percentage of three
// significant digits at most two decimals: +12.3%, -0.52%, +140%.
func signedPercent(v float64) string {
	p := 100 * v
	decimals := 2
	if a := math.Abs(p); a >= 100 {
		decimals = 0
	} else if a >= 10 {
		decimals = 1
	}
	s := strconv.FormatFloat(p, 'f', decimals, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

// ParseThreshold reads a practical threshold: a percentage ("1%",
// "0.5%") or a share below 1 ("0.01"). A plain number of 1 or more is
// refused as ambiguous (1 would be 100%).
func ParseThreshold(s string) (float64, error) {
	text := strings.TrimSpace(s)
	percent := strings.HasSuffix(text, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(text, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("threshold %q: want a percentage ≥ 0 such as 1%% or 0.5%%", s)
	}
	if percent {
		return v / 100, nil
	}
	if v >= 1 {
		return 0, fmt.Errorf("threshold %q: a plain number is a share below 1; write %s%% for a percentage", s, text)
	}
	return v, nil
}

// ThresholdText prints a threshold as a percentage: 0.01 is "1%".
func ThresholdText(threshold float64) string {
	return strconv.FormatFloat(100*threshold, 'g', 6, 64) + "%"
}

// Lines are the comparison's verdicts in words, to print first: its
// warnings, one line per run after the first against the first, then
// which run is best overall.
func (c *Comparison) Lines() []string {
	var out []string
	for _, w := range c.Warnings {
		out = append(out, "warning: "+w)
	}
	for _, v := range c.Versus {
		out = append(out, v.Line())
	}
	switch {
	case c.Replications < 2:
		out = append(out, "best overall: not judged from one run")
	case c.BestOverall >= 0:
		out = append(out, "best overall: "+c.Names[c.BestOverall]+" (against every other run: better on some metric, worse on none)")
	default:
		out = append(out, "best overall: none (no run is better than every other on some metric and worse on none)")
	}
	return out
}

// Key explains the marks of the comparison's table and the verdicts.
func (c *Comparison) Key() []string {
	th := ThresholdText(c.Threshold)
	crn := "every run draws its arrivals, routing and latencies from the same named random streams, replication k of each on the same seed: differences are paired"
	if c.Unpaired {
		crn = "the runs' seeds differ: their arrivals and latencies are different draws, so the differences are not paired and hold the noise between the draws too"
	}
	if c.Replications < 2 {
		return []string{
			"one run each: no confidence interval, so no * and no (≠); a verdict \"(one run)\" is a difference beyond the " + th + " threshold that noise may explain (--replications 5 gives intervals)",
			crn,
		}
	}
	return []string{
		"* best of the row: better than every other run (paired, significant at 95% and beyond the " + th + " threshold) and no worse on goodput",
		"(≠): differs from " + c.Names[0] + ": the difference, paired by seed, is beyond its 95% interval and the " + th + " threshold",
		fmt.Sprintf("means over %d replications ± 95%% confidence; better, worse: significant and beyond the %s threshold; indistinguishable: within the noise or the threshold", c.Replications, th),
		crn,
	}
}
