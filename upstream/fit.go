package upstream

import (
	"errors"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fit is one latency family fitted to samples by maximum likelihood.
type Fit struct {
	// Dist is the fitted distribution, its parameters rounded to the
	// nanosecond as a scenario writes them.
	Dist Dist
	// KS is the Kolmogorov–Smirnov statistic: the largest gap between the
	// samples' empirical CDF and the fitted one (smaller fits better).
	KS float64
	// QuantileErr is, for a fit to percentiles, the largest relative gap
	// between a given percentile and the fitted one (smaller fits better).
	QuantileErr float64
	cdf         func(x float64) float64 // seconds
	q           func(p float64) float64 // seconds
}

// Quantile returns the fitted distribution's p-quantile.
func (f Fit) Quantile(p float64) time.Duration { return time.Duration(f.q(p) * 1e9) }

// CDF returns the fitted distribution's cumulative share at a latency in
// seconds.
func (f Fit) CDF(seconds float64) float64 { return f.cdf(seconds) }

// ErrFit is returned when samples cannot be fitted.
var ErrFit = errors.New("upstream: cannot fit")

// FitLatency fits every family of the table that fits samples (the
// exponential, lognormal, gamma and Weibull) to samples (all positive) by
// maximum likelihood and returns them ranked by their Kolmogorov–Smirnov
// statistic, best first.
func FitLatency(samples []time.Duration) ([]Fit, error) {
	if len(samples) < 2 {
		return nil, errors.Join(ErrFit, errors.New("need at least two samples"))
	}
	xs := make([]float64, len(samples))
	var sum, sumLog float64
	for i, s := range samples {
		if s <= 0 {
			return nil, errors.Join(ErrFit, errors.New("every sample must be positive"))
		}
		xs[i] = s.Seconds()
		sum += xs[i]
		sumLog += math.Log(xs[i])
	}
	sort.Float64s(xs)
	n := float64(len(xs))
	mean, meanLog := sum/n, sumLog/n
	if xs[0] == xs[len(xs)-1] {
		return nil, errors.Join(ErrFit, errors.New("every sample is the same: use a constant latency"))
	}
	st := &sampleStats{xs: xs, n: n, mean: mean, meanLog: meanLog}
	var fits []Fit
	for _, f := range families {
		if ft, ok := f.zero.(interface{ fitSamples(*sampleStats) Fit }); ok {
			fits = append(fits, ft.fitSamples(st))
		}
	}

	for i := range fits {
		fits[i].KS = ksStatistic(xs, fits[i].cdf)
	}
	sort.SliceStable(fits, func(a, b int) bool { return fits[a].KS < fits[b].KS })
	return fits, nil
}

// ksStatistic is the largest gap between the empirical CDF of sorted xs
// and cdf.
func ksStatistic(xs []float64, cdf func(float64) float64) float64 {
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		c := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/n-c, c-float64(i)/n))
	}
	return d
}

func secondsToDuration(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// FitQuantiles fits every family of the table that fits percentiles (the
// exponential, lognormal, gamma and Weibull) to a table of percentiles (ps strictly increasing in (0, 1), qs positive
// and increasing) by least squares on the logs of the quantiles, and
// returns them ranked by QuantileErr, best first.
func FitQuantiles(ps []float64, qs []time.Duration) ([]Fit, error) {
	if len(ps) != len(qs) || len(ps) < 2 {
		return nil, errors.Join(ErrFit, errors.New("need at least two percentiles"))
	}
	logQ := make([]float64, len(qs))
	for i := range ps {
		if !(ps[i] > 0 && ps[i] < 1) || (i > 0 && ps[i] <= ps[i-1]) {
			return nil, errors.Join(ErrFit, errors.New("percentiles must increase strictly between 0 and 100"))
		}
		if qs[i] <= 0 || (i > 0 && qs[i] < qs[i-1]) {
			return nil, errors.Join(ErrFit, errors.New("latencies must be positive and must not fall as the percentile rises"))
		}
		logQ[i] = math.Log(qs[i].Seconds())
	}
	if qs[0] == qs[len(qs)-1] {
		return nil, errors.Join(ErrFit, errors.New("every percentile is the same: use a constant latency"))
	}
	q := &quantileStats{ps: ps, logQ: logQ, z: make([]float64, len(ps)), e: make([]float64, len(ps))}
	for i, p := range ps {
		q.z[i] = distuv.UnitNormal.Quantile(p)
		q.e[i] = math.Log(-math.Log1p(-p)) // log of the unit exponential's quantile
	}
	var fits []Fit
	for _, f := range families {
		if ft, ok := f.zero.(interface{ fitQuantiles(*quantileStats) Fit }); ok {
			fits = append(fits, ft.fitQuantiles(q))
		}
	}

	for i := range fits {
		for j, p := range ps {
			fits[i].QuantileErr = math.Max(fits[i].QuantileErr, math.Abs(fits[i].q(p)/qs[j].Seconds()-1))
		}
	}
	sort.SliceStable(fits, func(a, b int) bool { return fits[a].QuantileErr < fits[b].QuantileErr })
	return fits, nil
}

// sampleStats are what the fits to samples share: the samples in
// seconds, sorted, their count, mean and mean logarithm.
type sampleStats struct {
	xs               []float64
	n, mean, meanLog float64
}

// quantileStats are what the fits to percentiles share: the percentiles,
// the logarithms of their latencies in seconds, and the unit normal's (z)
// and the log of the unit exponential's (e) quantiles at them.
type quantileStats struct {
	ps, logQ, z, e []float64
}

// line fits logQ = a + b·x by least squares.
func (q *quantileStats) line(x []float64) (a, b float64) {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += q.logQ[i]
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (q.logQ[i] - my)
	}
	b = sxy / sxx
	return my - b*mx, b
}

// offset is the least-squares a of logQ = a + x (a fixed slope of 1).
func (q *quantileStats) offset(x []float64) float64 {
	var a float64
	for i := range x {
		a += q.logQ[i] - x[i]
	}
	return a / float64(len(x))
}
