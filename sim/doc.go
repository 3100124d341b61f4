// Package sim is limitsim's virtual-clock discrete-event engine: a clock in
// integer nanoseconds, an event queue with deterministic ties and cheap
// cancellation, named random streams for common random numbers, guards
// against runaway runs, and stall detection (with the wait-for cycle) for
// runs whose events run out while work is still parked.
//
// The engine knows nothing of limiters, clients or reports: it implements
// clock.Scheduler, which is all that limiter code sees. It imports only the
// standard library, clock and internal/eventq.
package sim
