package upstream

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Uniform is a latency spread evenly over [Min, Max].
type Uniform struct {
	Min, Max time.Duration
}

// Sample draws one latency using r.
func (u Uniform) Sample(r *rand.Rand) time.Duration {
	return u.Min + time.Duration(r.Uint64N(uint64(u.Max-u.Min)+1)) // as models.uniform: hi − lo + 1 ≤ 2⁶³
}

// Mean returns the middle of the range.
func (u Uniform) Mean() time.Duration { return u.Min + (u.Max-u.Min)/2 }

// Validate refuses a negative min or a max not above it.
func (u Uniform) Validate() error {
	if u.Min < 0 || u.Max <= u.Min {
		return fmt.Errorf("%w: %s needs 0 ≤ min < max", ErrSpec, Name(u))
	}
	return nil
}

// Keys are min and max.
func (Uniform) Keys(bool) []string { return []string{"min", "max"} }

// Decode reads min and max.
func (Uniform) Decode(r Reader) Dist {
	var u Uniform
	var okMin, okMax bool
	if _, ok := r.Count(); ok {
		okMin, okMax = r.Has("min"), r.Has("max")
		u.Min, u.Max = count(r, "min", -1), count(r, "max", -1)
		if u.Min < 0 && okMin {
			r.Problem(r.Key("min"), "must not be negative")
		}
	} else {
		okMin, okMax = r.Required("min"), r.Required("max")
		if okMin {
			u.Min = r.Duration("min", 0, 0, false)
		}
		if okMax {
			u.Max = r.Duration("max", time.Millisecond, 0, true)
		}
	}
	if okMin && okMax && u.Max <= u.Min && r.Intact(r.Key("min"), r.Key("max")) {
		r.Problem(r.Key("max"), "must be greater than min (%s)", valueText(r, u.Min))
	}
	r.Done("dist", "min", "max")
	return u
}

// Encode writes min and max.
func (u Uniform) Encode(e Encoder) []string {
	return []string{"min = " + e.Value(u.Min), "max = " + e.Value(u.Max)}
}
