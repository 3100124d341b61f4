package upstream

import (
	"errors"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Fit is one latency family fitted to samples by maximum likelihood.
type Fit struct {
	Spec Spec
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

// FitLatency fits the lognormal, gamma, Weibull and exponential families to
// samples (all positive) by maximum likelihood and returns them ranked by
// their Kolmogorov–Smirnov statistic, best first.
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
	var fits []Fit

	// Lognormal: the mean and deviation of the logs.
	var sumSquares float64
	for _, x := range xs {
		d := math.Log(x) - meanLog
		sumSquares += d * d
	}
	ln := distuv.LogNormal{Mu: meanLog, Sigma: math.Sqrt(sumSquares / n)}
	fits = append(fits, Fit{Spec: Spec{Dist: "lognormal", Median: secondsToDuration(math.Exp(ln.Mu)), Sigma: ln.Sigma}, cdf: ln.CDF, q: ln.Quantile})

	// Gamma: Minka's start for the shape, then Newton on
	// ln k − ψ(k) = ln mean − mean(ln x).
	k := gammaShape(math.Log(mean) - meanLog)
	ga := distuv.Gamma{Alpha: k, Beta: k / mean}
	fits = append(fits, Fit{Spec: Spec{Dist: "gamma", Mean: secondsToDuration(mean), Shape: k}, cdf: ga.CDF, q: ga.Quantile})

	// Weibull: the shape by bisection (weibullShape), on samples scaled by
	// their mean so that x^k stays finite, then the scale that goes with it.
	scaled := make([]float64, len(xs))
	for i, x := range xs {
		scaled[i] = x / mean
	}
	wk := weibullShape(scaled, meanLog-math.Log(mean))
	var sumPowers float64
	for _, x := range scaled {
		sumPowers += math.Pow(x, wk)
	}
	wb := distuv.Weibull{K: wk, Lambda: mean * math.Pow(sumPowers/n, 1/wk)}
	fits = append(fits, Fit{Spec: Spec{Dist: "weibull", Scale: secondsToDuration(wb.Lambda), Shape: wk}, cdf: wb.CDF, q: wb.Quantile})

	// Exponential: the mean.
	ex := distuv.Exponential{Rate: 1 / mean}
	fits = append(fits, Fit{Spec: Spec{Dist: "exponential", Mean: secondsToDuration(mean)}, cdf: ex.CDF, q: ex.Quantile})

	for i := range fits {
		fits[i].KS = ksStatistic(xs, fits[i].cdf)
	}
	sort.SliceStable(fits, func(a, b int) bool { return fits[a].KS < fits[b].KS })
	return fits, nil
}

// gammaShape solves ln k − ψ(k) = s for the gamma shape k, s being the log
// of the samples' mean less the mean of their logs: Minka's start, then
// Newton's steps.
func gammaShape(s float64) float64 {
	k := (3 - s + math.Sqrt((s-3)*(s-3)+24*s)) / (12 * s)
	for range 50 {
		g := math.Log(k) - mathext.Digamma(k) - s
		h := 1e-6 * k
		dg := (math.Log(k+h) - mathext.Digamma(k+h) - math.Log(k-h) + mathext.Digamma(k-h)) / (2 * h)
		next := k - g/dg
		if next <= 0 {
			next = k / 2
		}
		if math.Abs(next-k) < 1e-10*k {
			k = next
			break
		}
		k = next
	}
	return k
}

// weibullShape finds the Weibull shape k by bisection on
// Σ x^k ln x ÷ Σ x^k − 1/k − meanLog = 0 (increasing in k), over the
// samples scaled by their mean, meanLog being the mean of the scaled
// samples' logs.
func weibullShape(scaled []float64, meanLog float64) float64 {
	// The logs are worked out once, not at every step of the bisection.
	logs := make([]float64, len(scaled))
	for i, x := range scaled {
		logs[i] = math.Log(x)
	}
	f := func(k float64) float64 {
		var a, b float64
		for i, x := range scaled {
			v := math.Pow(x, k)
			a += v * logs[i]
			b += v
		}
		return a/b - 1/k - meanLog
	}
	lo, hi := 0.01, 100.0
	for range 200 {
		mid := math.Sqrt(lo * hi)
		plo, phi := lo, hi
		if f(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
		// Once a step leaves both bounds as they were, every later step
		// would too (the same midpoint, the same sign): the bisection is
		// done, in about 60 steps rather than 200.
		if lo == plo && hi == phi {
			break
		}
	}
	return math.Sqrt(lo * hi)
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

// FitQuantiles fits the lognormal, gamma, Weibull and exponential families
// to a table of percentiles (ps strictly increasing in (0, 1), qs positive
// and increasing) by least squares on the logs of the quantiles, and
// returns them ranked by QuantileErr, best first.
func FitQuantiles(ps []float64, qs []time.Duration) ([]Fit, error) {
	if len(ps) != len(qs) || len(ps) < 2 {
		return nil, errors.Join(ErrFit, errors.New("need at least two percentiles"))
	}
	logQ, err := quantileLogs(ps, qs)
	if err != nil {
		return nil, err
	}
	z, e := make([]float64, len(ps)), make([]float64, len(ps))
	for i, p := range ps {
		z[i] = distuv.UnitNormal.Quantile(p)
		e[i] = math.Log(-math.Log1p(-p)) // log of the unit exponential's quantile
	}
	var fits []Fit

	mu, sigma := leastSquares(z, logQ)
	ln := distuv.LogNormal{Mu: mu, Sigma: sigma}
	fits = append(fits, Fit{Spec: Spec{Dist: "lognormal", Median: secondsToDuration(math.Exp(mu)), Sigma: sigma}, cdf: ln.CDF, q: ln.Quantile})

	// Gamma: for a shape k the scale is the mean log ratio to the unit-scale
	// quantiles; the shape is searched on a log grid, then refined.
	ga := gammaQuantileFit(ps, logQ)
	fits = append(fits, Fit{Spec: Spec{Dist: "gamma", Mean: secondsToDuration(ga.Alpha / ga.Beta), Shape: ga.Alpha}, cdf: ga.CDF, q: ga.Quantile})

	a, b := leastSquares(e, logQ)
	wb := distuv.Weibull{K: 1 / b, Lambda: math.Exp(a)}
	fits = append(fits, Fit{Spec: Spec{Dist: "weibull", Scale: secondsToDuration(wb.Lambda), Shape: wb.K}, cdf: wb.CDF, q: wb.Quantile})

	mean := math.Exp(meanOffset(e, logQ))
	ex := distuv.Exponential{Rate: 1 / mean}
	fits = append(fits, Fit{Spec: Spec{Dist: "exponential", Mean: secondsToDuration(mean)}, cdf: ex.CDF, q: ex.Quantile})

	for i := range fits {
		for j, p := range ps {
			fits[i].QuantileErr = math.Max(fits[i].QuantileErr, math.Abs(fits[i].q(p)/qs[j].Seconds()-1))
		}
	}
	sort.SliceStable(fits, func(a, b int) bool { return fits[a].QuantileErr < fits[b].QuantileErr })
	return fits, nil
}

// quantileLogs checks a table of percentiles for FitQuantiles and returns
// the logs of its latencies in seconds.
func quantileLogs(ps []float64, qs []time.Duration) ([]float64, error) {
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
	return logQ, nil
}

// leastSquares fits logQ = a + b·x by least squares.
func leastSquares(x, logQ []float64) (a, b float64) {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += logQ[i]
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (logQ[i] - my)
	}
	b = sxy / sxx
	return my - b*mx, b
}

// meanOffset is the least-squares a of logQ = a + x (a fixed slope of 1).
func meanOffset(x, logQ []float64) float64 {
	var a float64
	for i := range x {
		a += logQ[i] - x[i]
	}
	return a / float64(len(x))
}

// gammaQuantileFit fits a gamma distribution to the log quantiles logQ at
// percentiles ps: for a shape k the scale is the mean log ratio to the
// unit-scale quantiles; the shape is searched on a log grid, then refined.
func gammaQuantileFit(ps, logQ []float64) distuv.Gamma {
	gammaAt := func(k float64) (distuv.Gamma, float64) {
		unit := distuv.Gamma{Alpha: k, Beta: 1}
		x := make([]float64, len(ps))
		for i, p := range ps {
			x[i] = math.Log(unit.Quantile(p))
		}
		a := meanOffset(x, logQ)
		var sse float64
		for i := range x {
			d := a + x[i] - logQ[i]
			sse += d * d
		}
		return distuv.Gamma{Alpha: k, Beta: math.Exp(-a)}, sse
	}
	bestK, bestSSE := 1.0, math.Inf(1)
	for lk := math.Log(0.05); lk <= math.Log(200); lk += 0.05 {
		if _, sse := gammaAt(math.Exp(lk)); sse < bestSSE {
			bestK, bestSSE = math.Exp(lk), sse
		}
	}
	lo, hi := bestK*math.Exp(-0.05), bestK*math.Exp(0.05)
	for range 60 {
		m1, m2 := lo+(hi-lo)/3, hi-(hi-lo)/3
		_, s1 := gammaAt(m1)
		_, s2 := gammaAt(m2)
		if s1 < s2 {
			hi = m2
		} else {
			lo = m1
		}
	}
	ga, _ := gammaAt((lo + hi) / 2)
	return ga
}
