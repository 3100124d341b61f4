package upstream

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrSpec is wrapped by every error about a distribution specification.
var ErrSpec = errors.New("upstream: invalid distribution")

// Latency draws service times.
type Latency interface {
	// Sample draws one duration using r.
	Sample(r *rand.Rand) time.Duration
	// Mean returns the distribution's mean (for sizing and reports).
	Mean() time.Duration
}

// Component is one part of a mixture.
type Component struct {
	Weight float64
	Dist   Spec
}

// Spec describes a latency distribution. Dist selects the family; the
// fields it uses are listed with each family in docs/scenario.md. Durations are strictly positive unless noted.
type Spec struct {
	Dist        string
	Value       time.Duration // constant
	Mean        time.Duration // exponential, gamma
	Median      time.Duration // lognormal
	Sigma       float64       // lognormal
	P50         time.Duration // lognormal by quantiles
	P99         time.Duration
	Shape       float64       // gamma, weibull, pareto
	Scale       time.Duration // weibull, pareto (minimum)
	Min         time.Duration // uniform (may be 0)
	Max         time.Duration
	Quantiles   []Quantile      // empirical
	SamplesFile string          // empirical: CSV of durations
	Samples     []time.Duration // its contents once loaded
	Mixture     []Component
}

// Quantile is one point of an empirical distribution: P(X ≤ Value) = P.
type Quantile struct {
	P     float64
	Value time.Duration
}

// z99 is the standard normal quantile at 0.99.
const z99 = 2.3263478740408408

// NewLatency builds the distribution s describes.
func NewLatency(s Spec) (Latency, error) {
	switch s.Dist {
	case "constant":
		if s.Value < 0 {
			return nil, fmt.Errorf("%w: constant value %v is negative", ErrSpec, s.Value)
		}
		return constant(s.Value), nil
	case "exponential":
		if s.Mean <= 0 {
			return nil, fmt.Errorf("%w: exponential mean must be positive", ErrSpec)
		}
		return exponential{mean: float64(s.Mean)}, nil
	case "lognormal":
		med, sigma := s.Median, s.Sigma
		if s.P50 > 0 || s.P99 > 0 {
			if s.Median > 0 || s.Sigma > 0 {
				return nil, fmt.Errorf("%w: lognormal takes median and sigma, or p50 and p99, not both", ErrSpec)
			}
			if s.P50 <= 0 || s.P99 <= s.P50 {
				return nil, fmt.Errorf("%w: lognormal needs 0 < p50 < p99", ErrSpec)
			}
			med, sigma = s.P50, math.Log(float64(s.P99)/float64(s.P50))/z99
		}
		if med <= 0 || !(sigma > 0) || math.IsInf(sigma, 0) {
			return nil, fmt.Errorf("%w: lognormal needs a positive median and sigma", ErrSpec)
		}
		return lognormal{mu: math.Log(float64(med)), sigma: sigma}, nil
	case "gamma":
		if s.Mean <= 0 || !(s.Shape > 0) || math.IsInf(s.Shape, 0) {
			return nil, fmt.Errorf("%w: gamma needs a positive mean and shape", ErrSpec)
		}
		return gamma{shape: s.Shape, rate: s.Shape / float64(s.Mean)}, nil
	case "weibull":
		if s.Scale <= 0 || !(s.Shape > 0) || math.IsInf(s.Shape, 0) {
			return nil, fmt.Errorf("%w: weibull needs a positive scale and shape", ErrSpec)
		}
		return weibull{k: s.Shape, lambda: float64(s.Scale)}, nil
	case "pareto":
		if s.Scale <= 0 || !(s.Shape > 1) || math.IsInf(s.Shape, 0) {
			return nil, fmt.Errorf("%w: pareto needs a positive scale (minimum) and a shape above 1 (a finite mean)", ErrSpec)
		}
		return pareto{xm: float64(s.Scale), alpha: s.Shape}, nil
	case "uniform":
		if s.Min < 0 || s.Max <= s.Min {
			return nil, fmt.Errorf("%w: uniform needs 0 ≤ min < max", ErrSpec)
		}
		return uniform{lo: s.Min, hi: s.Max}, nil
	case "empirical":
		return newEmpirical(s)
	case "mixture":
		return newMixture(s.Mixture)
	}
	return nil, fmt.Errorf("%w: unknown dist %q (constant, exponential, lognormal, gamma, weibull, pareto, uniform, empirical, mixture)", ErrSpec, s.Dist)
}

func dur(x float64) time.Duration {
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	if x < 0 {
		return 0
	}
	return time.Duration(x)
}

type constant time.Duration

func (c constant) Sample(*rand.Rand) time.Duration { return time.Duration(c) }
func (c constant) Mean() time.Duration             { return time.Duration(c) }

type exponential struct{ mean float64 }

func (e exponential) Sample(r *rand.Rand) time.Duration { return dur(r.ExpFloat64() * e.mean) }
func (e exponential) Mean() time.Duration               { return dur(e.mean) }

type lognormal struct{ mu, sigma float64 }

func (l lognormal) Sample(r *rand.Rand) time.Duration {
	return dur(math.Exp(l.mu + l.sigma*r.NormFloat64()))
}
func (l lognormal) Mean() time.Duration {
	return dur(distuv.LogNormal{Mu: l.mu, Sigma: l.sigma}.Mean())
}

type gamma struct{ shape, rate float64 }

func (g gamma) Sample(r *rand.Rand) time.Duration {
	return dur(distuv.Gamma{Alpha: g.shape, Beta: g.rate, Src: r}.Rand())
}
func (g gamma) Mean() time.Duration { return dur(g.shape / g.rate) }

type weibull struct{ k, lambda float64 }

func (w weibull) Sample(r *rand.Rand) time.Duration {
	return dur(distuv.Weibull{K: w.k, Lambda: w.lambda, Src: r}.Rand())
}
func (w weibull) Mean() time.Duration { return dur(distuv.Weibull{K: w.k, Lambda: w.lambda}.Mean()) }

type pareto struct{ xm, alpha float64 }

func (p pareto) Sample(r *rand.Rand) time.Duration {
	return dur(distuv.Pareto{Xm: p.xm, Alpha: p.alpha, Src: r}.Rand())
}
func (p pareto) Mean() time.Duration { return dur(p.alpha * p.xm / (p.alpha - 1)) }

type uniform struct{ lo, hi time.Duration }

func (u uniform) Sample(r *rand.Rand) time.Duration {
	return u.lo + time.Duration(r.Uint64N(uint64(u.hi-u.lo)+1)) // as models.uniform: hi − lo + 1 ≤ 2⁶³
}
func (u uniform) Mean() time.Duration { return u.lo + (u.hi-u.lo)/2 }

// empirical interpolates linearly between quantile points (or between the
// order statistics of a sample).
type empirical struct {
	p []float64
	v []float64
}

func newEmpirical(s Spec) (Latency, error) {
	var e empirical
	switch {
	case len(s.Samples) > 0 && len(s.Quantiles) > 0:
		return nil, fmt.Errorf("%w: empirical takes quantiles or samples, not both", ErrSpec)
	case len(s.Samples) > 0:
		xs := slices.Clone(s.Samples)
		slices.Sort(xs)
		if xs[0] < 0 {
			return nil, fmt.Errorf("%w: empirical sample %v is negative", ErrSpec, xs[0])
		}
		n := len(xs)
		for i, x := range xs {
			p := 0.0
			if n > 1 {
				p = float64(i) / float64(n-1)
			}
			e.p = append(e.p, p)
			e.v = append(e.v, float64(x))
		}
		if n == 1 {
			e.p, e.v = []float64{0, 1}, []float64{float64(xs[0]), float64(xs[0])}
		}
	case len(s.Quantiles) >= 2:
		q := slices.Clone(s.Quantiles)
		sort.SliceStable(q, func(i, j int) bool { return q[i].P < q[j].P })
		if q[0].P != 0 || q[len(q)-1].P != 1 {
			return nil, fmt.Errorf("%w: empirical quantiles must start at p = 0 and end at p = 1", ErrSpec)
		}
		for i, pt := range q {
			if pt.Value < 0 || (i > 0 && (pt.Value < q[i-1].Value || pt.P == q[i-1].P)) {
				return nil, fmt.Errorf("%w: empirical quantiles must have distinct p and non-decreasing, non-negative values", ErrSpec)
			}
			e.p = append(e.p, pt.P)
			e.v = append(e.v, float64(pt.Value))
		}
	default:
		return nil, fmt.Errorf("%w: empirical needs at least two quantiles (p = 0 and p = 1) or a samples file", ErrSpec)
	}
	return e, nil
}

func (e empirical) at(u float64) float64 {
	i := sort.SearchFloat64s(e.p, u)
	if i == 0 {
		return e.v[0]
	}
	if i >= len(e.p) {
		return e.v[len(e.v)-1]
	}
	f := (u - e.p[i-1]) / (e.p[i] - e.p[i-1])
	return e.v[i-1] + f*(e.v[i]-e.v[i-1])
}

func (e empirical) Sample(r *rand.Rand) time.Duration { return dur(e.at(r.Float64())) }

func (e empirical) Mean() time.Duration {
	var m float64
	for i := 1; i < len(e.p); i++ {
		m += (e.p[i] - e.p[i-1]) * (e.v[i] + e.v[i-1]) / 2
	}
	return dur(m)
}

type mixture struct {
	cum   []float64
	parts []Latency
}

func newMixture(cs []Component) (Latency, error) {
	if len(cs) < 2 {
		return nil, fmt.Errorf("%w: a mixture needs at least two components", ErrSpec)
	}
	var m mixture
	var total float64
	for i, c := range cs {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
			return nil, fmt.Errorf("%w: mixture component %d needs a positive weight", ErrSpec, i)
		}
		if c.Dist.Dist == "mixture" {
			return nil, fmt.Errorf("%w: mixtures do not nest", ErrSpec)
		}
		l, err := NewLatency(c.Dist)
		if err != nil {
			return nil, fmt.Errorf("mixture component %d: %w", i, err)
		}
		total += c.Weight
		m.cum = append(m.cum, total)
		m.parts = append(m.parts, l)
	}
	for i := range m.cum {
		m.cum[i] /= total
	}
	return m, nil
}

func (m mixture) Sample(r *rand.Rand) time.Duration {
	u := r.Float64()
	i := sort.SearchFloat64s(m.cum, u)
	if i >= len(m.parts) {
		i = len(m.parts) - 1
	}
	return m.parts[i].Sample(r)
}

func (m mixture) Mean() time.Duration {
	var s, prev float64
	for i, p := range m.parts {
		s += (m.cum[i] - prev) * float64(p.Mean())
		prev = m.cum[i]
	}
	return dur(s)
}
