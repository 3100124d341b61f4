package models_test

import (
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
	b.ChargeAt(2*time.Second, -1000)
	if got := b.TokensAt(2 * time.Second); got != 100 {
		t.Errorf("level after a refund of 1000: %v, want the capacity 100", got)
	}
}

// TestWindowCharge: a fixed window and a sliding counter charged past
// their limit refuse until the debt leaves the window, and a refund
// (negative charge) never takes the count below zero.
func TestWindowCharge(t *testing.T) {
	f := must[*models.FixedWindow](t)(models.NewFixedWindow(10, time.Second))
	f.ChargeAt(0, 15)
	if f.TakeAt(500*time.Millisecond, 1) || f.Usage(0) != 1 {
		t.Errorf("fixed window over its limit: admitted, or usage %v ≠ 1", f.Usage(0))
	}
	f.ChargeAt(600*time.Millisecond, -100)
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

// TestLineAdjustServesWaiters: a line over a token bucket whose head waits
// for 80 tokens is served at once when a reservation is given back, and a
// line over a core that cannot be charged says so. It catches an Adjust
// that forgets to dispatch (the head sleeps to its old wake-up).
func TestLineAdjustServesWaiters(t *testing.T) {
	e := sim.New(1)
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 100, InitialFill: 0.5}))
	l := models.NewLine(b, e, models.Unbounded)
	var at time.Duration = -1
	h := clock.HandlerFunc(func(now time.Duration, _ uint64) { at = now })
	if _, st := l.Acquire(0, 80, clock.Never, h, 0); st != models.Parked {
		t.Fatalf("80 of 50 tokens: %v, want parked", st)
	}
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		if !l.Adjust(now, -20) { // 60 at 1 s, plus 20 given back
			t.Error("Adjust refused on a token bucket")
		}
	}), 0)
	if err := e.RunUntil(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if at != time.Second {
		t.Errorf("head served at %v, want 1s (when 20 tokens came back)", at)
	}
	s := must[*models.Semaphore](t)(models.NewSemaphore(2))
	if models.NewLine(s, e, models.Unbounded).Adjust(0, 1) {
		t.Error("Adjust on a semaphore line reported success")
	}
}
