package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Pareto is a heavy-tailed latency: Scale is its minimum, Shape (above 1,
// for a finite mean) its tail index.
type Pareto struct {
	Scale time.Duration
	Shape float64
}

// Sample draws one latency using r.
func (p Pareto) Sample(r *rand.Rand) time.Duration {
	return dur(distuv.Pareto{Xm: float64(p.Scale), Alpha: p.Shape, Src: r}.Rand())
}

// Mean returns the mean.
func (p Pareto) Mean() time.Duration {
	return dur(p.Shape * float64(p.Scale) / (p.Shape - 1))
}

// Validate refuses a scale that is not positive or a shape of 1 or less.
func (p Pareto) Validate() error {
	if p.Scale <= 0 || !(p.Shape > 1) || math.IsInf(p.Shape, 0) {
		return fmt.Errorf("%w: %s needs a positive scale (minimum) and a shape above 1 (a finite mean)", ErrSpec, Name(p))
	}
	return nil
}

// Keys are scale and shape.
func (Pareto) Keys(bool) []string { return []string{"scale", "shape"} }

// Decode reads scale and shape.
func (Pareto) Decode(r Reader) Dist {
	p := Pareto{Scale: positive(r, "scale")}
	if r.Required("shape") {
		p.Shape = r.Float("shape", 2, 1, true)
	}
	r.Done("dist", "scale", "shape")
	return p
}

// Encode writes scale and shape.
func (p Pareto) Encode(e Encoder) []string {
	return []string{"scale = " + e.Value(p.Scale), "shape = " + number(p.Shape)}
}
