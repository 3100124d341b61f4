// Package clock is the small time and scheduling interface limiters are
// written against (Now, At, Cancel, Handler), so that the same limiter code
// runs on the simulator's virtual clock (sim.Engine) and on the wall clock
// (clock/wallclock).
//
// Time is a time.Duration offset from the clock's epoch (the start of a
// run, or the creation of a wall-clock loop): integer nanoseconds, never
// floating point. Add saturates instead of wrapping.
//
// It owns nothing else and imports only the standard library.
package clock
