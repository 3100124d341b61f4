package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Exponential is a memoryless latency of the given mean.
type Exponential struct {
	// Average is the mean (the key mean).
	Average time.Duration
}

// Sample draws one latency using r.
func (e Exponential) Sample(r *rand.Rand) time.Duration {
	return dur(r.ExpFloat64() * float64(e.Average))
}

// Mean returns the mean.
func (e Exponential) Mean() time.Duration { return dur(float64(e.Average)) }

// Validate refuses a mean that is not positive.
func (e Exponential) Validate() error {
	if e.Average <= 0 {
		return fmt.Errorf("%w: %s mean must be positive", ErrSpec, Name(e))
	}
	return nil
}

// Keys are mean.
func (Exponential) Keys(bool) []string { return []string{"mean"} }

// Decode reads mean.
func (Exponential) Decode(r Reader) Dist {
	e := Exponential{Average: positive(r, "mean")}
	r.Done("dist", "mean")
	return e
}

// Encode writes mean.
func (e Exponential) Encode(enc Encoder) []string { return []string{"mean = " + enc.Value(e.Average)} }

// fitSamples fits by maximum likelihood: the mean.
func (Exponential) fitSamples(s *sampleStats) Fit {
	ex := distuv.Exponential{Rate: 1 / s.mean}
	return Fit{Dist: Exponential{Average: secondsToDuration(s.mean)}, cdf: ex.CDF, q: ex.Quantile}
}

// fitQuantiles fits the log quantiles with the unit exponential's, offset.
func (Exponential) fitQuantiles(q *quantileStats) Fit {
	mean := math.Exp(q.offset(q.e))
	ex := distuv.Exponential{Rate: 1 / mean}
	return Fit{Dist: Exponential{Average: secondsToDuration(mean)}, cdf: ex.CDF, q: ex.Quantile}
}
