package models_test

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

func newAIMD(t *testing.T, e *sim.Engine) *models.AIMD {
	t.Helper()
	a, err := models.NewAIMD(models.AIMDConfig{Initial: 10, Min: 2, Max: 20, Increase: 1, Decrease: 0.5,
		Interval: time.Second, Burst: 1, MaxWaiting: models.Unbounded}, e)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A 429 halves the rate, and the 429s of one congestion (within an
// interval of the first) count once; each interval without one adds the
// increase, applied lazily however long the limiter sat idle; the rate
// stays within [min, max].
func TestAIMDDecreasesOncePerIntervalAndGrowsLazily(t *testing.T) {
	a := newAIMD(t, sim.New(1))
	a.Observe(100*ms, true, 0)
	a.Observe(200*ms, true, 0) // the same congestion
	a.Observe(900*ms, true, 0)
	if got := a.Limit(900 * ms); got != 5 {
		t.Fatalf("after three 429s within a second: %v, want one halving to 5", got)
	}
	a.Observe(1200*ms, true, 0) // a new interval: a second halving, floored at min
	if got := a.Limit(1200 * ms); got != 2.5 {
		t.Fatalf("a 429 a full interval later: %v, want 2.5", got)
	}
	a.Observe(1300*ms, true, 0)
	a.Observe(2300*ms, true, 0)
	if got := a.Limit(2300 * ms); got != 2 {
		t.Fatalf("halving below min: %v, want min 2", got)
	}
	// No 429 for 10.5 s: ten whole intervals, +1 each.
	if got := a.Limit(12800 * ms); got != 12 {
		t.Fatalf("after ten quiet intervals: %v, want 12", got)
	}
	if got := a.Limit(time.Hour); got != 20 {
		t.Fatalf("after an hour: %v, want max 20", got)
	}
}

// A rate change retunes the waiting line: a waiter parked under a slow rate
// is granted at the faster rate's time.
func TestAIMDRateChangeRetunesTheWaiter(t *testing.T) {
	e := sim.New(1)
	a, err := models.NewAIMD(models.AIMDConfig{Initial: 2, Min: 1, Max: 100, Increase: 50, Decrease: 0.5,
		Interval: 100 * ms, Burst: 1, MaxWaiting: models.Unbounded}, e)
	if err != nil {
		t.Fatal(err)
	}
	g := newGrants()
	if _, st := a.Acquire(0, 1, clock.Never, g, 1); st != models.Granted {
		t.Fatal("the first token was not granted at once")
	}
	if _, st := a.Acquire(0, 1, clock.Never, g, 2); st != models.Parked {
		t.Fatal("the second acquisition did not wait")
	}
	// At 2/s the token is due at 500 ms; at 100 ms the rate grows to 52/s
	// (the 0.2 token accrued is kept), so the rest comes 0.8/52 s later.
	e.At(100*ms, opFunc(func(now time.Duration, _ uint64) { a.Observe(now, false, 0) }), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := 100*ms + time.Duration(math.Ceil(0.8/52*1e9))
	if got := g.at[2]; got < want-time.Microsecond || got > want+time.Microsecond {
		t.Fatalf("granted at %v, want %v (retuned to the new rate), not 500ms", got, want)
	}
}

// Gradient2 grows while the latency holds (0.8 per one-second window) and
// shrinks when a window's latency jumps past 1.5× the long average, or on
// a 429, but not while the client keeps under half its limit in use.
func TestGradient2FollowsLatency(t *testing.T) {
	e := sim.New(1)
	g, err := models.NewGradient2(models.VegasConfig{Initial: 20, Min: 1, Max: 1000, MaxWaiting: models.Unbounded}, e)
	if err != nil {
		t.Fatal(err)
	}
	grants := newGrants()
	for k := range 20 { // hold 20 permits: the limit is in use
		g.Acquire(0, 1, clock.Never, grants, uint64(k))
	}
	window := func(sec int, rtt time.Duration, throttled bool) {
		for k := range 10 {
			g.Observe(time.Duration(sec)*time.Second+time.Duration(k)*100*ms, throttled, rtt)
		}
	}
	for sec := range 5 {
		window(sec+1, 50*ms, false)
	}
	if got := g.Limit(0); got != 24 { // 20 → 20.8 → 21.6 → 22.4 → 23.2 → 24
		t.Fatalf("after five steady windows: %v permits, want 24", got)
	}
	window(6, 150*ms, false) // three times the long average: gradient 0.5
	if got := g.Limit(0); got >= 24 {
		t.Fatalf("after a window at 3× the latency: %v permits, want fewer than 24", got)
	}
	before := g.Limit(0)
	window(7, 50*ms, true)
	if got := g.Limit(0); got >= before {
		t.Fatalf("a 429 left the limit at %v (was %v)", got, before)
	}
}
