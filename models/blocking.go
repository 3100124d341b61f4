package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// Loop runs functions one at a time on an event loop's goroutine; the
// wallclock.Loop the limiter was built on implements it.
type Loop interface {
	// Do runs f on the loop goroutine; false if the loop has stopped.
	Do(f func(now time.Duration)) bool
	// Done is closed when the loop stops; functions accepted by Do but not
	// yet run are then dropped.
	Done() <-chan struct{}
}

// Errors returned by Blocking.
var (
	ErrClosed   = errors.New("models: event loop closed")
	ErrRejected = errors.New("models: acquisition rejected")
)

// Blocking is the production face of a limiter: Wait blocks the calling
// goroutine until the limiter grants, the context ends, or the limiter
// refuses. The limiter itself runs on the loop's goroutine, so it needs no
// lock and behaves exactly as it does in simulation. Build the limiter on a
// wallclock.Loop and pass that loop here.
type Blocking struct {
	loop  Loop
	lim   Limiter
	next  uint64
	waits map[uint64]chan error // loop goroutine only
}

// NewBlocking wraps lim, which must be driven by loop.
func NewBlocking(loop Loop, lim Limiter) *Blocking {
	return &Blocking{loop: loop, lim: lim, waits: make(map[uint64]chan error)}
}

type blockingGrant Blocking

func (g *blockingGrant) Fire(_ time.Duration, arg uint64) {
	b := (*Blocking)(g)
	if ch, ok := b.waits[arg]; ok {
		delete(b.waits, arg)
		ch <- nil
	}
}

// Wait acquires n units, blocking until they are granted. It returns
// ctx.Err() if the context ends first (the units are then not held), and an
// error wrapping ErrRejected if the limiter refuses (full line, n too large,
// or a grant that could not come before ctx's deadline).
func (b *Blocking) Wait(ctx context.Context, n int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	var id uint64
	var ticket Ticket
	var parked bool
	ok := b.loop.Do(func(now time.Duration) {
		deadline := clock.Never
		if dl, has := ctx.Deadline(); has {
			deadline = clock.Add(now, time.Until(dl))
		}
		id = b.next
		b.next++
		b.waits[id] = done
		t, st := b.lim.Acquire(now, n, deadline, (*blockingGrant)(b), id)
		switch st {
		case Parked:
			ticket, parked = t, true
			return
		case Granted:
			done <- nil
		default:
			done <- fmt.Errorf("%w: %v", ErrRejected, st)
		}
		delete(b.waits, id)
	})
	if !ok {
		return ErrClosed
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	case <-b.loop.Done():
		return ErrClosed
	}
	left := make(chan bool, 1)
	if !b.loop.Do(func(now time.Duration) {
		if parked && b.lim.Cancel(now, ticket) {
			delete(b.waits, id)
			left <- true
			return
		}
		left <- false
	}) {
		return ErrClosed
	}
	select {
	case cancelled := <-left:
		if cancelled {
			return ctx.Err()
		}
	case <-b.loop.Done():
		return ErrClosed
	}
	// The grant was already decided: take it, then give the units back.
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case <-b.loop.Done():
		return ErrClosed
	}
	b.Release(n)
	return ctx.Err()
}

// Release returns n units to a concurrency limiter; it is a no-op for
// limiters whose units do not come back.
func (b *Blocking) Release(n int64) {
	if r, ok := b.lim.(Releaser); ok {
		b.loop.Do(func(now time.Duration) { r.Release(now, n) })
	}
}
