package upstream

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// CountDists are the distribution families a count (a request's or a
// response's cost) may take, in docs order.
var CountDists = []string{"constant", "uniform", "exponential", "lognormal", "gamma", "empirical"}

// Count draws a whole number of units: a request's cost (the input tokens
// a client knows before it sends) or a response's (the output tokens known
// only when it completes). Its Spec reads the latency families' duration
// fields as counts: 1 ns is one unit.
type Count struct {
	d     Latency
	least int64
}

// NewCount builds the count s describes; every draw is at least least.
func NewCount(s Spec, least int64) (Count, error) {
	if !slices.Contains(CountDists, s.Dist) {
		return Count{}, fmt.Errorf("%w: a count takes dist %v, not %q", ErrSpec, CountDists, s.Dist)
	}
	if s.Dist == "empirical" && len(s.Samples) > 0 {
		return Count{}, fmt.Errorf("%w: a count's empirical distribution takes quantiles", ErrSpec)
	}
	d, err := NewLatency(s)
	if err != nil {
		return Count{}, err
	}
	return Count{d: d, least: least}, nil
}

// Sample draws one count using r.
func (c Count) Sample(r *rand.Rand) int64 { return max(c.least, int64(c.d.Sample(r))) }

// Mean returns the distribution's mean, before the floor at least.
func (c Count) Mean() float64 { return float64(c.d.Mean()) }

// Constant reports whether every draw is the same, and which (no random
// number is drawn for it).
func (c Count) Constant() (int64, bool) {
	if k, ok := c.d.(constant); ok {
		return max(c.least, int64(k)), true
	}
	return 0, false
}
