package retry

import (
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/models"
)

// Kind is the shape of the back-off.
type Kind uint8

// Back-off shapes.
const (
	// None retries at once.
	None Kind = iota
	// Constant waits Base before every retry.
	Constant
	// Exponential waits Base before the first retry, doubling up to Cap.
	Exponential
)

// Jitter randomises a back-off delay d.
type Jitter uint8

// Jitters.
const (
	// NoJitter waits d exactly.
	NoJitter Jitter = iota
	// FullJitter waits uniformly in [0, d].
	FullJitter
	// EqualJitter waits d/2 plus uniformly [0, d/2].
	EqualJitter
	// DecorrelatedJitter waits uniformly in [Base, 3 × the previous
	// delay], capped at Cap.
	DecorrelatedJitter
)

// Backoff computes retry delays. The zero Backoff retries at once.
type Backoff struct {
	Kind   Kind
	Base   time.Duration
	Cap    time.Duration
	Jitter Jitter
}

// Delay returns the wait before retry number attempt (1 for the first
// retry); prev is the previous delay (for decorrelated jitter).
func (b Backoff) Delay(attempt int, prev time.Duration, r *rand.Rand) time.Duration {
	var d time.Duration
	switch b.Kind {
	case None:
		return 0
	case Constant:
		d = b.Base
	case Exponential:
		d = b.Base
		for i := 1; i < attempt && d < b.Cap; i++ {
			d *= 2
		}
		d = min(d, b.Cap)
	}
	switch b.Jitter {
	case FullJitter:
		return uniform(r, 0, d)
	case EqualJitter:
		return d/2 + uniform(r, 0, d-d/2)
	case DecorrelatedJitter:
		// The first retry has no previous delay: it counts as Base.
		hi := min(b.Cap, 3*max(b.Base, prev))
		return uniform(r, b.Base, hi)
	}
	return d
}

// uniform draws uniformly from [lo, hi]: the same draw as a uniform jitter.
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return models.Jitter{Kind: models.Uniform, A: lo, B: hi}.Sample(r)
}
