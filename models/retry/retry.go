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
	// Exponential waits Base before the first retry, multiplied by
	// Multiplier (2 when zero) before each next one, up to Cap.
	Exponential
	// AWS is the AWS SDKs' exponential back-off with full jitter
	// (aws-sdk-go-v2 aws/retry/jitter_backoff.go): before retry n it waits
	// uniformly in [0, Base·2ⁿ) while Base·2ⁿ ≤ Cap, and Cap itself after
	// (n > ⌊log₂(Cap/Base)⌋). With Base 1 s and Cap 20 s: [0, 2 s) before
	// the first retry, [0, 4 s), [0, 8 s), [0, 16 s), then 20 s. Jitter
	// does not apply.
	AWS
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
	// Multiplier is the growth of an Exponential back-off from one retry
	// to the next (gRPC's backoffMultiplier); 0 doubles.
	Multiplier float64
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
		d = b.exponential(attempt)
	case AWS:
		return b.aws(attempt, r)
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

// exponential is Base × Multiplier^(attempt−1), capped at Cap.
func (b Backoff) exponential(attempt int) time.Duration {
	if b.Multiplier == 0 || b.Multiplier == 2 {
		d := b.Base
		for i := 1; i < attempt && d < b.Cap; i++ {
			d *= 2
		}
		return min(d, b.Cap)
	}
	d := float64(b.Base)
	for i := 1; i < attempt && d < float64(b.Cap); i++ {
		d *= b.Multiplier
	}
	return time.Duration(min(d, float64(b.Cap)))
}

// aws is the AWS SDKs' back-off before retry number attempt.
func (b Backoff) aws(attempt int, r *rand.Rand) time.Duration {
	d := b.Base
	for range attempt {
		if d > b.Cap/2 {
			return b.Cap // past ⌊log₂(Cap/Base)⌋ doublings: the cap, unjittered
		}
		d *= 2
	}
	return time.Duration(r.Float64() * float64(d))
}

// uniform draws uniformly from [lo, hi]: the same draw as a uniform jitter.
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return models.Jitter{Kind: models.Uniform, A: lo, B: hi}.Sample(r)
}
