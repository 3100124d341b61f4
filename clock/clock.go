package clock

import (
	"errors"
	"math"
	"time"
)

// ErrOverflow is returned when an instant would not fit in a time.Duration.
var ErrOverflow = errors.New("clock: instant overflows int64 nanoseconds")

// Handler receives a scheduled event. now is the instant the event fires at;
// arg is the value given when it was scheduled, typically an index or ticket
// that lets one long-lived handler serve many requests without allocating.
type Handler interface {
	Fire(now time.Duration, arg uint64)
}

// HandlerFunc adapts a function to Handler. Converting a closure allocates,
// so hot paths use long-lived handler values instead.
type HandlerFunc func(now time.Duration, arg uint64)

// Fire calls f(now, arg).
func (f HandlerFunc) Fire(now time.Duration, arg uint64) { f(now, arg) }

// Timer identifies a scheduled event so that it can be cancelled. The zero
// Timer refers to no event; cancelling it is a no-op.
type Timer struct {
	slot uint32
	key  uint64
}

// MakeTimer builds a Timer from its parts. It is meant for Scheduler
// implementations; a key of zero makes the zero (empty) Timer.
func MakeTimer(slot uint32, key uint64) Timer { return Timer{slot: slot, key: key} }

// Parts returns the slot and key a Scheduler stored in t.
func (t Timer) Parts() (slot uint32, key uint64) { return t.slot, t.key }

// IsZero reports whether t refers to no event.
func (t Timer) IsZero() bool { return t.key == 0 }

// Scheduler is the clock a limiter sees. Its methods are called only from
// inside event handlers (or, for a wall-clock loop, from functions passed to
// wallclock.Loop.Do): every scheduler runs its events one at a time, so
// limiter state needs no lock.
type Scheduler interface {
	// Now returns the current instant.
	Now() time.Duration
	// At schedules h.Fire(t, arg). An instant before Now runs at Now. Events
	// at the same instant run in the order they were scheduled.
	At(t time.Duration, h Handler, arg uint64) Timer
	// Post schedules h.Fire(t, arg) as At does, for an event that is never
	// cancelled (a grant, a response): with no Timer to keep, it may cost
	// less.
	Post(t time.Duration, h Handler, arg uint64)
	// Cancel removes a scheduled event and reports whether it was still
	// pending; cancelling a fired or already cancelled event returns false.
	Cancel(t Timer) bool
}

// Add returns t+d, saturating at the largest representable instant instead
// of wrapping around. Limiters use it for deadlines and wake-ups so that a
// huge delay means "never" rather than "in the past".
func Add(t, d time.Duration) time.Duration {
	if d > 0 && t > math.MaxInt64-d {
		return math.MaxInt64
	}
	if d < 0 && t < math.MinInt64-d {
		return math.MinInt64
	}
	return t + d
}

// After schedules h.Fire after the delay d from s.Now(), saturating on
// overflow (see Add).
func After(s Scheduler, d time.Duration, h Handler, arg uint64) Timer {
	return s.At(Add(s.Now(), d), h, arg)
}

// Never is the instant used for "no deadline".
const Never = time.Duration(math.MaxInt64)
