package planning

import (
	"fmt"
	"math"
	"testing"
)

// goodputHeadline is the headline metric the verdict tests judge: more is
// better.
func goodputHeadline(t *testing.T) HeadlineMetric {
	t.Helper()
	for _, m := range HeadlineMetrics() {
		if m.Name == "goodput_rps" {
			return m
		}
	}
	t.Fatal("no goodput_rps among the headline metrics")
	return HeadlineMetric{}
}

// scaledSamples multiplies every sample by f.
func scaledSamples(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// The verdicts on constructed samples, paired by replication: identical
// samples, a 20% difference either way, a significant difference inside
// the threshold, a difference beyond the threshold inside the noise, and
// one replication (no interval).
func TestJudgeVerdicts(t *testing.T) {
	goodput := goodputHeadline(t)
	waits := goodput
	waits.Better = LowerIsBetter
	load := goodput
	load.Better = NoDirection
	base := []float64{100, 104, 97, 101, 99}
	for _, c := range []struct {
		name                string
		m                   HeadlineMetric
		baseline, run       []float64
		want                Verdict
		significant, beyond bool
	}{
		{"identical", goodput, base, base, VerdictIndistinguishable, false, false},
		{"20% more goodput", goodput, base, scaledSamples(base, 1.2), VerdictBetter, true, true},
		{"20% less goodput", goodput, scaledSamples(base, 1.2), base, VerdictWorse, true, true},
		{"20% more of a lower-is-better metric", waits, base, scaledSamples(base, 1.2), VerdictWorse, true, true},
		{"20% more of a metric without a direction", load, base, scaledSamples(base, 1.2), VerdictHigher, true, true},
		{"20% less of a metric without a direction", load, base, scaledSamples(base, 0.8), VerdictLower, true, true},
		// Every replication 0.5% up: as significant as can be, yet within
		// the 1% threshold.
		{"0.5% more, significant", goodput, base, scaledSamples(base, 1.005), VerdictIndistinguishable, true, false},
		// 5% more on average, but the paired differences swing from -15
		// to +20: the interval holds 0.
		{"5% more inside the interval", goodput, []float64{100, 100, 100, 100}, []float64{120, 85, 118, 97}, VerdictIndistinguishable, false, true},
		{"one run, 20% more", goodput, []float64{100}, []float64{120}, VerdictBetter, false, true},
		{"one run, 0.5% more", goodput, []float64{100}, []float64{100.5}, VerdictIndistinguishable, false, false},
		{"from a baseline of 0", waits, []float64{0, 0, 0}, []float64{0.02, 0.03, 0.025}, VerdictWorse, true, true},
		{"0 against 0", waits, []float64{0, 0, 0}, []float64{0, 0, 0}, VerdictIndistinguishable, false, false},
	} {
		d, err := Judge(c.m, c.baseline, c.run, DefaultThreshold)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Verdict != c.want || d.Significant != c.significant || d.BeyondThreshold != c.beyond {
			t.Errorf("%s: %s (significant %v, beyond %v; diff %g ± %g), want %s (%v, %v)",
				c.name, d.Verdict, d.Significant, d.BeyondThreshold, d.Diff, d.CI95, c.want, c.significant, c.beyond)
		}
		if d.OneRun() != (len(c.baseline) == 1) {
			t.Errorf("%s: one run %v over %d replications", c.name, d.OneRun(), d.Replications)
		}
	}
	if _, err := Judge(goodput, base, base[:2], DefaultThreshold); err == nil {
		t.Error("samples of unequal lengths judged")
	}
	if _, err := Judge(goodput, nil, nil, DefaultThreshold); err == nil {
		t.Error("no samples judged")
	}
}

// A difference exactly at the threshold is not beyond it, and one just
// above is; a difference exactly at its confidence half-width is not
// significant, and one just above is. Both are strict comparisons.
func TestClassifyBoundaries(t *testing.T) {
	up := math.Nextafter(2, 3)
	for _, c := range []struct {
		name                        string
		baseline, diff, ci95        float64
		reps                        int
		want                        Verdict
		significant, beyondExpected bool
	}{
		{"2 of 200 is the 1% threshold", 200, 2, 0.5, 5, VerdictIndistinguishable, true, false},
		{"just above the threshold", 200, up, 0.5, 5, VerdictBetter, true, true},
		{"just below the threshold", 200, math.Nextafter(2, 1), 0.5, 5, VerdictIndistinguishable, true, false},
		{"-2 of 200 is the threshold too", 200, -2, 0.5, 5, VerdictIndistinguishable, true, false},
		{"just beyond it downwards", 200, -up, 0.5, 5, VerdictWorse, true, true},
		{"the difference equals its half-width", 200, 4, 4, 5, VerdictIndistinguishable, false, true},
		{"just beyond its half-width", 200, 4, math.Nextafter(4, 3), 5, VerdictBetter, true, true},
		{"one run at the threshold", 200, 2, 0, 1, VerdictIndistinguishable, false, false},
		{"one run just above it", 200, up, 0, 1, VerdictBetter, false, true},
	} {
		sig, beyond, v := classifyDifference(HigherIsBetter, c.baseline, c.diff, c.ci95, c.reps, DefaultThreshold)
		if v != c.want || sig != c.significant || beyond != c.beyondExpected {
			t.Errorf("%s: %s (significant %v, beyond %v), want %s (%v, %v)", c.name, v, sig, beyond, c.want, c.significant, c.beyondExpected)
		}
	}
	// Through Judge and a parsed threshold: 202 against 200 is 1% exactly.
	th, err := ParseThreshold("1%")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Judge(goodputHeadline(t), []float64{200, 200, 200}, []float64{202, 202, 202}, th)
	if err != nil || d.Verdict != VerdictIndistinguishable || !d.Significant {
		t.Errorf("202 against 200 at 1%%: %+v, %v", d, err)
	}
	d, _ = Judge(goodputHeadline(t), []float64{200, 200, 200}, []float64{202.5, 202.5, 202.5}, th)
	if d.Verdict != VerdictBetter {
		t.Errorf("202.5 against 200 at 1%%: %s", d.Verdict)
	}
}

func TestParseThreshold(t *testing.T) {
	for in, want := range map[string]float64{"1%": 0.01, "0.5%": 0.005, " 2.5 % ": 0.025, "0%": 0, "0.01": 0.01, "0": 0, "150%": 1.5} {
		got, err := ParseThreshold(in)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "1", "2", "-1%", "-0.01", "abc", "NaN%", "Inf%", "1%%"} {
		if got, err := ParseThreshold(in); err == nil {
			t.Errorf("%q: accepted as %v", in, got)
		}
	}
	for th, want := range map[float64]string{0.01: "1%", 0.005: "0.5%", 0.07: "7%", 0: "0%"} {
		if got := ThresholdText(th); got != want {
			t.Errorf("ThresholdText(%v) = %q, want %q", th, got, want)
		}
	}
}

// A verdict line gives the differences with their intervals first, then
// what is indistinguishable, then the overall verdict; from one run it
// says so and prints no interval.
func TestVersusLine(t *testing.T) {
	goodput := goodputHeadline(t)
	waits := goodput
	waits.Label, waits.Better = "429 rate", LowerIsBetter
	waits.Format = func(v float64) string { return fmt.Sprintf("%g%%", 100*v) }
	better, _ := Judge(goodput, []float64{100, 100}, []float64{112, 112.6}, DefaultThreshold)
	same, _ := Judge(waits, []float64{0.1, 0.1}, []float64{0.1, 0.1}, DefaultThreshold)
	v := Versus{Name: "B", Baseline: "A", Replications: 2, Overall: VerdictBetter, Differences: []Difference{better, same}}
	if got, want := v.Line(), "B vs A: better goodput (+12.3% ± 3.81%); indistinguishable 429 rate; overall better"; got != want {
		t.Errorf("line\n%s\nwant\n%s", got, want)
	}
	one, _ := Judge(goodput, []float64{100}, []float64{80}, DefaultThreshold)
	fromZero, _ := Judge(waits, []float64{0}, []float64{0.05}, DefaultThreshold)
	v = Versus{Name: "B", Baseline: "A", Replications: 1, Overall: VerdictMixed, Differences: []Difference{one, fromZero}}
	if got, want := v.Line(), "B vs A (one run, no interval): worse goodput (-20.0%), worse 429 rate (0% → 5%); overall mixed"; got != want {
		t.Errorf("line\n%s\nwant\n%s", got, want)
	}
	v = Versus{Name: "B", Baseline: "A", Replications: 2, Overall: VerdictIndistinguishable, Differences: []Difference{same}}
	if got, want := v.Line(), "B vs A: indistinguishable on every metric"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
