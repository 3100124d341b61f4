package models_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// TestNewTokenBucketValidation catches constructor checks that accept a
// rate, capacity or initial fill that would make the bucket meaningless
// (zero, negative, NaN, infinite, a capacity below one token, a fill outside
// [0, 1]) or refuse the boundary values 1 token and fills 0 and 1.
func TestNewTokenBucketValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		rate, capacity, fill float64
		ok                   bool
	}{
		{10, 1, 0, true},
		{10, 1, 1, true},
		{0.5, 3.5, 0.25, true},
		{0, 1, 1, false},
		{-1, 1, 1, false},
		{nan, 1, 1, false},
		{inf, 1, 1, false},
		{10, 0.5, 1, false},
		{10, nan, 1, false},
		{10, inf, 1, false},
		{10, 1, -0.1, false},
		{10, 1, 1.1, false},
		{10, 1, nan, false},
	}
	for _, c := range cases {
		_, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: c.rate, Burst: c.capacity, InitialFill: c.fill})
		if c.ok && err != nil {
			t.Errorf("NewTokenBucket(%v, %v, %v): %v", c.rate, c.capacity, c.fill, err)
		}
		if !c.ok && !errors.Is(err, models.ErrConfig) {
			t.Errorf("NewTokenBucket(%v, %v, %v): %v, want ErrConfig", c.rate, c.capacity, c.fill, err)
		}
	}
}

// TestTokenBucketLevels checks a bucket of 10 tokens/s and capacity 2 that
// starts half full at instant start: the level refills linearly and stops at
// the capacity, usage is 1 − tokens ÷ capacity, and an acquisition of the
// whole capacity is possible (its ReadyAt is when the bucket is full). It
// catches a refill that overflows the capacity after idle time, an inverted
// usage, a ReadyAt that refuses n equal to the capacity, and a take that
// refuses when the level equals n exactly.
func TestTokenBucketLevels(t *testing.T) {
	const (
		start  = 5 * time.Second // the bucket's own epoch
		half   = start + 50*ms   // 1.5 tokens
		full   = start + 100*ms  // 2 tokens
		idle   = start + time.Hour
		before = start - time.Second
	)
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 2, InitialFill: 0.5, Start: start}))
	levels := []struct {
		at     time.Duration
		tokens float64
	}{
		{before, 1}, // no refill before the epoch
		{start, 1},
		{half, 1.5},
		{full, 2},
		{idle, 2}, // capped
	}
	for _, l := range levels {
		if got := b.TokensAt(l.at); math.Abs(got-l.tokens) > 1e-9 {
			t.Errorf("TokensAt(%v) = %v, want %v", l.at, got, l.tokens)
		}
		if got, want := b.Usage(l.at), 1-l.tokens/2; math.Abs(got-want) > 1e-9 {
			t.Errorf("Usage(%v) = %v, want %v", l.at, got, want)
		}
	}
	if b.Max() != 2 {
		t.Fatalf("Max() %d, want 2", b.Max())
	}
	if at, ok := b.ReadyAt(start, 1); !ok || at != start {
		t.Fatalf("ReadyAt(start, 1) = %v, %v; want start (a token is there)", at, ok)
	}
	if _, ok := b.ReadyAt(start, 3); ok {
		t.Fatal("ReadyAt(3) on a capacity of 2: ok, want never")
	}
	at, ok := b.ReadyAt(start, 2)
	if !ok || at < full || at > full+1 {
		t.Fatalf("ReadyAt(start, 2) = %v, %v; want %v (the bucket full)", at, ok, full)
	}
	if b.TakeAt(at-1, 2) {
		t.Fatalf("TakeAt(2) succeeded 1 ns before ReadyAt said %v", at)
	}
	if !b.TakeAt(idle, 2) {
		t.Fatal("TakeAt(2) on a full bucket of capacity 2 refused")
	}
	if got := b.TokensAt(idle); got != 0 {
		t.Fatalf("after taking the whole capacity: %v tokens, want 0", got)
	}
}

// TestTokenBucketFractionalCapacity checks a bucket of capacity 3.5: the
// largest acquisition is 3 tokens; 4 is refused as too large at once rather
// than parked for a level the bucket can never reach. It catches Max
// rounding a fractional capacity up.
func TestTokenBucketFractionalCapacity(t *testing.T) {
	e := modelEngine(1, 5)
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 1, Burst: 3.5, InitialFill: 1}))
	if b.Max() != 3 {
		t.Fatalf("Max() = %d for capacity 3.5, want 3", b.Max())
	}
	l := models.NewLine(b, e, models.Unbounded)
	if _, st := l.Acquire(0, 4, clock.Never, nil, 0); st != models.TooLarge {
		t.Fatalf("Acquire(4) on capacity 3.5: %v, want too_large", st)
	}
	if _, st := l.Acquire(0, 3, clock.Never, nil, 0); st != models.Granted {
		t.Fatalf("Acquire(3) on a full bucket of 3.5: %v, want granted", st)
	}
}

// Every core lets one acquisition take at least one unit, at its smallest
// configuration and after an adaptive limit shrinks it to nothing: a Line
// relies on it to skip asking Max for the common acquisition of 1. It
// catches a core whose Max can reach 0 (a bucket of 1 token rounding down,
// a semaphore set to no permits).
func TestEveryCoreHoldsOneUnit(t *testing.T) {
	sem := must[*models.Semaphore](t)(models.NewSemaphore(1))
	sem.SetPermits(0)
	cores := map[string]models.Core{
		"token_bucket":    must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 0.001, Burst: 1})),
		"gcra":            must[*models.GCRA](t)(models.NewGCRA(models.GCRAConfig{Rate: 0.001, Burst: 1})),
		"sliding_log":     must[*models.SlidingLog](t)(models.NewSlidingLog(1, time.Hour)),
		"fixed_window":    must[*models.FixedWindow](t)(models.NewFixedWindow(1, time.Hour)),
		"sliding_counter": must[*models.SlidingCounter](t)(models.NewSlidingCounter(1, time.Hour)),
		"semaphore":       sem,
	}
	for name, c := range cores {
		if c.Max() < 1 {
			t.Errorf("%s: Max() = %d, want at least 1", name, c.Max())
		}
	}
}

// TestLineRefusesNonPositive catches a Line that grants (or parks) an
// acquisition of 0 or fewer units instead of refusing it as too large: the
// guard is n < 1.
func TestLineRefusesNonPositive(t *testing.T) {
	e := sim.New(1)
	sem := must[*models.Semaphore](t)(models.NewSemaphore(2))
	l := models.NewLine(sem, e, models.Unbounded)
	for _, n := range []int64{0, -1} {
		if _, st := l.Acquire(0, n, clock.Never, nil, 0); st != models.TooLarge {
			t.Errorf("Acquire(%d): %v, want too_large", n, st)
		}
	}
	if sem.InUse() != 0 || l.Waiting() != 0 || e.Pending() != 0 {
		t.Fatalf("refused acquisitions left in use %d, waiting %d, events %d", sem.InUse(), l.Waiting(), e.Pending())
	}
}

// TestLineCancelHeadServesNext checks that when the head of a line gives up,
// the waiter behind it is served as soon as it fits: at once on a semaphore
// with room for it, and at its own (earlier) refill instant on a token
// bucket, not at the instant the cancelled head was waiting for. It catches
// a Cancel that removes the head without re-dispatching the line.
func TestLineCancelHeadServesNext(t *testing.T) {
	const (
		cancelAt  = 50 * ms
		oneToken  = 100 * ms // the bucket (10/s) refills one token
		twoTokens = 200 * ms // … and two
	)
	cases := []struct {
		name      string
		core      func() models.Core
		held      int64 // taken at instant 0
		headN     int64 // the head asks for this many and gives up at cancelAt
		wantGrant time.Duration
	}{
		{"semaphore", func() models.Core { return must[*models.Semaphore](t)(models.NewSemaphore(3)) }, 2, 3, cancelAt},
		{"token_bucket", func() models.Core {
			return must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 2, InitialFill: 1}))
		}, 2, 2, oneToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := modelEngine(1, 5)
			l := models.NewLine(c.core(), e, models.Unbounded)
			saturate(t, l, c.held)
			g := newGrants()
			head, st := l.Acquire(0, c.headN, clock.Never, g, 1)
			if st != models.Parked {
				t.Fatalf("head: %v, want parked", st)
			}
			if _, st := l.Acquire(0, 1, clock.Never, g, 2); st != models.Parked {
				t.Fatalf("second: %v, want parked behind the head", st)
			}
			e.At(cancelAt, clock.HandlerFunc(func(now time.Duration, _ uint64) {
				if !l.Cancel(now, head) {
					t.Error("cancel of the parked head failed")
				}
			}), 0)
			mustRun(t, e.RunUntil(twoTokens+time.Second))
			if !slices.Equal(g.order, []uint64{2}) || g.at[2] != c.wantGrant {
				t.Fatalf("granted %v at %v, want only the second waiter, at %v", g.order, g.at, c.wantGrant)
			}
		})
	}
}

// liarCore is a Core that breaks its promise: ReadyAt always says "now",
// but TakeAt succeeds only from readyFrom on.
type liarCore struct{ readyFrom time.Duration }

func (c liarCore) TakeAt(now time.Duration, _ int64) bool { return now >= c.readyFrom }
func (c liarCore) ReadyAt(now time.Duration, _ int64) (time.Duration, bool) {
	return now, true
}
func (liarCore) Max() int64                  { return 1 }
func (liarCore) Usage(time.Duration) float64 { return 0 }

// TestLineNeverSpinsAtOneInstant checks the Line's guard against a core that
// breaks its ReadyAt promise: the head's timer moves forward at least 1 ns
// per wake-up, so the grant arrives (here at 10 ns) instead of the line
// re-arming a timer at the same instant forever. It catches the guard
// weakened to at < now; the engine's per-instant limit turns that spin into
// an immediate failure.
func TestLineNeverSpinsAtOneInstant(t *testing.T) {
	const readyFrom = 10 // ns
	e := sim.New(1)
	e.SetLimits(sim.Limits{MaxEvents: 1000, MaxEventsPerInstant: 100})
	l := models.NewLine(liarCore{readyFrom: readyFrom}, e, models.Unbounded)
	g := newGrants()
	if _, st := l.Acquire(0, 1, clock.Never, g, 1); st != models.Parked {
		t.Fatalf("acquisition at 0: %v, want parked", st)
	}
	if err := e.Run(); err != nil {
		t.Fatalf("the line spun instead of waiting: %v", err)
	}
	if g.at[1] != readyFrom {
		t.Fatalf("granted at %v, want %v", g.at[1], time.Duration(readyFrom))
	}
}

// TestTokenBucketReadyAtExactInstants checks ReadyAt's promise — TakeAt
// succeeds at the instant ReadyAt returns — on a bucket that started empty
// at 0 and is asked part-way through a refill, for rates whose per-ns rate
// is not exact in binary: asked at 70,281 ns, 1 token at 100/s is due at
// 10 ms by the float division, yet the level at 10 ms is 10⁷ ns × 10⁻⁷
// tokens/ns = 0.9999999999999999. The instant must also be within 1 ns of
// the exact one, ⌈n·10⁹/rate⌉ ns (integer arithmetic). It catches ReadyAt
// rounding the division up without checking the level it promises (the
// caller's wake-up would then find too few tokens), and a fix-up that
// overshoots.
func TestTokenBucketReadyAtExactInstants(t *testing.T) {
	for _, rate := range []int64{3, 7, 90, 100, 150, 1000, 2000} {
		for n := int64(1); n <= 5; n++ {
			exact := time.Duration((n*1e9 + rate - 1) / rate)
			for _, now := range []time.Duration{0, 70281, 960118, 3390953} {
				b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: float64(rate), Burst: 5, InitialFill: 0}))
				at, ok := b.ReadyAt(now, n)
				if want := max(now, exact); !ok || at < want-1 || at > want+1 {
					t.Errorf("rate %d: ReadyAt(%v, %d) = %v, %v; want %v ± 1ns", rate, now, n, at, ok, want)
				}
				if !b.TakeAt(at, n) {
					t.Errorf("rate %d: ReadyAt(%v, %d) = %v, where TakeAt refuses (%.17g tokens)", rate, now, n, at, b.TokensAt(at))
				}
			}
		}
	}
}

// TestTokenBucketPacedCallerPromise runs a caller that takes one token at
// exactly the instant ReadyAt names, then pauses for either nothing or up to
// 3 ms, 20,000 times per rate (fixed seed), on buckets of capacity 2 whose
// per-ns rate is not exact in binary. Each take must succeed. It catches
// ReadyAt trusting the rounded-up float division without checking the level
// at the instant it returns: a Line's head would wake to find too few
// tokens.
func TestTokenBucketPacedCallerPromise(t *testing.T) {
	for _, rate := range []float64{10, 20, 50, 100, 1000} {
		b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: rate, Burst: 2, InitialFill: 1}))
		r := rand.New(rand.NewPCG(1, 1))
		now := time.Duration(0)
		for i := range 20000 {
			at, ok := b.ReadyAt(now, 1)
			if !ok || at < now {
				t.Fatalf("rate %v step %d: ReadyAt(%v, 1) = %v, %v", rate, i, now, at, ok)
			}
			if !b.TakeAt(at, 1) {
				t.Fatalf("rate %v step %d: ReadyAt(%v, 1) = %v, where TakeAt refuses (%.17g tokens)", rate, i, now, at, b.TokensAt(at))
			}
			now = at
			if r.IntN(2) == 0 {
				now += time.Duration(r.Int64N(int64(3 * ms)))
			}
		}
	}
}
