package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Weibull is a latency of the given scale and shape.
type Weibull struct {
	Scale time.Duration
	Shape float64
}

func (w Weibull) dist() distuv.Weibull { return distuv.Weibull{K: w.Shape, Lambda: float64(w.Scale)} }

// Sample draws one latency using r.
func (w Weibull) Sample(r *rand.Rand) time.Duration {
	d := w.dist()
	d.Src = r
	return dur(d.Rand())
}

// Mean returns the mean.
func (w Weibull) Mean() time.Duration { return dur(w.dist().Mean()) }

// Validate refuses a scale or shape that is not positive.
func (w Weibull) Validate() error {
	if w.Scale <= 0 || !(w.Shape > 0) || math.IsInf(w.Shape, 0) {
		return fmt.Errorf("%w: %s needs a positive scale and shape", ErrSpec, Name(w))
	}
	return nil
}

// Keys are scale and shape.
func (Weibull) Keys(bool) []string { return []string{"scale", "shape"} }

// Decode reads scale and shape.
func (Weibull) Decode(r Reader) Dist {
	w := Weibull{Scale: positive(r, "scale")}
	if r.Required("shape") {
		w.Shape = r.Float("shape", 1, 0, true)
	}
	r.Done("dist", "scale", "shape")
	return w
}

// Encode writes scale and shape.
func (w Weibull) Encode(e Encoder) []string {
	return []string{"scale = " + e.Value(w.Scale), "shape = " + number(w.Shape)}
}

// fitSamples fits by maximum likelihood: bisection on the shape k of
// Σ x^k ln x ÷ Σ x^k − 1/k − mean(ln x) = 0 (increasing in k), on
// samples scaled by their mean so that x^k stays finite. The scaled
// samples and their logs are worked out once, not at every step of the
// bisection (the same values, so the same sums).
func (Weibull) fitSamples(s *sampleStats) Fit {
	xs, mean := s.xs, s.mean
	scaled, logs := make([]float64, len(xs)), make([]float64, len(xs))
	for i, x := range xs {
		scaled[i] = x / mean
		logs[i] = math.Log(scaled[i])
	}
	f := func(k float64) float64 {
		var a, b float64
		for i, x := range scaled {
			v := math.Pow(x, k)
			a += v * logs[i]
			b += v
		}
		return a/b - 1/k - (s.meanLog - math.Log(mean))
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
	wk := math.Sqrt(lo * hi)
	var sk float64
	for _, x := range scaled {
		sk += math.Pow(x, wk)
	}
	wb := distuv.Weibull{K: wk, Lambda: mean * math.Pow(sk/s.n, 1/wk)}
	return Fit{Dist: Weibull{Scale: secondsToDuration(wb.Lambda), Shape: wk}, cdf: wb.CDF, q: wb.Quantile}
}

// fitQuantiles fits the log quantiles, a line in the log of the unit
// exponential's.
func (Weibull) fitQuantiles(q *quantileStats) Fit {
	a, b := q.line(q.e)
	wb := distuv.Weibull{K: 1 / b, Lambda: math.Exp(a)}
	return Fit{Dist: Weibull{Scale: secondsToDuration(wb.Lambda), Shape: wb.K}, cdf: wb.CDF, q: wb.Quantile}
}
