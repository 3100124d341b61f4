package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Gamma is a latency of the given mean and shape.
type Gamma struct {
	// Average is the mean (the key mean).
	Average time.Duration
	Shape   float64
}

// rate is the distribution's rate parameter, β.
func (g Gamma) rate() float64 { return g.Shape / float64(g.Average) }

// Sample draws one latency using r.
func (g Gamma) Sample(r *rand.Rand) time.Duration {
	return dur(distuv.Gamma{Alpha: g.Shape, Beta: g.rate(), Src: r}.Rand())
}

// Mean returns the mean.
func (g Gamma) Mean() time.Duration { return dur(g.Shape / g.rate()) }

// Validate refuses a mean or shape that is not positive.
func (g Gamma) Validate() error {
	if g.Average <= 0 || !(g.Shape > 0) || math.IsInf(g.Shape, 0) {
		return fmt.Errorf("%w: %s needs a positive mean and shape", ErrSpec, Name(g))
	}
	return nil
}

// Keys are mean and shape.
func (Gamma) Keys(bool) []string { return []string{"mean", "shape"} }

// Decode reads mean and shape.
func (Gamma) Decode(r Reader) Dist {
	g := Gamma{Average: positive(r, "mean")}
	if r.Required("shape") {
		g.Shape = r.Float("shape", 1, 0, true)
	}
	r.Done("dist", "mean", "shape")
	return g
}

// Encode writes mean and shape.
func (g Gamma) Encode(e Encoder) []string {
	return []string{"mean = " + e.Value(g.Average), "shape = " + number(g.Shape)}
}

// fitSamples fits by maximum likelihood: Minka's start for the shape,
// then Newton on ln k − ψ(k) = ln mean − mean(ln x).
func (Gamma) fitSamples(st *sampleStats) Fit {
	mean := st.mean
	s := math.Log(mean) - st.meanLog
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
	return Fit{Dist: Gamma{Average: secondsToDuration(mean), Shape: k}, cdf: ga.CDF, q: ga.Quantile}
}

// fitQuantiles fits the log quantiles: for a shape k the scale is the
// mean log ratio to the unit-scale quantiles; the shape is searched on a
// log grid, then refined.
func (Gamma) fitQuantiles(q *quantileStats) Fit {
	gammaAt := func(k float64) (distuv.Gamma, float64) {
		unit := distuv.Gamma{Alpha: k, Beta: 1}
		x := make([]float64, len(q.ps))
		for i, p := range q.ps {
			x[i] = math.Log(unit.Quantile(p))
		}
		a := q.offset(x)
		var sse float64
		for i := range x {
			d := a + x[i] - q.logQ[i]
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
	return Fit{Dist: Gamma{Average: secondsToDuration(ga.Alpha / ga.Beta), Shape: ga.Alpha}, cdf: ga.CDF, q: ga.Quantile}
}
