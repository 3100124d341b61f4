package models

import (
	"fmt"

	"math"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// TokenBucket is a token bucket core: capacity tokens at most, refilled
// lazily at rate per second, and a weighted take of n tokens. It is the
// shape of the article's TokenBucket and of golang.org/x/time/rate, with
// the clock passed in.
//
// Tokens are float64; time is integer nanoseconds. ReadyAt and TakeAt derive
// the token level from the same (tokens, last) pair with the same arithmetic,
// so a wake-up at ReadyAt always finds its tokens.
type TokenBucket struct {
	perNs    float64 // tokens per nanosecond
	capacity float64
	tokens   float64
	last     time.Duration
}

var _ Charger = (*TokenBucket)(nil)

// TokenBucketConfig configures a token bucket.
type TokenBucketConfig struct {
	Rate  float64 // tokens per second, > 0
	Burst float64 // capacity, ≥ 1
	// InitialFill is the share of Burst held at Start, in [0, 1]: 1 starts
	// full, 0 empty (the article's advice for a rollout is to start it
	// partially filled).
	InitialFill float64
	Start       time.Duration
}

// NewTokenBucket returns a bucket as c describes.
func NewTokenBucket(c TokenBucketConfig) (*TokenBucket, error) {
	b, err := tokenBucket(c)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// tokenBucket is NewTokenBucket's bucket as a value, for a bucketLine to
// hold without a bucket of its own made first (one per tenant or host).
func tokenBucket(c TokenBucketConfig) (TokenBucket, error) {
	rate, capacity, fill, start := c.Rate, c.Burst, c.InitialFill, c.Start
	if !(rate > 0) || math.IsInf(rate, 0) {
		return TokenBucket{}, fmt.Errorf("%w: token bucket rate %v must be a positive finite number", ErrConfig, rate)
	}
	if !(capacity >= 1) || math.IsInf(capacity, 0) {
		return TokenBucket{}, fmt.Errorf("%w: token bucket capacity %v must be at least 1", ErrConfig, capacity)
	}
	if !(fill >= 0 && fill <= 1) {
		return TokenBucket{}, fmt.Errorf("%w: token bucket initial fill %v must be in [0, 1]", ErrConfig, fill)
	}
	return TokenBucket{perNs: rate / nsPerSec, capacity: capacity, tokens: fill * capacity, last: start}, nil
}

// TokensAt returns the token level at now without changing the bucket.
func (b *TokenBucket) TokensAt(now time.Duration) float64 {
	if now <= b.last {
		return b.tokens
	}
	// The explicit conversion forbids fusing into an FMA, so the result is
	// the same on every architecture.
	t := b.tokens + float64(float64(now-b.last)*b.perNs)
	if t > b.capacity { // not min: the level is never NaN, and this is one compare
		return b.capacity
	}
	return t
}

// ResetAt returns when the bucket is full again if nothing is taken.
func (b *TokenBucket) ResetAt(now time.Duration) time.Duration {
	missing := b.capacity - b.TokensAt(now)
	if missing <= 0 {
		return now
	}
	return clock.Add(now, ceilDur(missing/b.perNs))
}

// TakeAt takes n tokens if the bucket holds them at now.
func (b *TokenBucket) TakeAt(now time.Duration, n int64) bool {
	t := b.TokensAt(now)
	if t < float64(n) {
		return false
	}
	b.tokens = t - float64(n)
	if now > b.last {
		b.last = now
	}
	return true
}

// ChargeAt takes n tokens at now whatever the level: the level may fall
// below zero (a debt refilled at the rate before anything is admitted
// again).
func (b *TokenBucket) ChargeAt(now time.Duration, n int64) {
	t := b.TokensAt(now)
	b.tokens = min(t-float64(n), b.capacity)
	if now > b.last {
		b.last = now
	}
}

// SettleAt takes real − took tokens at now: a bucket's tokens come back at
// its rate whenever they were taken, so only the difference counts (a
// refund never fills it past its capacity).
func (b *TokenBucket) SettleAt(now, _ time.Duration, took, real int64) { b.ChargeAt(now, real-took) }

// ReadyAt returns when the bucket will hold n tokens.
func (b *TokenBucket) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	need := float64(n)
	if need > b.capacity {
		return 0, false
	}
	from := max(now, b.last)
	if b.TokensAt(from) >= need {
		return from, true
	}
	base := b.TokensAt(from)
	at := clock.Add(from, ceilDur((need-base)/b.perNs))
	for at < clock.Never && b.TokensAt(at) < need { // absorb float rounding: round up, never down
		at++
	}
	return at, true
}

// Max returns the capacity in whole tokens.
func (b *TokenBucket) Max() int64 { return int64(b.capacity) }

// Rate returns the refill rate in tokens per second.
func (b *TokenBucket) Rate() float64 { return b.perNs * nsPerSec }

// SetRateAt changes the refill rate from now on: the tokens accrued until
// now at the old rate are kept. A rate that is not a positive finite
// number is ignored. A Line over the bucket must be retuned (Line.Retune)
// for its head to wake at the new time.
func (b *TokenBucket) SetRateAt(now time.Duration, rate float64) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return
	}
	if now > b.last {
		b.tokens, b.last = b.TokensAt(now), now
	}
	b.perNs = rate / nsPerSec
}

// Usage returns 1 − tokens ÷ capacity at now (1 while in debt).
func (b *TokenBucket) Usage(now time.Duration) float64 {
	return min(1, 1-b.TokensAt(now)/b.capacity)
}
