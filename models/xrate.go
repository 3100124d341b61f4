package models

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
)

// xrateEpoch is the fixed wall-clock instant that simulated instant 0 maps
// to when driving a rate.Limiter; it is never read from the real clock.
var xrateEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// reservation is a parked XRate waiter.
type reservation struct {
	r     *rate.Reservation
	h     clock.Handler
	arg   uint64
	timer clock.Timer
}

// XRate drives a real golang.org/x/time/rate.Limiter through its explicit-time
// API and behaves exactly as its Wait does: each caller reserves its tokens on
// arrival (the bucket may go into debt), then sleeps on its own timer until
// its reservation matures; a caller whose reservation would mature after its
// deadline fails at once without waiting; a caller that gives up cancels its
// reservation and x/time/rate gives the tokens back.
type XRate struct {
	lim     *rate.Limiter
	sched   clock.Scheduler
	waiters slab.Slab[reservation]
}

var _ Limiter = (*XRate)(nil)

// NewXRate returns an adapter over rate.NewLimiter(rate, burst).
func NewXRate(r float64, burst int, sched clock.Scheduler) (*XRate, error) {
	if !(r > 0) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("%w: xrate rate %v must be a positive finite number", ErrConfig, r)
	}
	if burst < 1 {
		return nil, fmt.Errorf("%w: xrate burst %d must be at least 1", ErrConfig, burst)
	}
	return &XRate{lim: rate.NewLimiter(rate.Limit(r), burst), sched: sched}, nil
}

func wall(now time.Duration) time.Time { return xrateEpoch.Add(now) }

// Acquire reserves n tokens at now, like rate.Limiter.WaitN.
func (x *XRate) Acquire(now time.Duration, n int64, deadline time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n < 1 || n > int64(x.lim.Burst()) {
		return 0, TooLarge
	}
	t := wall(now)
	// AllowN is ReserveN that only takes what is there now: the same state
	// change when the tokens are there, none when they are not, and no
	// *rate.Reservation allocated for a grant at once.
	if x.lim.AllowN(t, int(n)) {
		return 0, Granted
	}
	r := x.lim.ReserveN(t, int(n))
	if !r.OK() {
		return 0, TooLarge
	}
	d := r.DelayFrom(t)
	if d == 0 {
		return 0, Granted
	}
	if clock.Add(now, d) > deadline {
		r.CancelAt(t)
		return 0, TooLate
	}
	i, s, ticket := x.waiters.Alloc()
	s.r, s.h, s.arg = r, h, arg
	s.timer = x.sched.At(clock.Add(now, d), (*xrateWake)(x), uint64(i))
	return Ticket(ticket), Parked
}

type xrateWake XRate

func (w *xrateWake) Fire(now time.Duration, arg uint64) {
	x := (*XRate)(w)
	s := x.waiters.At(uint32(arg))
	x.sched.Post(now, s.h, s.arg)
	x.waiters.Release(uint32(arg))
}

// Cancel gives up a reservation; x/time/rate restores what tokens it can.
func (x *XRate) Cancel(now time.Duration, t Ticket) bool {
	i, s, ok := x.waiters.Lookup(slab.Handle(t))
	if !ok {
		return false
	}
	x.sched.Cancel(s.timer)
	s.r.CancelAt(wall(now))
	x.waiters.Release(i)
	return true
}

// Waiting returns the callers sleeping on a reservation.
func (x *XRate) Waiting() int { return x.waiters.Live() }

// Usage returns 1 − tokens ÷ burst, clamped to [0, 1] (reservations can put
// the bucket in debt).
func (x *XRate) Usage(now time.Duration) float64 {
	u := 1 - x.lim.TokensAt(wall(now))/float64(x.lim.Burst())
	return min(1, max(0, u))
}
