package sim

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/eventq"
)

// ErrStopped is returned by the Run methods when Stop was called.
var ErrStopped = errors.New("sim: stopped")

// Engine is a single-threaded discrete-event simulator. The zero value is not
// usable; call New. An Engine is not safe for concurrent use: handlers run
// one at a time on the goroutine that called Run.
type Engine struct {
	q       eventq.Queue
	now     time.Duration
	seed    uint64
	events  uint64
	stopped bool
	abort   error
	halt    bool // Stop or Abort was called: the run loop looks at stopped and abort
	parkers []Parker
	explain func(*StallError)

	limits    Limits
	sameAt    time.Duration // instant of the current run of events
	sameCount uint64
	interrupt *atomic.Bool
}

// Limits are deterministic guards against runs that would not end: each
// zero field is unlimited.
type Limits struct {
	// MaxEvents bounds the events fired in one Run.
	MaxEvents uint64
	// MaxEventsPerInstant bounds the events fired without simulated time
	// advancing (a zero-delay retry storm).
	MaxEventsPerInstant uint64
}

// GuardError reports a run stopped by a guard.
type GuardError struct {
	Guard  string        // "max_events", "max_events_per_instant", or a caller's name
	Limit  uint64        // the limit that tripped
	At     time.Duration // simulated instant
	Detail string        // why, in the caller's terms
}

func (g *GuardError) Error() string {
	msg := fmt.Sprintf("sim: guard %s (limit %d) stopped the run at %v", g.Guard, g.Limit, g.At)
	if g.Detail != "" {
		msg += ": " + g.Detail
	}
	return msg
}

// ErrInterrupted is returned by the Run methods when the interrupt flag
// given to SetInterrupt was raised.
var ErrInterrupted = errors.New("sim: interrupted")

// SetLimits installs guards checked on every event.
func (e *Engine) SetLimits(l Limits) { e.limits = l }

// SetInterrupt makes Run return ErrInterrupted once flag is set (from a
// signal handler, say): the run loop looks at the flag when it begins and
// then every 4,096 events.
func (e *Engine) SetInterrupt(flag *atomic.Bool) { e.interrupt = flag }

// Abort makes the current Run return err after the running handler; a
// component uses it to stop the run with its own guard or model error.
func (e *Engine) Abort(err error) {
	if e.abort == nil {
		e.abort = err
	}
	e.halt = true
}

var _ clock.Scheduler = (*Engine)(nil)

// New returns an engine at instant 0 whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{seed: seed}
}

// Seed returns the seed the engine's streams derive from.
func (e *Engine) Seed() uint64 { return e.seed }

// Now returns the current simulated instant.
func (e *Engine) Now() time.Duration { return e.now }

// Events returns how many events have fired so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending returns how many events are scheduled and not cancelled.
func (e *Engine) Pending() int { return e.q.Len() }

// At schedules h.Fire(t, arg); an instant in the past runs at Now.
func (e *Engine) At(t time.Duration, h clock.Handler, arg uint64) clock.Timer {
	if t < e.now {
		t = e.now
	}
	return e.q.Push(t, h, arg)
}

// Post schedules h.Fire(t, arg) as At does, for an event that is never
// cancelled: it returns no Timer, and at the current instant (a grant) it
// skips the bookkeeping a Timer needs.
func (e *Engine) Post(t time.Duration, h clock.Handler, arg uint64) {
	e.q.Post(max(t, e.now), h, arg)
}

// After schedules h.Fire after delay d, saturating at the largest instant.
func (e *Engine) After(d time.Duration, h clock.Handler, arg uint64) clock.Timer {
	return e.At(clock.Add(e.now, d), h, arg)
}

// Cancel removes a pending event; it reports false for a fired or cancelled one.
func (e *Engine) Cancel(t clock.Timer) bool { return e.q.Cancel(t) }

// Stop makes the current Run return ErrStopped after the running handler.
func (e *Engine) Stop() { e.stopped, e.halt = true, true }

// Step fires the earliest event and reports whether there was one.
func (e *Engine) Step() bool {
	at, h, arg, ok := e.q.Pop()
	if !ok {
		return false
	}
	e.fire(at, h, arg)
	return true
}

func (e *Engine) fire(at time.Duration, h clock.Handler, arg uint64) {
	e.now = at
	e.events++
	h.Fire(at, arg)
}

// Run fires events until none remain. It returns a *StallError if watched
// components still hold parked work at that point (nothing will ever wake
// it), ErrStopped after Stop, and nil otherwise.
func (e *Engine) Run() error {
	return e.run(clock.Never, nil)
}

// RunUntil fires every event at or before horizon, then sets the clock to
// horizon if events remain beyond it. It returns a *StallError if the events
// ran out before the horizon while work was parked.
func (e *Engine) RunUntil(horizon time.Duration) error {
	return e.run(horizon, nil)
}

// RunWhile fires events while cond() is true (checked before each event).
func (e *Engine) RunWhile(cond func() bool) error {
	return e.run(clock.Never, cond)
}

// pollEvery is how many events the run loop fires between looks at the
// interrupt flag.
const pollEvery = 4096

func (e *Engine) run(horizon time.Duration, cond func() bool) error {
	e.stopped = false
	e.halt = e.abort != nil
	// The guards' limits in the form the loop compares with: the event
	// count at which the run stops, and the events one instant may fire.
	stopAt, perInstant := uint64(math.MaxUint64), uint64(math.MaxUint64)
	if l := e.limits.MaxEvents; l > 0 {
		stopAt = e.events + min(l, math.MaxUint64-e.events)
	}
	if l := e.limits.MaxEventsPerInstant; l > 0 {
		perInstant = l
	}
	// look is the event count at which the loop next looks beyond the
	// halt flag: at once (and so at every event) under a condition, else
	// at the next poll of the interrupt flag or the event limit.
	look := e.events
	for {
		if e.halt {
			if e.stopped {
				return ErrStopped
			}
			return e.abort
		}
		if e.events >= look || e.sameCount >= perInstant {
			if e.interrupt != nil && e.interrupt.Load() {
				return ErrInterrupted
			}
			if cond != nil && !cond() {
				return nil
			}
			if e.sameCount >= perInstant || e.events >= stopAt {
				// A guard may stop the run at the next event: look at it
				// without taking it, so that a stopped run leaves it
				// pending as it was (its place among its instant's
				// events, its timer).
				next, ok := e.q.Peek()
				switch {
				case !ok:
					return e.stall()
				case next > horizon:
					e.now = horizon
					return nil
				case next == e.sameAt && e.sameCount >= perInstant:
					return &GuardError{Guard: "max_events_per_instant", Limit: perInstant, At: next,
						Detail: "simulated time stopped advancing: events keep scheduling events at the same instant (a zero-delay retry or wake-up loop)"}
				case e.events >= stopAt:
					return &GuardError{Guard: "max_events", Limit: e.limits.MaxEvents, At: e.now,
						Detail: "the run has fired its maximum number of events"}
				}
			}
			if cond == nil {
				look = min(stopAt, e.events+pollEvery)
			}
		}
		at, h, arg, ok := e.q.PopUntil(horizon)
		if !ok {
			if e.q.Len() == 0 {
				return e.stall()
			}
			e.now = horizon
			return nil
		}
		if at != e.sameAt {
			e.sameAt, e.sameCount = at, 0
		}
		e.sameCount++
		e.fire(at, h, arg)
	}
}

// Parker is a component that can hold work parked until something else
// happens: a limiter's waiting line, a queue's blocked producers.
type Parker interface {
	// Name identifies the component in a stall report.
	Name() string
	// Parked returns how many waiters it holds now.
	Parked() int
}

// Watch registers p for stall detection.
func (e *Engine) Watch(p Parker) { e.parkers = append(e.parkers, p) }

// ExplainStalls registers a function that adds detail (such as the wait-for
// cycle between limiters) to a StallError before Run returns it.
func (e *Engine) ExplainStalls(f func(*StallError)) { e.explain = f }

// ParkedCount is one component's share of a stall.
type ParkedCount struct {
	Name   string `json:"name"`
	Parked int    `json:"parked"`
}

// StallError reports a run whose events ran out while work was still parked:
// nothing scheduled can ever wake it, so the run would otherwise hang.
type StallError struct {
	// At is the simulated instant of the stall.
	At time.Duration
	// Parked lists the components holding waiters, in registration order.
	Parked []ParkedCount
	// Cycle, when known, is the wait-for cycle between components, first
	// element repeated at the end ("db", "cache", "db").
	Cycle []string
	// Detail is free text added by ExplainStalls.
	Detail string
}

func (s *StallError) Error() string {
	msg := fmt.Sprintf("sim: stalled at %v: no events remain but", s.At)
	for i, p := range s.Parked {
		if i > 0 {
			msg += ","
		}
		msg += fmt.Sprintf(" %s holds %d waiting", p.Name, p.Parked)
	}
	if len(s.Cycle) > 0 {
		msg += "; deadlock cycle: "
		for i, c := range s.Cycle {
			if i > 0 {
				msg += " → "
			}
			msg += c
		}
	}
	if s.Detail != "" {
		msg += "; " + s.Detail
	}
	return msg
}

func (e *Engine) stall() error {
	var parked []ParkedCount
	for _, p := range e.parkers {
		if n := p.Parked(); n > 0 {
			parked = append(parked, ParkedCount{Name: p.Name(), Parked: n})
		}
	}
	if len(parked) == 0 {
		return nil
	}
	s := &StallError{At: e.now, Parked: parked}
	if e.explain != nil {
		e.explain(s)
	}
	return s
}
