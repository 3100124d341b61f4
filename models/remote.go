package models

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
)

// StoreConfig is the shared store a cluster-wide limiter lives in (Redis,
// as go-redis/redis_rate uses it).
type StoreConfig struct {
	// RTT is the round trip of one call to the store.
	RTT Jitter
	// Errors is the probability that a call fails.
	Errors float64
	// FailOpen admits the request when a call fails (fail open); otherwise
	// the call counts as a refusal and is retried (fail closed).
	FailOpen bool
	// ErrorBackoff is how long a caller waits before calling again after a
	// failed call that did not admit it.
	ErrorBackoff time.Duration
}

// Remote is a limit kept in a store shared by every client instance, the
// way go-redis/redis_rate keeps a GCRA in Redis: each acquisition is a
// call that takes a round trip; the store admits the request or answers
// how long until it would (RetryAfter), and the caller waits that long and
// calls again. A failed call admits the request (fail open) or counts as a
// refusal (fail closed). Callers are not queued: whoever calls when the
// limit allows wins.
type Remote struct {
	core           Core
	sched          clock.Scheduler
	rng            *rand.Rand
	c              StoreConfig
	calls          slab.Slab[remoteCall]
	calls0, errors int64 // calls made and calls failed, for the record
}

type remoteCall struct {
	n   int64
	h   clock.Handler
	arg uint64
	tmr clock.Timer
}

var _ Limiter = (*Remote)(nil)

// NewRemote keeps core in a store with the given round trip and failures.
func NewRemote(core Core, sched clock.Scheduler, rng *rand.Rand, c StoreConfig) (*Remote, error) {
	if !(c.Errors >= 0 && c.Errors <= 1) {
		return nil, fmt.Errorf("%w: store_errors %v must be a probability", ErrConfig, c.Errors)
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: a store needs a random stream", ErrConfig)
	}
	if c.ErrorBackoff <= 0 {
		c.ErrorBackoff = 100 * time.Millisecond
	}
	return &Remote{core: core, sched: sched, rng: rng, c: c}, nil
}

// Acquire sends the first call; the grant, if any, comes back as an event
// after at least one round trip.
func (r *Remote) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n > r.core.Max() || n < 1 {
		return 0, TooLarge
	}
	i, c, hd := r.calls.Alloc()
	c.n, c.h, c.arg = n, h, arg
	r.call(now, i)
	return Ticket(hd), Parked
}

// call sends one call to the store for call i; its answer arrives a round
// trip later.
func (r *Remote) call(now time.Duration, i uint32) {
	c := r.calls.At(i)
	c.tmr = r.sched.At(clock.Add(now, r.c.RTT.Sample(r.rng)), (*remoteAnswer)(r), uint64(r.calls.Handle(i)))
}

type remoteAnswer Remote

// Fire is the store's answer reaching the caller. The store decided at the
// midpoint of the round trip; the model decides at arrival, which is the
// same for the order of decisions.
func (h *remoteAnswer) Fire(now time.Duration, arg uint64) {
	r := (*Remote)(h)
	i, c, ok := r.calls.Lookup(slab.Handle(arg))
	if !ok {
		return
	}
	r.calls0++
	if r.c.Errors > 0 && r.rng.Float64() < r.c.Errors {
		r.errors++
		if r.c.FailOpen {
			r.grant(now, i)
			return
		}
		c.tmr = r.sched.At(clock.Add(now, r.c.ErrorBackoff), (*remoteRetry)(r), arg)
		return
	}
	if r.core.TakeAt(now, c.n) {
		r.grant(now, i)
		return
	}
	at, ok := r.core.ReadyAt(now, c.n)
	if !ok {
		at = clock.Add(now, r.c.ErrorBackoff)
	}
	c.tmr = r.sched.At(max(at, now+1), (*remoteRetry)(r), arg) // RetryAfter, then call again
}

type remoteRetry Remote

// Fire calls the store again after a RetryAfter (or an error's back-off).
func (h *remoteRetry) Fire(now time.Duration, arg uint64) {
	r := (*Remote)(h)
	if i, _, ok := r.calls.Lookup(slab.Handle(arg)); ok {
		r.call(now, i)
	}
}

func (r *Remote) grant(now time.Duration, i uint32) {
	c := r.calls.At(i)
	h, arg := c.h, c.arg
	r.calls.Release(i)
	h.Fire(now, arg)
}

// Cancel withdraws a caller between calls or with a call in flight.
func (r *Remote) Cancel(now time.Duration, t Ticket) bool {
	i, c, ok := r.calls.Lookup(slab.Handle(t))
	if !ok {
		return false
	}
	r.sched.Cancel(c.tmr)
	r.calls.Release(i)
	return true
}

// Waiting returns the callers not yet admitted.
func (r *Remote) Waiting() int { return r.calls.Live() }

// Usage returns the stored limit's usage at now.
func (r *Remote) Usage(now time.Duration) float64 { return r.core.Usage(now) }

// Calls returns the store calls made and how many failed.
func (r *Remote) Calls() (calls, failed int64) { return r.calls0, r.errors }
