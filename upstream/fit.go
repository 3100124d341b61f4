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
	KS  float64
	cdf func(x float64) float64 // seconds
	q   func(p float64) float64 // seconds
}

// Quantile returns the fitted distribution's p-quantile.
func (f Fit) Quantile(p float64) time.Duration { return time.Duration(f.q(p) * 1e9) }

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
	var ss float64
	for _, x := range xs {
		d := math.Log(x) - meanLog
		ss += d * d
	}
	ln := distuv.LogNormal{Mu: meanLog, Sigma: math.Sqrt(ss / n)}
	fits = append(fits, Fit{Spec: Spec{Dist: "lognormal", Median: secondsToDuration(math.Exp(ln.Mu)), Sigma: ln.Sigma}, cdf: ln.CDF, q: ln.Quantile})

	// Gamma: Minka's start for the shape, then Newton on
	// ln k − ψ(k) = ln mean − mean(ln x).
	s := math.Log(mean) - meanLog
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
	ga := distuv.Gamma{Alpha: k, Beta: k / mean}
	fits = append(fits, Fit{Spec: Spec{Dist: "gamma", Mean: secondsToDuration(mean), Shape: k}, cdf: ga.CDF, q: ga.Quantile})

	// Weibull: bisection on the shape k of
	// Σ x^k ln x ÷ Σ x^k − 1/k − mean(ln x) = 0 (increasing in k), on
	// samples scaled by their mean so that x^k stays finite.
	f := func(k float64) float64 {
		var a, b float64
		for _, x := range xs {
			v := math.Pow(x/mean, k)
			a += v * math.Log(x/mean)
			b += v
		}
		return a/b - 1/k - (meanLog - math.Log(mean))
	}
	lo, hi := 0.01, 100.0
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if f(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	wk := math.Sqrt(lo * hi)
	var sk float64
	for _, x := range xs {
		sk += math.Pow(x/mean, wk)
	}
	wb := distuv.Weibull{K: wk, Lambda: mean * math.Pow(sk/n, 1/wk)}
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
