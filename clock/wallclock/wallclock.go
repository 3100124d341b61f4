package wallclock

import (
	"context"
	"sync"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/eventq"
)

// Loop is a wall-clock event loop. Its Scheduler methods (Now, At, Cancel) are
// for use inside handlers and functions passed to Do, which all run on the
// loop's goroutine; other goroutines talk to it only through Do.
type Loop struct {
	epoch  time.Time
	speed  float64 // loop time per wall time: 1 runs on the real clock
	q      eventq.Queue
	events uint64 // events fired, for the record

	mu     sync.Mutex
	inbox  []func(now time.Duration)
	wake   chan struct{}
	closed bool
	done   chan struct{}
}

var _ clock.Scheduler = (*Loop)(nil)

// New starts a loop whose epoch is the current wall-clock time. It runs until
// ctx is cancelled or Close is called.
func New(ctx context.Context) *Loop { return NewScaled(ctx, 1) }

// NewScaled starts a loop whose time runs speed times as fast as the wall
// clock (speed 10: an event 1 s ahead fires 100 ms later); speed must be
// positive. Everything the loop's handlers see (Now, the instants of At)
// is in loop time.
func NewScaled(ctx context.Context, speed float64) *Loop {
	if !(speed > 0) {
		speed = 1
	}
	l := &Loop{
		epoch: time.Now(),
		speed: speed,
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	go l.run(ctx)
	return l
}

// Now returns the loop time elapsed since the loop's epoch.
func (l *Loop) Now() time.Duration {
	d := time.Since(l.epoch)
	if l.speed == 1 {
		return d
	}
	return time.Duration(float64(d) * l.speed)
}

// Wall converts a span of loop time to wall-clock time.
func (l *Loop) Wall(d time.Duration) time.Duration {
	if l.speed == 1 {
		return d
	}
	return time.Duration(float64(d) / l.speed)
}

// Restart makes the current instant the loop's time 0: a program that
// set up at length before its first event starts its time after the set-up.
// Call it on the loop goroutine, with no event scheduled (the instants of
// events already scheduled would move with it).
func (l *Loop) Restart() { l.epoch = time.Now() }

// Pending returns the number of scheduled events. Call it only on the loop
// goroutine.
func (l *Loop) Pending() int { return l.q.Len() }

// Events returns the number of events fired so far. Call it only on the
// loop goroutine.
func (l *Loop) Events() uint64 { return l.events }

// At schedules h.Fire at instant t (relative to the epoch); an instant in
// the past runs now, after the events already due. Call it only on the loop
// goroutine.
func (l *Loop) At(t time.Duration, h clock.Handler, arg uint64) clock.Timer {
	if now := l.Now(); t < now {
		t = now
	}
	return l.q.Push(t, h, arg)
}

// Post schedules h.Fire at instant t as At does, for an event that is
// never cancelled. Call it only on the loop goroutine.
func (l *Loop) Post(t time.Duration, h clock.Handler, arg uint64) {
	l.q.Post(max(t, l.Now()), h, arg)
}

// Cancel cancels a pending event. Call it only on the loop goroutine.
func (l *Loop) Cancel(t clock.Timer) bool { return l.q.Cancel(t) }

// Do runs f on the loop goroutine as soon as possible and reports whether it
// was accepted (false once the loop has stopped). It is safe for concurrent use.
func (l *Loop) Do(f func(now time.Duration)) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.inbox = append(l.inbox, f)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

// Close stops the loop and waits for it to finish its current event.
// Pending events, and functions passed to Do that have not run yet, are
// dropped. Calling Close from a handler or a Do function deadlocks; cancel
// the loop's context there instead.
func (l *Loop) Close() {
	l.mu.Lock()
	already := l.closed
	l.closed = true
	l.mu.Unlock()
	if !already {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	<-l.done
}

// Done is closed when the loop has stopped.
func (l *Loop) Done() <-chan struct{} { return l.done }

func (l *Loop) run(ctx context.Context) {
	defer close(l.done)
	defer func() {
		l.mu.Lock()
		l.closed = true
		l.inbox = nil
		l.mu.Unlock()
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var batch []func(time.Duration)
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		batch, l.inbox = l.inbox, batch[:0]
		l.mu.Unlock()
		for i, f := range batch {
			f(l.Now())
			batch[i] = nil
		}
		now := l.Now()
		for {
			at, ok := l.q.Peek()
			if !ok || at > now {
				break
			}
			_, h, arg, _ := l.q.Pop()
			l.events++
			h.Fire(now, arg)
			now = l.Now()
		}
		wait := time.Hour
		if at, ok := l.q.Peek(); ok {
			wait = l.Wall(at - now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-timer.C:
		}
	}
}
