package models_test

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// TestTokenBucketDebt charges a bucket of 100 tokens/s and capacity 100
// more than it holds, as a provider charges a response's cost when it
// completes: the level goes 150 below zero, nothing is admitted until the
// debt is refilled (1.5 s, then 1 token at 1.51 s), usage reads 1 while in
// debt, and a refund never fills past the capacity. It catches a charge
// clamped at zero (the debt forgiven), a refund that overfills, and a usage
// above 1.
func TestTokenBucketDebt(t *testing.T) {
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 100, Burst: 100, InitialFill: 1}))
	b.ChargeAt(0, 250)
	if got := b.TokensAt(0); got != -150 {
		t.Fatalf("level after charging 250 of 100: %v, want -150", got)
	}
	if u := b.Usage(0); u != 1 {
		t.Errorf("usage in debt: %v, want 1", u)
	}
	if b.TakeAt(1400*time.Millisecond, 1) {
		t.Error("admitted at 1.4 s with the debt not yet refilled")
	}
	if at, ok := b.ReadyAt(0, 1); !ok || at != 1510*time.Millisecond {
		t.Errorf("ReadyAt(0, 1) in debt = %v, %v; want 1.51s", at, ok)
	}
	b.SettleAt(2*time.Second, 0, 1000, 0)
	if got := b.TokensAt(2 * time.Second); got != 100 {
		t.Errorf("level after a refund of 1000: %v, want the capacity 100", got)
	}
}

// TestWindowCharge: a fixed window and a sliding counter charged past
// their limit refuse until the debt leaves the window, and a refund never
// takes the count below zero.
func TestWindowCharge(t *testing.T) {
	f := must[*models.FixedWindow](t)(models.NewFixedWindow(10, time.Second))
	f.ChargeAt(0, 15)
	if f.TakeAt(500*time.Millisecond, 1) || f.Usage(0) != 1 {
		t.Errorf("fixed window over its limit: admitted, or usage %v ≠ 1", f.Usage(0))
	}
	f.SettleAt(600*time.Millisecond, 0, 100, 0)
	if !f.TakeAt(600*time.Millisecond, 10) || f.TakeAt(600*time.Millisecond, 1) {
		t.Error("a refund below zero: the window must hold exactly its limit again")
	}
	c := must[*models.SlidingCounter](t)(models.NewSlidingCounter(10, time.Second))
	c.ChargeAt(0, 20)
	if c.TakeAt(1500*time.Millisecond, 1) {
		t.Error("sliding counter: 20 charged in [0,1s) still weigh 10 at 1.5 s; nothing fits")
	}
	if !c.TakeAt(2*time.Second, 10) {
		t.Error("sliding counter: the charge has left the window at 2 s")
	}
}

// TestLineSettleServesWaiters: a line over a token bucket whose head waits
// for 80 tokens is served at once when a reservation is given back, and a
// line over a core that cannot be charged says so. It catches a Settle
// that forgets to dispatch (the head sleeps to its old wake-up).
func TestLineSettleServesWaiters(t *testing.T) {
	e := sim.New(1)
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 100, InitialFill: 0.5}))
	l := models.NewLine(b, e, models.Unbounded)
	var at time.Duration = -1
	h := clock.HandlerFunc(func(now time.Duration, _ uint64) { at = now })
	if _, st := l.Acquire(0, 80, clock.Never, h, 0); st != models.Parked {
		t.Fatalf("80 of 50 tokens: %v, want parked", st)
	}
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		if !l.Settle(now, 0, 20, 0) { // 60 at 1 s, plus 20 given back
			t.Error("Settle refused on a token bucket")
		}
	}), 0)
	if err := e.RunUntil(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if at != time.Second {
		t.Errorf("head served at %v, want 1s (when 20 tokens came back)", at)
	}
	s := must[*models.Semaphore](t)(models.NewSemaphore(2))
	if models.NewLine(s, e, models.Unbounded).Settle(0, 0, 0, 1) {
		t.Error("Settle on a semaphore line reported success")
	}
}

// TestSettleAcrossWindows: a reservation settled after its window ended is
// not given back to the next window, which never held it; the real cost
// counts where the settlement happens. A sliding counter takes it back
// from the previous window, which still weighs in. A token bucket settles
// the difference whenever it was taken. It catches a refund that lowers a
// window below what it admitted (letting the next requests overrun it).
func TestSettleAcrossWindows(t *testing.T) {
	f := must[*models.FixedWindow](t)(models.NewFixedWindow(5000, time.Minute))
	f.ChargeAt(59*time.Second, 2000)
	f.ChargeAt(61*time.Second, 4000) // the next window
	f.SettleAt(61*time.Second, 59*time.Second, 1500, 300)
	if u := f.Usage(61 * time.Second); u != 4300.0/5000 {
		t.Errorf("fixed window after a settlement from the window before: usage %v, want 4,300 of 5,000", u)
	}
	f.SettleAt(62*time.Second, 61*time.Second, 1500, 300)
	if u := f.Usage(62 * time.Second); u != 3100.0/5000 {
		t.Errorf("fixed window after a settlement in its own window: usage %v, want 3,100 of 5,000", u)
	}
	c := must[*models.SlidingCounter](t)(models.NewSlidingCounter(100, time.Second))
	c.ChargeAt(900*time.Millisecond, 60)
	c.SettleAt(1100*time.Millisecond, 900*time.Millisecond, 50, 5) // prev 10, curr 5
	// At 1.5 s the previous window weighs half: 10 × 0.5 + 5 = 10 of 100.
	if u := c.Usage(1500 * time.Millisecond); math.Abs(u-0.10) > 1e-12 {
		t.Errorf("sliding counter after a settlement from the previous window: usage %v, want 0.10", u)
	}
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 1, Burst: 1000, InitialFill: 1}))
	b.ChargeAt(0, 900)
	b.SettleAt(10*time.Second, 0, 800, 100) // 100 + 10 refilled + 700 back
	if got := b.TokensAt(10 * time.Second); got != 810 {
		t.Errorf("bucket after settling 800 taken for 100: %v tokens, want 810", got)
	}
}
