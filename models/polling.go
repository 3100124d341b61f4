package models

import (
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
)

// sleeper is a waiter of the polling bucket, asleep on its own timer.
type sleeper struct {
	n     int64
	h     clock.Handler
	arg   uint64
	timer clock.Timer
}

// PollingBucket is the article's asyncio TokenBucket exactly: there is
// no waiting line. A caller that finds too few tokens computes its deficit,
// sleeps deficit ÷ rate on a timer of its own, wakes and tries again; a
// caller arriving meanwhile may take the tokens first. Every waiter holds a
// timer, and the order of service is decided by who wakes first: with real
// event-loop lateness (Lag) that is a race, so it is not FIFO and long
// waits fall on whoever is unlucky.
type PollingBucket struct {
	core    *TokenBucket
	sched   clock.Scheduler
	lag     func() time.Duration
	waiters slab.Slab[sleeper]
}

var _ Limiter = (*PollingBucket)(nil)

// NewPollingBucket wraps core. lag, if not nil, returns how late each
// wake-up is (the event loop's timer lateness); it is drawn once per sleep.
func NewPollingBucket(core *TokenBucket, sched clock.Scheduler, lag func() time.Duration) *PollingBucket {
	return &PollingBucket{core: core, sched: sched, lag: lag}
}

// Acquire takes n tokens now if they are there (even if others sleep), or
// puts the caller to sleep for its deficit.
func (p *PollingBucket) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n < 1 || n > p.core.Max() {
		return 0, TooLarge
	}
	if p.core.TakeAt(now, n) {
		return 0, Granted
	}
	i, s, t := p.waiters.Alloc()
	s.n, s.h, s.arg = n, h, arg
	p.sleep(now, i)
	return Ticket(t), Parked
}

func (p *PollingBucket) sleep(now time.Duration, i uint32) {
	s := p.waiters.At(i)
	at, _ := p.core.ReadyAt(now, s.n)
	if at <= now {
		at = now + 1
	}
	if p.lag != nil {
		at = clock.Add(at, max(0, p.lag()))
	}
	s.timer = p.sched.At(at, (*pollWake)(p), uint64(i))
}

// pollWake is the handler of every sleeper's timer.
type pollWake PollingBucket

func (w *pollWake) Fire(now time.Duration, arg uint64) {
	p := (*PollingBucket)(w)
	i := uint32(arg)
	s := p.waiters.At(i)
	s.timer = clock.Timer{}
	if !p.core.TakeAt(now, s.n) {
		p.sleep(now, i)
		return
	}
	p.sched.Post(now, s.h, s.arg)
	p.waiters.Release(i)
}

// Cancel wakes a sleeper for good.
func (p *PollingBucket) Cancel(_ time.Duration, t Ticket) bool {
	i, s, ok := p.waiters.Lookup(slab.Handle(t))
	if !ok {
		return false
	}
	p.sched.Cancel(s.timer)
	p.waiters.Release(i)
	return true
}

// Waiting returns how many callers are asleep.
func (p *PollingBucket) Waiting() int { return p.waiters.Live() }

// Usage returns the bucket's usage.
func (p *PollingBucket) Usage(now time.Duration) float64 { return p.core.Usage(now) }
