package upstream

import (
	"fmt"
	"math/rand/v2"
)

// Count draws a whole number of units: a request's cost (the input tokens
// a client knows before it sends) or a response's (the output tokens known
// only when it completes). Its Dist reads the latency families' durations
// as counts: 1 ns is one unit.
type Count struct {
	d     Latency
	least int64
}

// Countable reports whether a count may take d's family.
func Countable(d Dist) bool {
	f, ok := FamilyOf(d)
	return ok && f.Count > 0
}

// NewCount builds the count d describes; every draw is at least least.
func NewCount(d Dist, least int64) (Count, error) {
	if !Countable(d) {
		return Count{}, fmt.Errorf("%w: a count takes dist %v, not %q", ErrSpec, names(CountFamilies()), Name(d))
	}
	if c, ok := d.(interface{ validateCount() error }); ok {
		if err := c.validateCount(); err != nil {
			return Count{}, err
		}
	}
	l, err := NewLatency(d)
	if err != nil {
		return Count{}, err
	}
	return Count{d: l, least: least}, nil
}

// Sample draws one count using r.
func (c Count) Sample(r *rand.Rand) int64 { return max(c.least, int64(c.d.Sample(r))) }

// Mean returns the distribution's mean, before the floor at least.
func (c Count) Mean() float64 { return float64(c.d.Mean()) }

// Constant reports whether every draw is the same, and which (no random
// number is drawn for it).
func (c Count) Constant() (int64, bool) {
	if k, ok := c.d.(Constant); ok {
		return max(c.least, int64(k.Value)), true
	}
	return 0, false
}
