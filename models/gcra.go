package models

import (
	"fmt"
	"math"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// GCRA is the generic cell rate algorithm (virtual scheduling), the form of
// rate limit many API gateways and Redis-based limiters use. Its whole state
// is one integer instant, the theoretical arrival time (TAT): a request of n
// conforms at t if TAT − t ≤ τ, and then moves TAT to max(TAT, t) + n·T.
//
// With emission interval T = 1/rate and tolerance τ = (burst − 1)·T it
// admits the same traffic as a token bucket of capacity burst, in integer
// arithmetic only. T is rounded up to whole nanoseconds, so the enforced
// rate is never above the configured one (the error is under 1 ns per
// request).
type GCRA struct {
	interval  time.Duration // T
	tolerance time.Duration // τ
	tat       time.Duration
	burst     int64
}

var _ Core = (*GCRA)(nil)

// GCRAConfig configures a GCRA core.
type GCRAConfig struct {
	Rate  float64       // requests per second, > 0
	Burst int64         // the most admitted at once, ≥ 1
	Start time.Duration // the first request may pass at this instant
}

// NewGCRA returns a GCRA core admitting c.Rate requests per second with
// bursts of up to c.Burst.
func NewGCRA(c GCRAConfig) (*GCRA, error) {
	rate, burst, start := c.Rate, c.Burst, c.Start
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: gcra rate %v must be a positive finite number", ErrConfig, rate)
	}
	if burst < 1 {
		return nil, fmt.Errorf("%w: gcra burst %d must be at least 1", ErrConfig, burst)
	}
	t := ceilDur(nsPerSec / rate)
	if t < 1 {
		t = 1
	}
	if burst-1 > int64(clock.Never/t) {
		return nil, fmt.Errorf("%w: gcra burst %d at rate %v overflows", ErrConfig, burst, rate)
	}
	return &GCRA{interval: t, tolerance: time.Duration(burst-1) * t, tat: start, burst: burst}, nil
}

// cost returns n·T, saturating.
func (g *GCRA) cost(n int64) time.Duration {
	if n > int64(clock.Never/g.interval) {
		return clock.Never
	}
	return time.Duration(n) * g.interval
}

// ReadyAt returns the first instant at which n requests conform.
func (g *GCRA) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if n > g.burst {
		return 0, false
	}
	// n conform at t when max(TAT, t) + n·T − t ≤ τ + T.
	at := clock.Add(g.tat, g.cost(n)-g.tolerance-g.interval)
	return max(at, now), true
}

// TakeAt admits n requests at now if they conform.
func (g *GCRA) TakeAt(now time.Duration, n int64) bool {
	if at, ok := g.ReadyAt(now, n); !ok || at > now {
		return false
	}
	g.tat = clock.Add(max(g.tat, now), g.cost(n))
	return true
}

// Max returns the burst.
func (g *GCRA) Max() int64 { return g.burst }

// Usage returns the share of the burst in use: (TAT − now) ÷ (burst·T).
func (g *GCRA) Usage(now time.Duration) float64 {
	ahead := g.tat - now
	if ahead <= 0 {
		return 0
	}
	return math.Min(1, float64(ahead)/float64(g.cost(g.burst)))
}

// charge takes n requests admitted elsewhere since the instant since,
// whether or not they conform: a store settling what an instance admitted
// from its copy. They are spread from since (time the store spent idle
// before since is not theirs to use), so TAT may run past the tolerance;
// the debt delays the next conforming request.
func (g *GCRA) charge(since time.Duration, n int64) {
	if n > 0 {
		g.tat = clock.Add(max(g.tat, since), g.cost(n))
	}
}
