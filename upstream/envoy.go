package upstream

import (
	"fmt"
	"time"

	"github.com/limitsim/limitsim/models"
)

// localRateLimit is Envoy's local rate limit token bucket as its
// timer-driven LocalRateLimiterImpl keeps it: max_tokens at the start,
// and every fill_interval from the start (a timer, not a continuous
// refill) tokens_per_fill more, never above max_tokens. A request takes
// one token or is refused. A request at the very instant of a fill finds
// the fill done. (Envoy replaced this bucket in 2024 with one refilled
// continuously on access: a models.TokenBucket of rate tokens_per_fill ÷
// fill_interval and burst max_tokens.)
type localRateLimit struct {
	max, perFill int64
	interval     time.Duration
	tokens       int64
	filled       time.Duration // the fill tokens are counted after
}

var (
	_ models.Core     = (*localRateLimit)(nil)
	_ models.Resetter = (*localRateLimit)(nil)
)

// newLocalRateLimit builds q's bucket.
func newLocalRateLimit(q Quota) (*localRateLimit, error) {
	per := q.TokensPerFill
	if per == 0 {
		per = 1
	}
	switch {
	case q.MaxTokens < 1:
		return nil, fmt.Errorf("%w: max_tokens %d: at least 1", ErrQuota, q.MaxTokens)
	case per < 1:
		return nil, fmt.Errorf("%w: tokens_per_fill %d: at least 1", ErrQuota, per)
	case q.FillInterval <= 0:
		return nil, fmt.Errorf("%w: fill_interval %v: greater than 0", ErrQuota, q.FillInterval)
	}
	return &localRateLimit{max: q.MaxTokens, perFill: per, interval: q.FillInterval, tokens: q.MaxTokens}, nil
}

// fill adds the fills due by now.
func (b *localRateLimit) fill(now time.Duration) {
	if now < b.filled+b.interval {
		return
	}
	last := now - now%b.interval
	fills := int64((last - b.filled) / b.interval)
	if fills >= (b.max-b.tokens)/b.perFill+1 {
		b.tokens = b.max
	} else {
		b.tokens = min(b.max, b.tokens+fills*b.perFill)
	}
	b.filled = last
}

// TakeAt takes n tokens at now if the bucket holds them.
func (b *localRateLimit) TakeAt(now time.Duration, n int64) bool {
	b.fill(now)
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

// ReadyAt returns the fill at which the bucket holds n tokens; never, for
// more than max_tokens.
func (b *localRateLimit) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	b.fill(now)
	switch {
	case b.tokens >= n:
		return now, true
	case n > b.max:
		return 0, false
	}
	return b.after((n - b.tokens + b.perFill - 1) / b.perFill), true
}

// after is the instant of the fills-th fill from the last one.
func (b *localRateLimit) after(fills int64) time.Duration {
	return b.filled + time.Duration(fills)*b.interval
}

// Max is max_tokens.
func (b *localRateLimit) Max() int64 { return b.max }

// Usage is the share of max_tokens taken.
func (b *localRateLimit) Usage(now time.Duration) float64 {
	b.fill(now)
	return 1 - float64(b.tokens)/float64(b.max)
}

// ResetAt is the fill that makes the bucket full.
func (b *localRateLimit) ResetAt(now time.Duration) time.Duration {
	b.fill(now)
	if b.tokens == b.max {
		return now
	}
	return b.after((b.max - b.tokens + b.perFill - 1) / b.perFill)
}
