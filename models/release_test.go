package models_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
)

// TestSemaphoreCore walks a 5-permit semaphore through weighted takes and
// releases, checking permits in use, readiness and usage after each step.
// It catches a release that frees 1 permit instead of n, a take or
// readiness test that refuses a request that exactly fits, a release of more
// than is held that drives the count negative (admitting more than the
// permits afterwards), and an inverted usage.
func TestSemaphoreCore(t *testing.T) {
	const now = 3 * time.Second // the semaphore ignores time; any instant will do
	sem := must[*models.Semaphore](t)(models.NewSemaphore(5))
	type step struct {
		op    string // take, release, ready
		n     int64
		ok    bool    // take / ready result
		inUse int64   // after the step
		usage float64 // after the step
	}
	steps := []step{
		{"take", 3, true, 3, 0.6},
		{"take", 3, false, 3, 0.6}, // 6 > 5
		{"ready", 3, false, 3, 0.6},
		{"ready", 2, true, 3, 0.6}, // exactly fits
		{"take", 2, true, 5, 1},    // exactly fits
		{"ready", 1, false, 5, 1},
		{"release", 2, false, 3, 0.6}, // weighted: frees 2
		{"take", 2, true, 5, 1},
		{"release", 4, false, 1, 0.2},
		{"release", 10, false, 0, 0}, // more than held: clamped
		{"take", 5, true, 5, 1},      // all five, and no more
		{"take", 1, false, 5, 1},
		{"release", 5, false, 0, 0},
	}
	for i, s := range steps {
		switch s.op {
		case "take":
			if got := sem.TakeAt(now, s.n); got != s.ok {
				t.Fatalf("step %d: TakeAt(%d) = %v, want %v", i, s.n, got, s.ok)
			}
		case "ready":
			at, ok := sem.ReadyAt(now, s.n)
			if ok != s.ok || (ok && at != now) {
				t.Fatalf("step %d: ReadyAt(%d) = %v, %v; want %v (at now if ready)", i, s.n, at, ok, s.ok)
			}
		case "release":
			sem.ReleaseAt(now, s.n)
		}
		if sem.InUse() != s.inUse || sem.Usage(now) != s.usage {
			t.Fatalf("step %d (%s %d): in use %d usage %v, want %d and %v", i, s.op, s.n, sem.InUse(), sem.Usage(now), s.inUse, s.usage)
		}
	}
	if sem.Max() != 5 {
		t.Fatalf("Max() = %d, want 5", sem.Max())
	}
}

// TestNewSemaphoreRejectsNoPermits catches a constructor that accepts a
// semaphore of zero permits (every acquisition would then wait forever).
func TestNewSemaphoreRejectsNoPermits(t *testing.T) {
	for _, p := range []int64{0, -1} {
		if _, err := models.NewSemaphore(p); !errors.Is(err, models.ErrConfig) {
			t.Errorf("NewSemaphore(%d): %v, want ErrConfig", p, err)
		}
	}
	if _, err := models.NewSemaphore(1); err != nil {
		t.Fatalf("NewSemaphore(1): %v", err)
	}
}

// TestLineWeightedRelease checks a weighted release through a Line: with 4
// permits all held and waiters for 2 and 2, Release(4) grants both at the
// release instant; a later Release(3) leaves exactly 1 in use so that an
// acquisition of 3 passes at once. It catches Line.Release (or the core's
// ReleaseAt) returning 1 unit instead of n.
func TestLineWeightedRelease(t *testing.T) {
	const (
		releaseAt = 10 * ms
		secondAt  = 20 * ms
	)
	e := modelEngine(1, 5)
	sem := must[*models.Semaphore](t)(models.NewSemaphore(4))
	l := models.NewLine(sem, e, models.Unbounded)
	saturate(t, l, 4)
	g := newGrants()
	for id := range uint64(2) {
		if _, st := l.Acquire(0, 2, clock.Never, g, id); st != models.Parked {
			t.Fatalf("waiter %d: %v, want parked", id, st)
		}
	}
	e.At(releaseAt, clock.HandlerFunc(func(now time.Duration, _ uint64) { l.Release(now, 4) }), 0)
	mustRun(t, e.Run())
	if len(g.order) != 2 || g.at[0] != releaseAt || g.at[1] != releaseAt {
		t.Fatalf("after Release(4): granted %v at %v, want both waiters at %v", g.order, g.at, releaseAt)
	}
	if sem.InUse() != 4 || l.Waiting() != 0 {
		t.Fatalf("in use %d waiting %d, want 4 and 0", sem.InUse(), l.Waiting())
	}
	l.Release(secondAt, 3)
	if sem.InUse() != 1 {
		t.Fatalf("after Release(3) of 4: in use %d, want 1", sem.InUse())
	}
	if _, st := l.Acquire(secondAt, 3, clock.Never, g, 9); st != models.Granted {
		t.Fatalf("acquisition of the 3 released permits: %v, want granted", st)
	}
}

// TestBlockingWeightedRelease checks Blocking.Release(n) on a 3-permit
// semaphore: one goroutine holds all three, another waits for three, and
// Release(3) lets it through at once. It catches Blocking.Release returning
// 1 unit instead of n (the waiter would then hang; its one-minute deadline of
// fake time turns that into a failure).
func TestBlockingWeightedRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 3)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := b.Wait(ctx, 3); err != nil {
			t.Fatal(err)
		}
		var releasedAt time.Duration
		w := make(chan error, 1)
		go func() { w <- b.Wait(ctx, 3) }()
		synctest.Wait()
		if inUse, waiting := blkState(t, l, sem, line); inUse != 3 || waiting != 1 {
			t.Fatalf("in use %d waiting %d, want 3 and 1", inUse, waiting)
		}
		blkOnLoop(t, l, func(now time.Duration) { releasedAt = now })
		b.Release(3)
		if err := <-w; err != nil {
			t.Fatalf("Wait(3) after Release(3): %v", err)
		}
		var grantedBy time.Duration
		blkOnLoop(t, l, func(now time.Duration) { grantedBy = now })
		if grantedBy != releasedAt {
			t.Fatalf("waiter released at %v, granted by %v: want no wait after the release", releasedAt, grantedBy)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 3 || waiting != 0 {
			t.Fatalf("in use %d waiting %d, want 3 and 0", inUse, waiting)
		}
		b.Release(2)
		if inUse, _ := blkState(t, l, sem, line); inUse != 1 {
			t.Fatalf("after Release(2) of 3: in use %d, want 1", inUse)
		}
	})
}
