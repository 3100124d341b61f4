package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// LogNormal is a latency whose logarithm is normal: given by its Median
// and Sigma (the deviation of the logarithm), or by its P50 and P99.
type LogNormal struct {
	Median   time.Duration
	Sigma    float64
	P50, P99 time.Duration
}

type lognormal struct{ mu, sigma float64 }

// Sample draws one latency using r.
func (l lognormal) Sample(r *rand.Rand) time.Duration {
	return dur(math.Exp(l.mu + l.sigma*r.NormFloat64()))
}

// Mean returns the mean.
func (l lognormal) Mean() time.Duration {
	return dur(distuv.LogNormal{Mu: l.mu, Sigma: l.sigma}.Mean())
}

func (l LogNormal) build() (Latency, error) {
	med, sigma := l.Median, l.Sigma
	if l.P50 > 0 || l.P99 > 0 {
		if l.Median > 0 || l.Sigma > 0 {
			return nil, fmt.Errorf("%w: %s takes median and sigma, or p50 and p99, not both", ErrSpec, Name(l))
		}
		if l.P50 <= 0 || l.P99 <= l.P50 {
			return nil, fmt.Errorf("%w: %s needs 0 < p50 < p99", ErrSpec, Name(l))
		}
		med, sigma = l.P50, math.Log(float64(l.P99)/float64(l.P50))/z99
	}
	if med <= 0 || !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("%w: %s needs a positive median and sigma", ErrSpec, Name(l))
	}
	return lognormal{mu: math.Log(float64(med)), sigma: sigma}, nil
}

// Sample draws one latency using r.
func (l LogNormal) Sample(r *rand.Rand) time.Duration { return builtSample(l, r) }

// Mean returns the mean.
func (l LogNormal) Mean() time.Duration { return builtMean(l) }

// Validate checks that one pair of parameters is given, and describes a
// distribution.
func (l LogNormal) Validate() error { return builtValidate(l) }

// Keys are median and sigma, or p50 and p99.
func (LogNormal) Keys(bool) []string { return []string{"median", "sigma", "p50", "p99"} }

// Decode reads median and sigma, or p50 and p99.
func (LogNormal) Decode(r Reader) Dist {
	var l LogNormal
	if r.Has("p50") || r.Has("p99") {
		l.P50, l.P99 = positive(r, "p50"), positive(r, "p99")
		if l.P99 <= l.P50 && r.Intact(r.Key("p50"), r.Key("p99")) {
			r.Problem(r.Key("p99"), "must be greater than p50 (%s)", valueText(r, l.P50))
		}
		r.Done("dist", "p50", "p99")
		return l
	}
	l.Median = positive(r, "median")
	if r.Required("sigma") {
		l.Sigma = r.Float("sigma", 0.5, 0, true)
	}
	r.Done("dist", "median", "sigma", "p50", "p99")
	return l
}

// Encode writes p50 and p99 when given, else median and sigma.
func (l LogNormal) Encode(e Encoder) []string {
	if l.P50 > 0 {
		return []string{"p50 = " + e.Value(l.P50), "p99 = " + e.Value(l.P99)}
	}
	return []string{"median = " + e.Value(l.Median), "sigma = " + number(l.Sigma)}
}

// fitSamples fits by maximum likelihood: the mean and deviation of the
// logs.
func (LogNormal) fitSamples(s *sampleStats) Fit {
	var ss float64
	for _, x := range s.xs {
		d := math.Log(x) - s.meanLog
		ss += d * d
	}
	ln := distuv.LogNormal{Mu: s.meanLog, Sigma: math.Sqrt(ss / s.n)}
	return Fit{Dist: LogNormal{Median: secondsToDuration(math.Exp(ln.Mu)), Sigma: ln.Sigma}, cdf: ln.CDF, q: ln.Quantile}
}

// fitQuantiles fits the log quantiles, a line in the normal's.
func (LogNormal) fitQuantiles(q *quantileStats) Fit {
	mu, sigma := q.line(q.z)
	ln := distuv.LogNormal{Mu: mu, Sigma: sigma}
	return Fit{Dist: LogNormal{Median: secondsToDuration(math.Exp(mu)), Sigma: sigma}, cdf: ln.CDF, q: ln.Quantile}
}
