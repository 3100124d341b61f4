package models

import (
	"time"

	"github.com/limitsim/limitsim/clock"
)

// waiter is one parked acquisition.
type waiter struct {
	n   int64
	h   clock.Handler
	arg uint64
}

// Line is a FIFO waiting line over a Core: the shape of asyncio.Semaphore
// (FIFO, no barging past waiters) and of a FIFO token bucket. Only the head
// of the line holds a timer, set for the instant its Core says it is ready;
// a release (for a ReleaseCore) grants every head that then fits. Waiters
// are served strictly in order: a large request at the head holds back
// smaller ones behind it.
type Line struct {
	// core, sem and the count of waiters first: an acquisition granted at
	// once reads only these, and in a bucketLine they share the bucket's
	// cache line.
	core    Core
	sem     *Semaphore // core, if a semaphore: called directly, not through the interface
	q       fifo[waiter]
	rel     ReleaseCore // core, if it releases
	sched   clock.Scheduler
	timer   clock.Timer
	timerAt time.Duration
	bound   Bound // most waiters allowed
}

var _ Releaser = (*Line)(nil)

// NewLine puts a FIFO waiting line in front of core. maxWaiting bounds the
// line: an acquisition that would exceed it gets Full (AtMost(0) never
// waits; Unbounded never refuses).
func NewLine(core Core, sched clock.Scheduler, maxWaiting Bound) *Line {
	l := &Line{core: core, sched: sched, bound: maxWaiting}
	l.typed()
	return l
}

// typed notes whether core releases, and whether it is a semaphore (the
// most common core, called directly).
func (l *Line) typed() {
	l.rel, _ = l.core.(ReleaseCore)
	l.sem, _ = l.core.(*Semaphore)
}

// bucketLine is a Line over a token bucket held in the same object, the
// bucket first: reading or taking from the bucket through the line touches
// one object rather than two. With thousands of buckets (one per tenant or
// host), each read from a different one, that halves the memory accesses.
type bucketLine struct {
	b TokenBucket
	Line
	// To 192 bytes, an allocation size class that is a multiple of 64:
	// each bucketLine then starts a cache line, and the bucket, the core
	// and the count of waiters (the first 64 bytes) share it.
	_ [8]byte
}

// newBucketLine returns the Line of a bucketLine over a copy of b.
func newBucketLine(b TokenBucket, sched clock.Scheduler, maxWaiting Bound) *Line {
	bl := &bucketLine{b: b}
	bl.Line = Line{core: &bl.b, sched: sched, bound: maxWaiting}
	bl.typed()
	return &bl.Line
}

// Retune re-arms the head's wake-up after the core's state changed other
// than by this line (a bucket's rate set by an adaptive controller).
func (l *Line) Retune(now time.Duration) { l.dispatch(now) }

// Settle replaces took units taken at since by real units at now (see
// Charger.SettleAt) and serves the waiters that then fit: a reservation
// reconciled with the real cost. It reports false, and does nothing, if
// the core cannot be charged after the fact.
func (l *Line) Settle(now, since time.Duration, took, real int64) bool {
	c, ok := l.core.(Charger)
	if !ok {
		return false
	}
	if took != real {
		c.SettleAt(now, since, took, real)
		l.dispatch(now)
	}
	return true
}

// Waiting returns the number of parked acquisitions.
func (l *Line) Waiting() int { return l.q.live }

// Usage returns the core's usage at now.
func (l *Line) Usage(now time.Duration) float64 { return l.core.Usage(now) }

// Acquire takes n units at once if nobody is waiting and the core allows,
// and otherwise joins the end of the line.
func (l *Line) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n != 1 && (n > l.core.Max() || n < 1) { // one unit always fits: Max is at least 1
		return 0, TooLarge
	}
	if l.q.live == 0 {
		// A semaphore is called directly; other cores through the interface.
		if s := l.sem; s != nil && s.TakeAt(now, n) || s == nil && l.core.TakeAt(now, n) {
			return 0, Granted
		}
	}
	if !l.bound.Admits(l.q.live) {
		return 0, Full
	}
	t := l.q.push(waiter{n: n, h: h, arg: arg})
	if l.q.live == 1 {
		l.dispatch(now)
	}
	return t, Parked
}

// Cancel removes a parked waiter. If it was the head, the next waiter
// becomes the head and is served if it now fits.
func (l *Line) Cancel(now time.Duration, t Ticket) bool {
	head, ok := l.q.cancel(t)
	if !ok {
		return false
	}
	if head {
		l.dispatch(now)
	}
	return true
}

// Release returns n units to a releasing core and grants the waiters that
// now fit. It is a no-op for cores whose units do not come back.
func (l *Line) Release(now time.Duration, n int64) {
	switch {
	case l.sem != nil:
		l.sem.ReleaseAt(now, n)
	case l.rel != nil:
		l.rel.ReleaseAt(now, n)
	default:
		return
	}
	l.dispatch(now)
}

// dispatch grants heads while the core allows, then arms the head's timer.
func (l *Line) dispatch(now time.Duration) {
	for {
		w, _ := l.q.front()
		if w == nil {
			l.disarm()
			return
		}
		if s := l.sem; s != nil && s.TakeAt(now, w.n) || s == nil && l.core.TakeAt(now, w.n) {
			l.sched.Post(now, w.h, w.arg)
			l.q.pop()
			continue
		}
		if l.sem != nil { // held permits: only a release makes room
			l.disarm()
			return
		}
		at, ok := l.core.ReadyAt(now, w.n)
		if !ok {
			l.disarm()
			return
		}
		if at <= now { // a core broke its promise; never spin at one instant
			at = now + 1
		}
		if !l.timer.IsZero() && l.timerAt == at {
			return
		}
		l.disarm()
		l.timer, l.timerAt = l.sched.At(at, (*lineWake)(l), 0), at
		return
	}
}

func (l *Line) disarm() {
	if !l.timer.IsZero() {
		l.sched.Cancel(l.timer)
		l.timer = clock.Timer{}
	}
}

// lineWake is the head-of-line timer's handler.
type lineWake Line

func (w *lineWake) Fire(now time.Duration, _ uint64) {
	l := (*Line)(w)
	l.timer = clock.Timer{}
	l.dispatch(now)
}
