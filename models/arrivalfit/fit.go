package arrivalfit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/limitsim/limitsim/models/arrivals"
)

// MinArrivals is the fewest recorded arrivals Judge will judge: below
// it a Poisson process cannot be told from a burst or a trend.
const MinArrivals = 50

// Thresholds of the choice FitTimes makes.
const (
	constantCV   = 0.1  // gaps with a smaller CV are evenly spaced
	poissonAlpha = 0.01 // the dispersion test's significance level
	regularCV    = 0.35 // on and off periods less variable than this repeat
	rampT        = 5.0  // a trend's slope, in standard errors, that is real
	rampChange   = 0.25 // a trend's change, as a fraction of the mean rate, that matters
)

// ErrFit is returned when recorded arrivals cannot be judged.
var ErrFit = errors.New("arrivalfit: cannot fit")

// Fit describes recorded arrival instants and the process chosen to model
// them.
type Fit struct {
	// Spec is the chosen process: Constant, Poisson, OnOff or Ramp when the
	// data shows one, else Trace holding the recorded offsets.
	Spec arrivals.Spec
	// Reason says why Spec was chosen, in a sentence.
	Reason string
	// Count and Span are the number of arrivals and the time from the first
	// to the last; Rate is the mean rate over Span, per second.
	Count int
	Span  time.Duration
	Rate  float64
	// GapCV is the coefficient of variation of the gaps between arrivals:
	// 1 for Poisson, 0 for evenly spaced.
	GapCV float64
	// Bin is the width of the counting bins; Dispersion is the variance ÷
	// mean of the counts per bin (1 for Poisson) and PPoisson the two-sided
	// p-value of that index under a Poisson process of constant rate.
	Bin        time.Duration
	Dispersion float64
	PPoisson   float64
	// Rates is the rate per second in each bin, from the first arrival.
	Rates []float64
}

// Judge judges recorded arrival instants (sorted, any origin): it
// estimates the rate over time, tests for Poisson by the dispersion index
// of counts per bin, and chooses the process that describes the data —
// constant for evenly spaced arrivals, on/off for regular silences, a ramp
// for a significant trend, Poisson when the counts are as dispersed as a
// Poisson process's, and the recorded trace otherwise.
func Judge(times []time.Duration) (Fit, error) {
	n := len(times)
	if n < MinArrivals {
		return Fit{}, fmt.Errorf("%w: %d arrivals; judging a process needs at least %d", ErrFit, n, MinArrivals)
	}
	if !slices.IsSorted(times) {
		return Fit{}, fmt.Errorf("%w: arrivals are not sorted", ErrFit)
	}
	offsets := make([]time.Duration, n)
	for i, t := range times {
		offsets[i] = t - times[0]
	}
	span := offsets[n-1]
	if span <= 0 {
		return Fit{}, fmt.Errorf("%w: every arrival is at the same instant: use arrival = \"backlog\"", ErrFit)
	}
	f := Fit{Count: n, Span: span, Rate: float64(n-1) / span.Seconds()}
	gaps := make([]float64, n-1)
	for i := range gaps {
		gaps[i] = (offsets[i+1] - offsets[i]).Seconds()
	}
	meanGap, sdGap := meanSD(gaps)
	f.GapCV = sdGap / meanGap
	counts := f.bin(offsets)

	switch {
	case f.GapCV < constantCV:
		f.Spec = arrivals.Spec{Kind: arrivals.KindConstant, Rate: 1 / meanGap}
		f.Reason = fmt.Sprintf("the gaps vary by %.2g of their mean (evenly spaced below %g)", f.GapCV, constantCV)
		return f, nil
	}
	// A trend first: the slow start of a ramp would read as silences.
	if spec, reason, ok := ramp(counts, f.Bin, span); ok {
		f.Spec, f.Reason = spec, reason
		return f, nil
	}
	if spec, reason, ok := onOff(offsets, gaps); ok {
		f.Spec, f.Reason = spec, reason
		return f, nil
	} else if reason != "" {
		f.Spec, f.Reason = arrivals.Spec{Kind: arrivals.KindTrace, Times: offsets}, reason
		return f, nil
	}
	if f.PPoisson >= poissonAlpha {
		f.Spec = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: f.Rate}
		f.Reason = fmt.Sprintf("the counts per %v are as dispersed as a Poisson process's (index %.2f, p = %.2g ≥ %g)", f.Bin.Round(time.Millisecond), f.Dispersion, f.PPoisson, poissonAlpha)
		return f, nil
	}
	f.Spec = arrivals.Spec{Kind: arrivals.KindTrace, Times: offsets}
	f.Reason = fmt.Sprintf("the counts per %v are %s dispersed than a Poisson process's (index %.2f, p = %.2g < %g) and show no regular silences or trend: replay the trace",
		f.Bin.Round(time.Millisecond), map[bool]string{true: "more", false: "less"}[f.Dispersion > 1], f.Dispersion, f.PPoisson, poissonAlpha)
	return f, nil
}

// bin counts arrivals in equal bins over the span (about ten arrivals a
// bin, between 10 and 400 bins), sets Bin, Rates, Dispersion and PPoisson,
// and returns the counts.
func (f *Fit) bin(offsets []time.Duration) []float64 {
	k := min(max(len(offsets)/10, 10), 400)
	f.Bin = f.Span / time.Duration(k)
	if f.Bin <= 0 {
		f.Bin = 1
	}
	k = int(f.Span / f.Bin)
	counts := make([]float64, k)
	for _, t := range offsets {
		counts[min(int(t/f.Bin), k-1)]++
	}
	f.Rates = make([]float64, k)
	for i, c := range counts {
		f.Rates[i] = c / f.Bin.Seconds()
	}
	mean, sd := meanSD(counts)
	f.Dispersion = sd * sd / mean
	df := float64(k - 1)
	cdf := distuv.ChiSquared{K: df}.CDF(df * f.Dispersion)
	f.PPoisson = min(1, 2*min(cdf, 1-cdf))
	return counts
}

// onOff finds regular silences: gaps far longer than a Poisson process at
// the "on" rate would leave. It returns ok with the on/off process when
// there are at least two silences of regular length, or a reason to replay
// the trace when the silences are irregular, or neither.
func onOff(offsets []time.Duration, gaps []float64) (arrivals.Spec, string, bool) {
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	// The median gap of a Poisson process is ln 2 ÷ rate; a few long
	// silences barely move it.
	rate := math.Ln2 / sorted[len(sorted)/2]
	var long []int
	for range 2 {
		// A gap this long happens by chance about once in 100 traces.
		limit := math.Log(100*float64(len(gaps))) / rate
		long = long[:0]
		var inside, insideN float64
		for i, g := range gaps {
			if g > limit {
				long = append(long, i)
			} else {
				inside += g
				insideN++
			}
		}
		if insideN == 0 || inside == 0 {
			return arrivals.Spec{}, "", false
		}
		rate = insideN / inside
	}
	if len(long) < 2 {
		return arrivals.Spec{}, "", false
	}
	// A silence spans the off period plus about one gap on each side; a
	// burst's first-to-last arrival falls short of its on period by the same.
	var offs, ons []float64
	for _, i := range long {
		offs = append(offs, gaps[i]-2/rate)
	}
	for j := 1; j < len(long); j++ {
		ons = append(ons, (offsets[long[j]]-offsets[long[j-1]+1]).Seconds()+2/rate)
	}
	on, onSD := meanSD(ons)
	off, offSD := meanSD(offs)
	if off <= 0 || on <= 0 || onSD/on > regularCV || offSD/off > regularCV {
		return arrivals.Spec{}, fmt.Sprintf("%d silences longer than a Poisson process at %.3g/s would leave, but bursts and silences are irregular (CV %.2f and %.2f): replay the trace",
			len(long), rate, onSD/on, offSD/off), false
	}
	spec := arrivals.Spec{Kind: arrivals.KindOnOff, Rate: rate, On: secs(on), Off: secs(off)}
	return spec, fmt.Sprintf("%d regular silences (about %v each) between bursts of about %v at %.3g/s", len(long), spec.Off, spec.On, rate), true
}

// ramp fits counts = a + b·min(t, R) by least squares over the hinge R and
// returns a ramp when the slope is significant, the change matters, and the
// counts around the line are as dispersed as a Poisson process's.
func ramp(counts []float64, bin, span time.Duration) (arrivals.Spec, string, bool) {
	k := len(counts)
	mean, _ := meanSD(counts)
	best := struct{ sse, a, b, se float64 }{sse: math.Inf(1)}
	bestR := 0
	for r := 2; r <= k; r++ {
		xs := make([]float64, k)
		for i := range xs {
			xs[i] = float64(min(i, r-1)) + 0.5
		}
		mx, _ := meanSD(xs)
		var sxx, sxy float64
		for i, x := range xs {
			sxx += (x - mx) * (x - mx)
			sxy += (x - mx) * (counts[i] - mean)
		}
		b := sxy / sxx
		a := mean - b*mx
		var sse float64
		for i, x := range xs {
			d := counts[i] - a - b*x
			sse += d * d
		}
		if sse < best.sse {
			best = struct{ sse, a, b, se float64 }{sse, a, b, math.Sqrt(sse / float64(k-2) / sxx)}
			bestR = r
		}
	}
	if best.se == 0 || math.Abs(best.b/best.se) < rampT {
		return arrivals.Spec{}, "", false
	}
	start, end := best.a, best.a+best.b*float64(bestR)
	if math.Abs(end-start) < rampChange*mean {
		return arrivals.Spec{}, "", false
	}
	// Around the line the counts must scatter as a Poisson process's.
	df := float64(k - 3)
	disp := best.sse / df / mean
	if p := (distuv.ChiSquared{K: df}).Survival(df * disp); p < poissonAlpha {
		return arrivals.Spec{}, "", false
	}
	over := time.Duration(bestR) * bin
	if bestR == k {
		over = span
	}
	per := bin.Seconds()
	from := max(start/per, 0.01*mean/per)
	to := max(end/per, 0)
	spec := arrivals.Spec{Kind: arrivals.KindRamp, Rate: from, RateTo: to, Ramp: over.Round(time.Millisecond)}
	return spec, fmt.Sprintf("the rate moves from %.3g/s to %.3g/s over %v (slope %.1f standard errors from zero) with Poisson scatter around the line",
		from, to, spec.Ramp, math.Abs(best.b/best.se)), true
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		sd = math.Sqrt(ss / float64(len(xs)-1))
	}
	return mean, sd
}

func secs(s float64) time.Duration {
	return time.Duration(s * 1e9).Round(time.Millisecond)
}

// MeanRate is the mean arrival rate per second the process s gives over
// [from, to) (a trace's recorded arrivals counted over the interval).
func MeanRate(s arrivals.Spec, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	span := (to - from).Seconds()
	switch s.Kind {
	case arrivals.KindOnOff:
		period := s.On + s.Off
		if period <= 0 {
			return s.Rate
		}
		// on-time in [0, t): whole periods plus the on part of the rest.
		onBefore := func(t time.Duration) time.Duration { return t/period*s.On + min(t%period, s.On) }
		return s.Rate * (onBefore(to) - onBefore(from)).Seconds() / span
	case arrivals.KindRamp:
		// The rate is linear up to Ramp and flat after: integrate exactly.
		at := func(t time.Duration) float64 {
			if t >= s.Ramp || s.Ramp <= 0 {
				return s.RateTo
			}
			return s.Rate + (s.RateTo-s.Rate)*float64(t)/float64(s.Ramp)
		}
		integral := func(a, b time.Duration) float64 { return (at(a) + at(b)) / 2 * (b - a).Seconds() }
		if from < s.Ramp && s.Ramp < to {
			return (integral(from, s.Ramp) + integral(s.Ramp, to)) / span
		}
		return integral(from, to) / span
	case arrivals.KindTrace:
		lo, _ := slices.BinarySearch(s.Times, from)
		hi, _ := slices.BinarySearch(s.Times, to)
		return float64(hi-lo) / span
	}
	return s.Rate
}
