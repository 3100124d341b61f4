// Package models holds limitsim's limiters: token bucket, GCRA, sliding
// window log and counter, fixed window, semaphore, bounded work queue, the
// article's own Python variants, and an adapter for
// golang.org/x/time/rate. Every limiter is written against time passed in and
// a clock.Scheduler, so one implementation runs in the simulator and, through
// Blocking, in a Go service on the wall clock.
//
// Limiters come in two layers. A Core is the pure decision rule
// (TakeAt, ReadyAt); a Limiter adds the waiting line: FIFO where the real
// thing is FIFO, with a wake-up timer held only by the head of the line.
// Grants of parked acquisitions are delivered as scheduled events, never
// inline. Deadlines and acquisition timeouts belong to the caller, which
// cancels its ticket when its own timer fires; a cancelled waiter leaves the
// line and the limiter's state stays exact.
//
// Limiter kinds are registered once, in the table behind Kinds: the
// scenario decoder, its checks, the client model and the scenario
// reference all read it.
//
// It imports clock, the standard library and golang.org/x/time/rate: no
// engine, file format, plotting or report package.
package models
