package models

import (
	"time"

	"github.com/limitsim/limitsim/clock"
)

// lock states of a LockedBucket.
const (
	lockFree    = iota // nobody holds the lock
	lockHandoff        // released; the next waiter resumes after the handoff delay
	lockHeld           // the head of the line holds it
)

// LockedBucket is the article's TokenBucket with the classic bug: the
// sleep happens while holding its asyncio.Lock. Callers queue for the lock
// in FIFO order; the holder refills, takes its tokens or sleeps its deficit
// (plus the event loop's lateness) still holding the lock, and only then lets
// the next caller in. Every caller thus passes through a single server, and
// each hand-over of the lock costs one trip through the event loop (Handoff):
// throughput can never exceed one request per hand-over, whatever the rate.
type LockedBucket struct {
	core    *TokenBucket
	sched   clock.Scheduler
	lag     func() time.Duration
	handoff time.Duration
	q       fifo[waiter]
	state   uint8
	timer   clock.Timer
}

var _ Limiter = (*LockedBucket)(nil)

// NewLockedBucket wraps core. lag (may be nil) is each sleep's lateness;
// handoff is the delay between a release of the lock and the next waiter
// running (asyncio resumes it on a later loop iteration).
func NewLockedBucket(core *TokenBucket, sched clock.Scheduler, lag func() time.Duration, handoff time.Duration) *LockedBucket {
	return &LockedBucket{core: core, sched: sched, lag: lag, handoff: max(0, handoff)}
}

// Acquire queues for the lock; a caller that finds the lock free and the
// tokens there passes at once.
func (b *LockedBucket) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n < 1 || n > b.core.Max() {
		return 0, TooLarge
	}
	if b.state == lockFree && b.q.live == 0 && b.core.TakeAt(now, n) {
		return 0, Granted
	}
	t := b.q.push(waiter{n: n, h: h, arg: arg})
	if b.state == lockFree {
		b.state = lockHeld
		b.hold(now)
	}
	return t, Parked
}

// hold runs the holder (the head of the line): it takes its tokens or
// sleeps. Without a hand-over delay the next holder runs at once.
func (b *LockedBucket) hold(now time.Duration) {
	for {
		w, _ := b.q.front()
		if w == nil {
			b.state = lockFree
			return
		}
		if !b.core.TakeAt(now, w.n) {
			at, _ := b.core.ReadyAt(now, w.n)
			if at <= now {
				at = now + 1
			}
			if b.lag != nil {
				at = clock.Add(at, max(0, b.lag()))
			}
			b.timer = b.sched.At(at, (*lockedWake)(b), 0)
			return
		}
		b.sched.Post(now, w.h, w.arg)
		b.q.pop()
		if b.handoff > 0 || b.q.live == 0 {
			b.release(now)
			return
		}
	}
}

// release lets the next caller in after the hand-over delay.
func (b *LockedBucket) release(now time.Duration) {
	switch {
	case b.q.live == 0:
		b.state = lockFree
	case b.handoff == 0:
		b.state = lockHeld
		b.hold(now)
	default:
		b.state = lockHandoff
		b.timer = b.sched.At(now+b.handoff, (*lockedWake)(b), 0)
	}
}

// lockedWake ends a holder's sleep or a hand-over.
type lockedWake LockedBucket

func (w *lockedWake) Fire(now time.Duration, _ uint64) {
	b := (*LockedBucket)(w)
	b.timer = clock.Timer{}
	b.state = lockHeld
	b.hold(now)
}

// Cancel withdraws a caller. A holder cancelled in its sleep releases the
// lock, as asyncio's `async with lock` does when the task is cancelled.
func (b *LockedBucket) Cancel(now time.Duration, t Ticket) bool {
	head, ok := b.q.cancel(t)
	if !ok {
		return false
	}
	if head && b.state == lockHeld {
		b.sched.Cancel(b.timer)
		b.timer = clock.Timer{}
		b.release(now)
	}
	return true
}

// Waiting returns the callers in line, the sleeping holder included.
func (b *LockedBucket) Waiting() int { return b.q.live }

// Usage returns the bucket's usage.
func (b *LockedBucket) Usage(now time.Duration) float64 { return b.core.Usage(now) }
