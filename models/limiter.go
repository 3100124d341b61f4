package models

import (
	"errors"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// Errors returned by constructors.
var (
	ErrConfig = errors.New("models: invalid limiter configuration")
)

// Core is a limiter's decision rule with time passed in. Implementations are
// deterministic and do not schedule anything.
type Core interface {
	// TakeAt takes n units at now if the limit allows and reports whether it did.
	TakeAt(now time.Duration, n int64) bool
	// ReadyAt returns the earliest instant, not before now, at which
	// TakeAt(at, n) succeeds provided nothing else is taken meanwhile. ok is
	// false when the passage of time alone cannot make room (a semaphore
	// waits for a release). If ReadyAt returns now, TakeAt(now, n) succeeds:
	// waits are rounded up, never down.
	ReadyAt(now time.Duration, n int64) (at time.Duration, ok bool)
	// Max is the largest n a single acquisition may ask for; at least 1.
	Max() int64
	// Usage is the fraction of the limit in use at now, in [0, 1]: permits in
	// use ÷ permits, 1 − tokens ÷ capacity, starts in the window ÷ limit.
	Usage(now time.Duration) float64
}

// Resetter is a Core that can say when its limit is whole again — what a
// provider's X-RateLimit-Reset names: the end of a fixed window, the
// instant a token bucket is full.
type Resetter interface {
	// ResetAt returns that instant, not before now.
	ResetAt(now time.Duration) time.Duration
}

// Charger is a Core that can be charged after the fact, whether or not it
// has room: a provider charging a response's cost when it completes, or a
// client reconciling the estimate it reserved with the real cost. A charge
// beyond the room left puts the limit in debt: nothing more is admitted
// until the debt is paid off.
type Charger interface {
	Core
	// ChargeAt takes n ≥ 0 units at now without asking.
	ChargeAt(now time.Duration, n int64)
	// SettleAt replaces took units taken at since by real units at now: a
	// reservation made good, or its excess given back. What has already
	// left the limit (a window that ended since) is not given back again,
	// and nothing is given back beyond the limit's capacity.
	SettleAt(now, since time.Duration, took, real int64)
}

// ReleaseCore is a Core whose units come back: a semaphore's permits.
type ReleaseCore interface {
	Core
	// ReleaseAt returns n units.
	ReleaseAt(now time.Duration, n int64)
}

// Status is the immediate outcome of an acquisition.
type Status uint8

// Acquisition outcomes.
const (
	// Granted: the units were taken at once; no event will follow.
	Granted Status = iota
	// Parked: the caller waits; h.Fire(at, arg) will announce the grant
	// unless the caller cancels the ticket first.
	Parked
	// Full: the waiting line is at its bound; nothing was taken.
	Full
	// TooLarge: n exceeds what the limiter can ever grant at once.
	TooLarge
	// TooLate: the limiter knows it cannot grant before the deadline
	// (golang.org/x/time/rate's Wait fails this way at once).
	TooLate
	// Blocked: a producer waits for space in a full Queue (Queue.PutWait).
	Blocked
	// Shed: the limiter refused the request by its own policy (client-side
	// adaptive throttling), not for want of room.
	Shed
)

var statusNames = [...]string{"granted", "parked", "full", "too_large", "too_late", "blocked", "shed"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Ticket identifies a parked acquisition for Cancel.
type Ticket uint64

// Limiter is a limiter with a waiting line.
type Limiter interface {
	// Acquire asks for n units at now. When the result is Parked, the grant
	// arrives later as h.Fire(at, arg). deadline (clock.Never for none) lets
	// a limiter that can foresee its grant time refuse at once with TooLate;
	// enforcing the deadline remains the caller's job.
	Acquire(now time.Duration, n int64, deadline time.Duration, h clock.Handler, arg uint64) (Ticket, Status)
	// Cancel withdraws a parked acquisition. It returns true if the waiter
	// left the line (no grant will be delivered) and false if the grant was
	// already decided; the caller then receives it and must treat the units
	// as taken (releasing them if the limiter is a Releaser).
	Cancel(now time.Duration, t Ticket) bool
	// Waiting returns how many acquisitions are parked.
	Waiting() int
	// Usage is the fraction of the limit in use at now (see Core.Usage).
	// Once it reads 0 with nobody waiting, it stays 0 until the next
	// Acquire: time alone never puts a limit back in use (samplers skip
	// limiters at rest on this promise). Adaptive limiters are exempt: an
	// SRE throttle's refusal probability moves as its window slides.
	Usage(now time.Duration) float64
}

// Releaser is a limiter whose units are returned: concurrency limiters.
type Releaser interface {
	Limiter
	// Release returns n units and wakes waiters that now fit.
	Release(now time.Duration, n int64)
}

// nsPerSec converts rates per second to per nanosecond.
const nsPerSec = float64(time.Second)

// ceilDur returns the smallest whole number of nanoseconds ≥ x, saturating.
func ceilDur(x float64) time.Duration {
	if !(x < float64(clock.Never)) {
		return clock.Never
	}
	d := time.Duration(x)
	if float64(d) < x {
		d++
	}
	if d < 0 {
		d = 0
	}
	return d
}
