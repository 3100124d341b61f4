// Package wallclock drives clock.Scheduler code on the real clock: one
// goroutine runs every event at (or just after) its wall-clock instant, one at
// a time, exactly as sim.Engine runs them on virtual time. Limiters written
// for the simulator therefore run unchanged in a Go service.
//
// It imports clock and internal/eventq only.
package wallclock
