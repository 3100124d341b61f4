package models

import (
	"fmt"
	"math"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// Adaptive is a limiter whose limit follows the upstream's answers.
type Adaptive interface {
	Limiter
	// Observe tells the limiter how an attempt it admitted was answered:
	// throttled for a 429, after rtt.
	Observe(now time.Duration, throttled bool, rtt time.Duration)
	// Limit returns the limit in force at now (requests per second for a
	// rate limiter).
	Limit(now time.Duration) float64
}

// AIMDConfig configures an AIMD rate limiter.
type AIMDConfig struct {
	Initial, Min, Max float64       // requests per second
	Increase          float64       // added per Interval without a 429, requests per second
	Decrease          float64       // the rate is multiplied by it on a 429, in (0, 1)
	Interval          time.Duration // of additive increase, and the least time between two decreases
	Burst             float64       // the bucket's capacity
	MaxWaiting        Bound
}

// AIMD is a token-bucket rate limiter driven by 429s, the way TCP drives
// its window: each 429 multiplies the rate by Decrease (at most once per
// Interval, so one burst of 429s from requests already in flight counts
// once), and every Interval without a 429 adds Increase, within [Min,
// Max]. Waiters queue FIFO in front of the bucket. Increases are applied
// lazily, when the limiter is next used or read, so an idle limiter costs
// nothing.
type AIMD struct {
	*Line
	bucket *TokenBucket
	aimdRule
}

// aimdRule is the additive-increase, multiplicative-decrease rule both AIMD
// limiters follow; apply puts a new limit in force.
type aimdRule struct {
	c            AIMDConfig
	limit        float64
	since        time.Duration // start of the current increase interval
	lastDecrease time.Duration
	decreased    bool
	apply        func(now time.Duration, limit float64)
}

// grow applies the additive increases due by now, applied lazily so an
// idle limiter costs nothing.
func (a *aimdRule) grow(now time.Duration) {
	if now < a.since {
		return
	}
	k := int64((now - a.since) / a.c.Interval)
	if k == 0 {
		return
	}
	a.since += time.Duration(k) * a.c.Interval
	a.set(now, math.Min(a.c.Max, a.limit+float64(k)*a.c.Increase))
}

func (a *aimdRule) set(now time.Duration, limit float64) {
	if limit == a.limit {
		return
	}
	a.limit = limit
	a.apply(now, limit)
}

// Observe applies a 429 (a multiplicative decrease) or lets the increases
// due so far apply.
func (a *aimdRule) Observe(now time.Duration, throttled bool, _ time.Duration) {
	a.grow(now)
	if !throttled {
		return
	}
	a.since = now // an interval with a 429 earns no increase
	if a.decreased && now-a.lastDecrease < a.c.Interval {
		return // the same congestion, reported by requests already in flight
	}
	a.decreased, a.lastDecrease = true, now
	a.set(now, math.Max(a.c.Min, a.limit*a.c.Decrease))
}

var _ Adaptive = (*AIMD)(nil)

// NewAIMD returns an AIMD limiter as c describes, starting at Initial.
func NewAIMD(c AIMDConfig, sched clock.Scheduler) (*AIMD, error) {
	switch {
	case !(c.Min > 0) || !(c.Max >= c.Min) || math.IsInf(c.Max, 0):
		return nil, fmt.Errorf("%w: aimd needs 0 < min ≤ max, got min %v, max %v", ErrConfig, c.Min, c.Max)
	case c.Initial < c.Min || c.Initial > c.Max:
		return nil, fmt.Errorf("%w: aimd initial %v must be between min %v and max %v", ErrConfig, c.Initial, c.Min, c.Max)
	case !(c.Decrease > 0 && c.Decrease < 1):
		return nil, fmt.Errorf("%w: aimd decrease %v must be between 0 and 1", ErrConfig, c.Decrease)
	case !(c.Increase >= 0) || math.IsInf(c.Increase, 0):
		return nil, fmt.Errorf("%w: aimd increase %v must be a finite number ≥ 0", ErrConfig, c.Increase)
	case c.Interval <= 0:
		return nil, fmt.Errorf("%w: aimd interval must be positive, got %v", ErrConfig, c.Interval)
	}
	b, err := NewTokenBucket(TokenBucketConfig{Rate: c.Initial, Burst: c.Burst, InitialFill: 1})
	if err != nil {
		return nil, err
	}
	a := &AIMD{Line: NewLine(b, sched, c.MaxWaiting), bucket: b}
	a.aimdRule = aimdRule{c: c, limit: c.Initial, apply: func(now time.Duration, rate float64) {
		b.SetRateAt(now, rate)
		a.Retune(now)
	}}
	return a, nil
}

// Limit returns the rate in force at now.
func (a *AIMD) Limit(now time.Duration) float64 {
	a.grow(now)
	return a.limit
}

// Acquire applies the increases due, then acquires from the bucket's line.
func (a *AIMD) Acquire(now time.Duration, n int64, deadline time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	a.grow(now)
	return a.Line.Acquire(now, n, deadline, h, arg)
}

// AIMDConcurrency is a concurrency limit driven by 429s: permits × Decrease
// on a 429 (at most once per Interval), + Increase permits per Interval
// without one, within [Min, Max]. Waiters queue FIFO for permits.
type AIMDConcurrency struct {
	*Line
	sem *Semaphore
	aimdRule
}

var _ Adaptive = (*AIMDConcurrency)(nil)

// NewAIMDConcurrency returns the limit as c describes (Initial, Min and Max
// in permits, Increase in permits per Interval).
func NewAIMDConcurrency(c AIMDConfig, sched clock.Scheduler) (*AIMDConcurrency, error) {
	if !(c.Min >= 1) || c.Max < c.Min || c.Initial < c.Min || c.Initial > c.Max || math.IsInf(c.Max, 0) {
		return nil, fmt.Errorf("%w: aimd_concurrency needs 1 ≤ min ≤ initial ≤ max, got %v, %v, %v", ErrConfig, c.Min, c.Initial, c.Max)
	}
	if !(c.Decrease > 0 && c.Decrease < 1) || !(c.Increase >= 0) || c.Interval <= 0 {
		return nil, fmt.Errorf("%w: aimd_concurrency needs 0 < decrease < 1, increase ≥ 0 and a positive interval", ErrConfig)
	}
	sem, err := NewSemaphore(int64(c.Initial))
	if err != nil {
		return nil, err
	}
	a := &AIMDConcurrency{Line: NewLine(sem, sched, c.MaxWaiting), sem: sem}
	a.aimdRule = aimdRule{c: c, limit: c.Initial, apply: func(now time.Duration, limit float64) {
		if n := int64(limit); n != sem.Max() {
			sem.SetPermits(n)
			a.Retune(now)
		}
	}}
	return a, nil
}

// Limit returns the permits in force at now.
func (a *AIMDConcurrency) Limit(now time.Duration) float64 {
	a.grow(now)
	return math.Floor(a.limit)
}

// Acquire applies the increases due, then acquires a permit.
func (a *AIMDConcurrency) Acquire(now time.Duration, n int64, deadline time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	a.grow(now)
	return a.Line.Acquire(now, n, deadline, h, arg)
}
