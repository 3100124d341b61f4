package models_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

const ms = time.Millisecond

// grants records every grant delivered as an event: arg → instant.
type grants struct {
	order []uint64
	at    map[uint64]time.Duration
}

func newGrants() *grants { return &grants{at: map[uint64]time.Duration{}} }

func (g *grants) Fire(now time.Duration, arg uint64) {
	if _, dup := g.at[arg]; dup {
		panic(fmt.Sprintf("grant %d delivered twice", arg))
	}
	g.order = append(g.order, arg)
	g.at[arg] = now
}

// factory builds a limiter that, after one saturating acquisition of the
// returned size at instant 0, makes every further acquisition of 1 wait.
type factory struct {
	name string
	fifo bool
	make func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64)
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

var factories = []factory{
	{"token_bucket", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return models.NewLine(must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 2, InitialFill: 1})), e, bound), 2
	}},
	{"gcra", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return models.NewLine(must[*models.GCRA](t)(models.NewGCRA(models.GCRAConfig{Rate: 10, Burst: 2})), e, bound), 2
	}},
	{"sliding_window", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return models.NewLine(must[*models.SlidingLog](t)(models.NewSlidingLog(2, time.Second)), e, bound), 2
	}},
	{"sliding_window_counter", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return models.NewLine(must[*models.SlidingCounter](t)(models.NewSlidingCounter(2, time.Second)), e, bound), 2
	}},
	{"fixed_window", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return models.NewLine(must[*models.FixedWindow](t)(models.NewFixedWindow(2, time.Second)), e, bound), 2
	}},
	{"semaphore", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		l := models.NewLine(must[*models.Semaphore](t)(models.NewSemaphore(2)), e, bound)
		// Free one permit every 100 ms so that waiters are served over time.
		var tick clock.HandlerFunc
		tick = func(now time.Duration, _ uint64) {
			l.Release(now, 1)
			if now < 10*time.Second {
				e.After(100*ms, tick, 0)
			}
		}
		e.At(100*ms, tick, 0)
		return l, 2
	}},
	{"locked_bucket", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		core := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 2, InitialFill: 1}))
		return models.NewLockedBucket(core, e, nil, 0), 2
	}},
	{"polling_bucket", false, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		core := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 2, InitialFill: 1}))
		return models.NewPollingBucket(core, e, nil), 2
	}},
	{"xrate", true, func(t *testing.T, e *sim.Engine, bound models.Bound) (models.Limiter, int64) {
		return must[*models.XRate](t)(models.NewXRate(10, 2, e)), 2
	}},
}

// modelEngine returns an engine for a model test, guarded at 20 times the
// events the test is expected to fire and at 1,000 events per instant, so
// that a limiter which keeps scheduling wake-ups (re-armed 1 ns ahead, or at
// the same instant) stops the run with a *sim.GuardError at once instead of
// hanging the test. Check every run with mustRun.
func modelEngine(seed, expectedEvents uint64) *sim.Engine {
	e := sim.New(seed)
	e.SetLimits(sim.Limits{MaxEvents: 20 * expectedEvents, MaxEventsPerInstant: 1000})
	return e
}

// mustRun fails the test if a run stopped with an error: a guard tripped (a
// runaway limiter) or a stall.
func mustRun(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("run stopped: %v", err)
	}
}

// conformanceEvents is about the most events one conformance case fires
// (the semaphore's release ticks every 100 ms for 10 s).
const conformanceEvents = 200

// saturate takes the limiter's whole allowance at instant 0.
func saturate(t *testing.T, l models.Limiter, n int64) {
	t.Helper()
	if _, st := l.Acquire(0, n, clock.Never, nil, 0); st != models.Granted {
		t.Fatalf("saturating acquisition of %d: %v", n, st)
	}
}

// The conformance suite: every limiter with a waiting line obeys these.
func TestConformance(t *testing.T) {
	for _, f := range factories {
		t.Run(f.name, func(t *testing.T) {
			t.Run("grants after waiting, in order", func(t *testing.T) {
				e := modelEngine(1, conformanceEvents)
				l, full := f.make(t, e, models.Unbounded)
				saturate(t, l, full)
				g := newGrants()
				for i := range uint64(5) {
					e.At(time.Duration(i)*ms, clock.HandlerFunc(func(now time.Duration, _ uint64) {
						if _, st := l.Acquire(now, 1, clock.Never, g, i); st != models.Parked {
							t.Errorf("waiter %d: %v, want parked", i, st)
						}
					}), 0)
				}
				mustRun(t, e.RunUntil(time.Millisecond*4))
				if l.Waiting() != 5 {
					t.Fatalf("waiting %d, want 5", l.Waiting())
				}
				mustRun(t, e.Run())
				if len(g.order) != 5 || l.Waiting() != 0 {
					t.Fatalf("granted %v, waiting %d", g.order, l.Waiting())
				}
				if f.fifo && !slices.Equal(g.order, []uint64{0, 1, 2, 3, 4}) {
					t.Fatalf("grant order %v, want FIFO", g.order)
				}
				for _, a := range g.order {
					if g.at[a] < time.Duration(a)*ms {
						t.Fatalf("waiter %d granted at %v, before it asked", a, g.at[a])
					}
				}
			})
			t.Run("cancel leaves the line exact", func(t *testing.T) {
				e := modelEngine(1, conformanceEvents)
				l, full := f.make(t, e, models.Unbounded)
				saturate(t, l, full)
				g := newGrants()
				tk := make([]models.Ticket, 3)
				for i := range tk {
					tk[i], _ = l.Acquire(0, 1, clock.Never, g, uint64(i))
				}
				if !l.Cancel(0, tk[0]) || !l.Cancel(0, tk[1]) {
					t.Fatal("cancel of parked waiters failed")
				}
				if l.Cancel(0, tk[1]) {
					t.Fatal("second cancel succeeded")
				}
				if l.Waiting() != 1 {
					t.Fatalf("waiting %d after two cancels, want 1", l.Waiting())
				}
				mustRun(t, e.Run())
				if !slices.Equal(g.order, []uint64{2}) {
					t.Fatalf("granted %v, want only the survivor", g.order)
				}
				if l.Cancel(e.Now(), tk[2]) {
					t.Fatal("cancel after the grant succeeded")
				}
			})
			t.Run("cancel racing the grant", func(t *testing.T) {
				e := modelEngine(1, conformanceEvents)
				l, full := f.make(t, e, models.Unbounded)
				saturate(t, l, full)
				g := newGrants()
				tk, _ := l.Acquire(0, 1, clock.Never, g, 7)
				// Probe for the grant instant, then replay with a cancel
				// scheduled at exactly that instant.
				mustRun(t, e.Run())
				at, ok := g.at[7]
				if !ok {
					t.Fatal("no grant")
				}
				e2 := modelEngine(1, conformanceEvents)
				l2, _ := f.make(t, e2, models.Unbounded)
				saturate(t, l2, full)
				g2 := newGrants()
				tk2, _ := l2.Acquire(0, 1, clock.Never, g2, 7)
				var cancelled bool
				e2.At(at, clock.HandlerFunc(func(now time.Duration, _ uint64) { cancelled = l2.Cancel(now, tk2) }), 0)
				mustRun(t, e2.Run())
				_, granted := g2.at[7]
				if cancelled == granted {
					t.Fatalf("cancelled %v and granted %v: exactly one must hold", cancelled, granted)
				}
				_ = tk
			})
			t.Run("too large", func(t *testing.T) {
				e := modelEngine(1, conformanceEvents)
				l, _ := f.make(t, e, models.Unbounded)
				if _, st := l.Acquire(0, 1<<40, clock.Never, nil, 0); st != models.TooLarge {
					t.Fatalf("huge acquisition: %v, want too_large", st)
				}
			})
		})
	}
}

func TestLineBound(t *testing.T) {
	e := sim.New(1)
	l := models.NewLine(must[*models.Semaphore](t)(models.NewSemaphore(1)), e, models.AtMost(2))
	saturate(t, l, 1)
	g := newGrants()
	for i, want := range []models.Status{models.Parked, models.Parked, models.Full} {
		if _, st := l.Acquire(0, 1, clock.Never, g, uint64(i)); st != want {
			t.Fatalf("acquisition %d: %v, want %v", i, st, want)
		}
	}
	never := models.NewLine(must[*models.Semaphore](t)(models.NewSemaphore(1)), e, models.AtMost(0))
	saturate(t, never, 1)
	if _, st := never.Acquire(0, 1, clock.Never, g, 9); st != models.Full {
		t.Fatalf("max_waiting 0: %v, want full", st)
	}
}

// A large request at the head holds back smaller ones (strict FIFO, no
// barging), and a release wakes exactly the waiters that fit.
func TestSemaphoreHeadOfLine(t *testing.T) {
	e := modelEngine(1, 10)
	l := models.NewLine(must[*models.Semaphore](t)(models.NewSemaphore(3)), e, models.Unbounded)
	saturate(t, l, 2)
	g := newGrants()
	l.Acquire(0, 3, clock.Never, g, 1) // needs all three
	if _, st := l.Acquire(0, 1, clock.Never, g, 2); st != models.Parked {
		t.Fatalf("small request barged past the head: %v", st)
	}
	l.Release(ms, 1)
	mustRun(t, e.Run())
	if len(g.order) != 0 {
		t.Fatalf("granted %v with only 2 free", g.order)
	}
	l.Release(2*ms, 1)
	mustRun(t, e.Run())
	if !slices.Equal(g.order, []uint64{1}) {
		t.Fatalf("granted %v, want the head only", g.order)
	}
	l.Release(3*ms, 3)
	mustRun(t, e.Run())
	if !slices.Equal(g.order, []uint64{1, 2}) {
		t.Fatalf("granted %v", g.order)
	}
}

// Only the head of a timed line holds a timer: a thousand waiters on a token
// bucket leave one pending event, not a thousand.
func TestOnlyHeadHoldsTimer(t *testing.T) {
	// Ten grants and their wake-ups are due by 1 s; a wake-up re-armed 1 ns
	// at a time would fire 10⁹ events.
	e := modelEngine(1, 20)
	l := models.NewLine(must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 1, InitialFill: 0})), e, models.Unbounded)
	g := newGrants()
	for i := range uint64(1000) {
		l.Acquire(0, 1, clock.Never, g, i)
	}
	if e.Pending() != 1 {
		t.Fatalf("%d timers pending for 1000 waiters, want 1", e.Pending())
	}
	mustRun(t, e.RunUntil(time.Second))
	// After one second exactly 10 tokens have accrued: grants at 100ms … 1s.
	if len(g.order) != 10 || g.at[9] != time.Second {
		t.Fatalf("granted %d by 1s (last at %v), want 10 with the last at 1s", len(g.order), g.at[9])
	}
}

func TestXRateFailsAtOnceWhenTooLate(t *testing.T) {
	e := modelEngine(1, 10)
	x := must[*models.XRate](t)(models.NewXRate(10, 1, e))
	saturate(t, x, 1)
	g := newGrants()
	if _, st := x.Acquire(0, 1, 50*ms, g, 1); st != models.TooLate {
		t.Fatalf("reservation maturing at 100ms with deadline 50ms: %v, want too_late", st)
	}
	// The refused reservation gave its tokens back: the next waits 100ms, not 200ms.
	if _, st := x.Acquire(0, 1, clock.Never, g, 2); st != models.Parked {
		t.Fatalf("second acquisition: %v", st)
	}
	mustRun(t, e.Run())
	if g.at[2] != 100*ms {
		t.Fatalf("granted at %v, want 100ms", g.at[2])
	}
}

func ExampleLine() {
	e := sim.New(1)
	bucket, _ := models.NewTokenBucket(models.TokenBucketConfig{Rate: 5, Burst: 2, InitialFill: 1}) // 5/s, burst 2, starts full
	line := models.NewLine(bucket, e, models.Unbounded)
	granted := clock.HandlerFunc(func(now time.Duration, req uint64) {
		fmt.Printf("request %d granted at %v\n", req, now)
	})
	for req := range uint64(5) {
		if _, st := line.Acquire(0, 1, clock.Never, granted, req); st == models.Granted {
			fmt.Printf("request %d passes at once\n", req)
		}
	}
	e.Run()
	// Output:
	// request 0 passes at once
	// request 1 passes at once
	// request 2 granted at 200ms
	// request 3 granted at 400ms
	// request 4 granted at 600ms
}
