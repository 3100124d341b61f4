package upstream

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Constant is a latency that never varies.
type Constant struct {
	Value time.Duration
}

// Sample returns the value.
func (c Constant) Sample(*rand.Rand) time.Duration { return c.Value }

// Mean returns the value.
func (c Constant) Mean() time.Duration { return c.Value }

// Validate refuses a negative value.
func (c Constant) Validate() error {
	if c.Value < 0 {
		return fmt.Errorf("%w: %s value %v is negative", ErrSpec, Name(c), c.Value)
	}
	return nil
}

// Keys are value.
func (Constant) Keys(bool) []string { return []string{"value"} }

// Decode reads value: a duration, or a count of at least the count's least.
func (Constant) Decode(r Reader) Dist {
	var c Constant
	if r.Required("value") {
		if least, ok := r.Count(); ok {
			c.Value = time.Duration(r.Integer("value", least, least))
		} else {
			c.Value = r.Duration("value", 0, 0, false)
		}
	}
	r.Done("dist", "value")
	return c
}

// Encode writes value.
func (c Constant) Encode(e Encoder) []string { return []string{"value = " + e.Value(c.Value)} }
