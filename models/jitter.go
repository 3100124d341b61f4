package models

import (
	"math/rand/v2"
	"time"
)

// JitterKind selects the distribution of a Jitter.
type JitterKind uint8

// Jitter distributions.
const (
	// Fixed always gives A.
	Fixed JitterKind = iota
	// Uniform draws uniformly from [A, B], nanosecond-exact.
	Uniform
	// Exponential draws from an exponential distribution of mean A.
	Exponential
)

// Jitter is a random duration: a pause after a 429 without Retry-After, a
// per-caller resume offset, a scheduling lag. The zero Jitter is always 0.
type Jitter struct {
	Kind JitterKind
	A, B time.Duration
	// Text is the jitter as a scenario wrote it ("1ms", "uniform(0s,2ms)").
	Text string
}

// MarshalText renders the jitter as written.
func (j Jitter) MarshalText() ([]byte, error) { return []byte(j.Text), nil }

// IsZero reports whether the jitter is always zero.
func (j Jitter) IsZero() bool { return j.Kind == Fixed && j.A == 0 }

// Sample draws one duration from r.
func (j Jitter) Sample(r *rand.Rand) time.Duration {
	switch j.Kind {
	case Uniform:
		return uniform(r, j.A, j.B)
	case Exponential:
		return time.Duration(r.ExpFloat64() * float64(j.A))
	}
	return j.A
}

// uniform draws uniformly from [lo, hi], nanosecond-exact; lo when hi ≤ lo.
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Uint64N(uint64(hi-lo)+1)) // + 1 overflows no uint64: hi − lo < 2⁶³
}
