package models_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/clock/wallclock"
	"github.com/limitsim/limitsim/models"
)

// These tests drive models.Blocking on a wallclock.Loop inside a synctest
// bubble, so the wall clock is fake: instants are exact and nothing sleeps
// for real. Helpers are prefixed blk to stay clear of other test files in
// package models_test.

// blkBound bounds, in fake time, every wait of these tests that has no
// deadline of its own: far beyond the longest wait any test expects (about
// a second), it turns a lost grant or a wake-up that never comes into a
// DeadlineExceeded failure naming the wait, instead of a hang or a bubble
// deadlock.
const blkBound = time.Minute

// blkCtx returns a context that ends blkBound after now (fake time).
func blkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), blkBound)
	t.Cleanup(cancel)
	return ctx
}

// blkMaxEvents caps the events limiters may schedule on a blkLoop: 20
// times the most any test needs (the 5,000 grants of TestBlockingHammer).
const blkMaxEvents = 100000

// blkLoop is the event loop of these tests: a wallclock.Loop that counts the
// events scheduled on it. A limiter bug that keeps re-arming a wake-up 1 ns
// ahead would otherwise have fake time follow it a nanosecond at a time, for
// hours of wall time, before any deadline in fake time came. At the cap the
// test fails with a message and the loop stops (its context is cancelled, as
// a handler must, and later events are dropped), so every Wait returns
// ErrClosed at once. At runs on the loop goroutine only.
type blkLoop struct {
	*wallclock.Loop
	t      *testing.T
	stop   context.CancelFunc
	events int
}

// blkNewLoop starts a loop for t; it stops when t ends at the latest.
func blkNewLoop(t *testing.T) *blkLoop {
	ctx, stop := context.WithCancel(t.Context())
	t.Cleanup(stop)
	return &blkLoop{Loop: wallclock.New(ctx), t: t, stop: stop}
}

// At schedules on the loop, up to blkMaxEvents events.
func (l *blkLoop) At(at time.Duration, h clock.Handler, arg uint64) clock.Timer {
	l.events++
	if l.events < blkMaxEvents {
		return l.Loop.At(at, h, arg)
	}
	if l.events == blkMaxEvents {
		l.t.Errorf("limiters scheduled %d events on the loop: a runaway wake-up loop; stopping the loop", blkMaxEvents)
		l.stop()
	}
	return clock.Timer{}
}

// blkNow returns the loop's current instant, read on the loop.
func blkNow(t *testing.T, l *blkLoop) time.Duration {
	t.Helper()
	var now time.Duration
	blkOnLoop(t, l, func(n time.Duration) { now = n })
	return now
}

// blkOnLoop runs f on the loop goroutine and waits for it.
func blkOnLoop(t *testing.T, l *blkLoop, f func(now time.Duration)) {
	t.Helper()
	done := make(chan struct{})
	if !l.Do(func(now time.Duration) { f(now); close(done) }) {
		t.Fatal("Do refused: loop closed")
	}
	<-done
}

// blkSem builds a Blocking over an unbounded FIFO Line over a Semaphore.
func blkSem(t *testing.T, l *blkLoop, permits int64) (*models.Semaphore, *models.Line, *models.Blocking) {
	t.Helper()
	sem, err := models.NewSemaphore(permits)
	if err != nil {
		t.Fatal(err)
	}
	line := models.NewLine(sem, l, models.Unbounded)
	return sem, line, models.NewBlocking(l, line)
}

// blkState reads the semaphore's permits in use and the line's waiters on the loop.
func blkState(t *testing.T, l *blkLoop, sem *models.Semaphore, line *models.Line) (inUse int64, waiting int) {
	t.Helper()
	blkOnLoop(t, l, func(time.Duration) { inUse, waiting = sem.InUse(), line.Waiting() })
	return inUse, waiting
}

type blkResult struct {
	err error
	at  time.Duration // fake time since the bubble's start
}

// blkGoWait runs b.Wait(ctx, n) on a new goroutine and reports its outcome.
func blkGoWait(ctx context.Context, b *models.Blocking, n int64, start time.Time) <-chan blkResult {
	ch := make(chan blkResult, 1)
	go func() {
		err := b.Wait(ctx, n)
		ch <- blkResult{err, time.Since(start)}
	}()
	return ch
}

// blkPending reports whether ch has not delivered yet.
func blkPending(ch <-chan blkResult) bool {
	select {
	case r := <-ch:
		_ = r
		return false
	default:
		return true
	}
}

func TestBlockingSemaphoreFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 2)

		const n = 5
		var (
			held, peak atomic.Int64
			mu         sync.Mutex
			order      []int
			release    [n]chan struct{}
			closed     int // release[:closed] are closed
			finished   sync.WaitGroup
		)
		// If the test stops early, let every holder go and wait for every
		// waiter (whose context ends at blkBound) before returning, so that
		// none reports to t after the test has ended.
		defer func() {
			for ; closed < n; closed++ {
				close(release[closed])
			}
			finished.Wait()
		}()
		ctx := blkCtx(t)
		for i := range n {
			release[i] = make(chan struct{})
			finished.Add(1)
			go func() {
				defer finished.Done()
				if err := b.Wait(ctx, 1); err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				h := held.Add(1)
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				<-release[i]
				held.Add(-1)
				b.Release(1)
			}()
			synctest.Wait() // waiter i has been granted or parked before i+1 arrives
		}
		granted := func() []int {
			mu.Lock()
			defer mu.Unlock()
			return append([]int(nil), order...)
		}
		if got := granted(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
			t.Fatalf("granted %v at start, want [0 1]", got)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 2 || waiting != 3 {
			t.Fatalf("in use %d waiting %d, want 2 and 3", inUse, waiting)
		}
		// Each release wakes exactly one waiter, the oldest.
		for i := range n {
			close(release[i])
			closed++
			synctest.Wait()
			got := granted()
			wantLen := min(n, i+3)
			if len(got) != wantLen {
				t.Fatalf("after release %d: granted %v, want %d grants", i, got, wantLen)
			}
			inUse, waiting := blkState(t, l, sem, line)
			wantUse := int64(min(2, n-i-1))
			if inUse != wantUse || waiting != max(0, n-i-3) {
				t.Fatalf("after release %d: in use %d waiting %d, want %d and %d", i, inUse, waiting, wantUse, max(0, n-i-3))
			}
		}
		finished.Wait()
		for i, v := range granted() {
			if v != i {
				t.Fatalf("grant order %v, want FIFO", granted())
			}
		}
		if p := peak.Load(); p != 2 {
			t.Fatalf("peak holders %d, want 2", p)
		}
	})
}

func TestBlockingTokenBucketSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		tb, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 1, InitialFill: 1})
		if err != nil {
			t.Fatal(err)
		}
		line := models.NewLine(tb, l, models.Unbounded)
		b := models.NewBlocking(l, line)

		// One caller, back to back: 0, 100ms, 200ms, ...
		prev := time.Duration(-1)
		for i := range 5 {
			if err := b.Wait(blkCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			at := time.Since(start)
			if i == 0 && at != 0 {
				t.Fatalf("first Wait returned at %v, want 0", at)
			}
			if i > 0 {
				// Waits round up to whole nanoseconds, never down.
				if gap := at - prev; gap < 100*time.Millisecond || gap > 100*time.Millisecond+time.Microsecond {
					t.Fatalf("Wait %d: gap %v, want 100ms", i, gap)
				}
			}
			prev = at
		}

		// Five callers parked at once on the now empty bucket are served
		// FIFO, one every 100ms.
		base := time.Since(start)
		var chans []<-chan blkResult
		for range 5 {
			chans = append(chans, blkGoWait(blkCtx(t), b, 1, start))
			synctest.Wait()
		}
		for i, ch := range chans {
			r := <-ch
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := base + time.Duration(i+1)*100*time.Millisecond
			if d := r.at - want; d < 0 || d > time.Microsecond {
				t.Fatalf("caller %d granted at %v, want %v", i, r.at, want)
			}
		}
		blkOnLoop(t, l, func(time.Duration) {
			if line.Waiting() != 0 {
				t.Errorf("Waiting() = %d, want 0", line.Waiting())
			}
		})
	})
}

func TestBlockingTimeoutWhileParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 1)
		if err := b.Wait(blkCtx(t), 1); err != nil { // the holder
			t.Fatal(err)
		}

		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		first := blkGoWait(ctx, b, 1, start) // head of the line, gives up at 50ms
		synctest.Wait()
		second := blkGoWait(blkCtx(t), b, 1, start)
		synctest.Wait()
		if inUse, waiting := blkState(t, l, sem, line); inUse != 1 || waiting != 2 {
			t.Fatalf("in use %d waiting %d, want 1 and 2", inUse, waiting)
		}

		r := <-first
		if !errors.Is(r.err, context.DeadlineExceeded) || r.at != 50*time.Millisecond {
			t.Fatalf("timed-out Wait: %v at %v, want DeadlineExceeded at 50ms", r.err, r.at)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 1 || waiting != 1 {
			t.Fatalf("after timeout: in use %d waiting %d, want 1 and 1", inUse, waiting)
		}
		if !blkPending(second) {
			t.Fatal("second waiter returned without a release")
		}

		time.Sleep(time.Second)
		b.Release(1) // the later waiter gets the permit
		if r := <-second; r.err != nil || r.at != 1050*time.Millisecond {
			t.Fatalf("second Wait: %v at %v, want nil at 1.05s", r.err, r.at)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 1 || waiting != 0 {
			t.Fatalf("end: in use %d waiting %d, want 1 and 0", inUse, waiting)
		}
	})
}

func TestBlockingCancelMidLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 1)
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		a := blkGoWait(blkCtx(t), b, 1, start)
		synctest.Wait()
		ctx, cancel := context.WithCancel(blkCtx(t))
		mid := blkGoWait(ctx, b, 1, start)
		synctest.Wait()
		c := blkGoWait(blkCtx(t), b, 1, start)
		synctest.Wait()

		cancel()
		if r := <-mid; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Wait returned %v", r.err)
		}
		if _, waiting := blkState(t, l, sem, line); waiting != 2 {
			t.Fatalf("waiting %d, want 2", waiting)
		}
		b.Release(1)
		if r := <-a; r.err != nil {
			t.Fatal(r.err)
		}
		synctest.Wait()
		if !blkPending(c) {
			t.Fatal("one release woke two waiters")
		}
		b.Release(1)
		if r := <-c; r.err != nil {
			t.Fatal(r.err)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 1 || waiting != 0 {
			t.Fatalf("in use %d waiting %d, want 1 and 0", inUse, waiting)
		}
	})
}

func TestBlockingCancelledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 1)
		ctx, cancel := context.WithCancel(blkCtx(t))
		cancel()
		if err := b.Wait(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait on a done context: %v", err)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 0 || waiting != 0 {
			t.Fatalf("in use %d waiting %d, want 0 and 0", inUse, waiting)
		}
	})
}

func TestBlockingTokenBucketHeadTimeout(t *testing.T) {
	// The head of a token-bucket line times out; the next caller becomes the
	// head and is served when the bucket refills, not a slot later.
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		tb, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: 10, Burst: 1, InitialFill: 0}) // empty: next token at 100ms
		if err != nil {
			t.Fatal(err)
		}
		line := models.NewLine(tb, l, models.Unbounded)
		b := models.NewBlocking(l, line)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		head := blkGoWait(ctx, b, 1, start)
		synctest.Wait()
		next := blkGoWait(blkCtx(t), b, 1, start)
		if r := <-head; !errors.Is(r.err, context.DeadlineExceeded) || r.at != 50*time.Millisecond {
			t.Fatalf("head: %v at %v", r.err, r.at)
		}
		r := <-next
		if r.err != nil || r.at < 100*time.Millisecond || r.at > 100*time.Millisecond+time.Microsecond {
			t.Fatalf("next: %v at %v, want nil at 100ms", r.err, r.at)
		}
	})
}

// TestBlockingGrantDecidedBeforeCancel covers the race Wait resolves when its
// context ends: the limiter has already decided the grant, so Cancel fails,
// Wait takes the grant and must give the permit back. Each case pins the
// interleaving by holding the loop goroutine on a gate.
func TestBlockingGrantDecidedBeforeCancel(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, l *blkLoop, line *models.Line, b *models.Blocking, cancel context.CancelFunc)
	}{
		{
			// The grant is decided and delivered to the waiter's channel
			// before Wait's cancel function reaches the loop.
			name: "delivered",
			run: func(t *testing.T, l *blkLoop, line *models.Line, b *models.Blocking, cancel context.CancelFunc) {
				gate := make(chan struct{})
				l.Do(func(now time.Duration) {
					line.Release(now, 1) // grants the waiter: event at now
					cancel()
					<-gate
				})
				synctest.Wait() // Wait saw ctx.Done and queued its cancel
				close(gate)
			},
		},
		{
			// The grant is decided in the same round as the cancel function
			// runs, before its event fires: Cancel fails and Wait must block
			// for the grant, then release it.
			name: "decided",
			run: func(t *testing.T, l *blkLoop, line *models.Line, b *models.Blocking, cancel context.CancelFunc) {
				gate := make(chan struct{})
				l.Do(func(time.Duration) { <-gate })
				synctest.Wait()
				b.Release(1) // queued ahead of Wait's cancel function
				cancel()
				synctest.Wait()
				close(gate)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				l := blkNewLoop(t)
				defer l.Close()
				sem, line, b := blkSem(t, l, 1)
				if err := b.Wait(blkCtx(t), 1); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(blkCtx(t))
				defer cancel()
				w := blkGoWait(ctx, b, 1, start)
				synctest.Wait()
				tc.run(t, l, line, b, cancel)
				r := <-w
				if !errors.Is(r.err, context.Canceled) {
					t.Fatalf("Wait returned %v, want context.Canceled", r.err)
				}
				synctest.Wait() // let the give-back reach the loop
				if inUse, waiting := blkState(t, l, sem, line); inUse != 0 || waiting != 0 {
					t.Fatalf("in use %d waiting %d, want 0 and 0 (permit leaked)", inUse, waiting)
				}
				// The permit is really free: a newcomer gets it at once.
				if err := b.Wait(blkCtx(t), 1); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestBlockingCancelBeforeAcquireRuns(t *testing.T) {
	// The context ends while Wait's acquire function is still queued: the
	// acquire then succeeds at once and Wait must hand the permit back.
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		sem, line, b := blkSem(t, l, 1)
		gate := make(chan struct{})
		l.Do(func(time.Duration) { <-gate })
		synctest.Wait()
		ctx, cancel := context.WithCancel(blkCtx(t))
		defer cancel()
		w := blkGoWait(ctx, b, 1, start)
		synctest.Wait() // acquire queued behind the gate
		cancel()
		synctest.Wait() // cancel queued too
		close(gate)
		if r := <-w; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("Wait returned %v, want context.Canceled", r.err)
		}
		synctest.Wait()
		if inUse, waiting := blkState(t, l, sem, line); inUse != 0 || waiting != 0 {
			t.Fatalf("in use %d waiting %d, want 0 and 0 (permit leaked)", inUse, waiting)
		}
	})
}

func TestBlockingRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		defer l.Close()
		sem, err := models.NewSemaphore(1)
		if err != nil {
			t.Fatal(err)
		}
		line := models.NewLine(sem, l, models.AtMost(0)) // never wait
		b := models.NewBlocking(l, line)
		if err := b.Wait(blkCtx(t), 2); !errors.Is(err, models.ErrRejected) {
			t.Fatalf("Wait(2) on 1 permit: %v, want ErrRejected", err)
		}
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		if err := b.Wait(blkCtx(t), 1); !errors.Is(err, models.ErrRejected) {
			t.Fatalf("Wait on a full zero-length line: %v, want ErrRejected", err)
		}
		if inUse, waiting := blkState(t, l, sem, line); inUse != 1 || waiting != 0 {
			t.Fatalf("in use %d waiting %d, want 1 and 0", inUse, waiting)
		}
	})
}

func TestBlockingXRateTooLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		x, err := models.NewXRate(10, 1, l)
		if err != nil {
			t.Fatal(err)
		}
		b := models.NewBlocking(l, x)
		if err := b.Wait(blkCtx(t), 1); err != nil { // the burst
			t.Fatal(err)
		}
		// The next token matures at 100ms, after this deadline: fail at once.
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err = b.Wait(ctx, 1)
		if !errors.Is(err, models.ErrRejected) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait: %v, want ErrRejected", err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("rejected Wait took %v of fake time, want 0", d)
		}
		// The refused reservation was given back: the next token is still at 100ms.
		ctx2, cancel2 := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel2()
		if err := b.Wait(ctx2, 1); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Fatalf("Wait returned at %v, want 100ms", d)
		}
		if err := b.Wait(blkCtx(t), 2); !errors.Is(err, models.ErrRejected) {
			t.Fatalf("Wait(2) over burst 1: %v, want ErrRejected", err)
		}
		blkOnLoop(t, l, func(time.Duration) {
			if x.Waiting() != 0 {
				t.Errorf("Waiting() = %d, want 0", x.Waiting())
			}
		})
	})
}

func TestBlockingXRateCancelReturnsTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		defer l.Close()
		x, err := models.NewXRate(10, 1, l)
		if err != nil {
			t.Fatal(err)
		}
		b := models.NewBlocking(l, x)
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(blkCtx(t))
		first := blkGoWait(ctx, b, 1, start) // reservation matures at 100ms
		synctest.Wait()
		time.Sleep(50 * time.Millisecond)
		cancel()
		if r := <-first; !errors.Is(r.err, context.Canceled) || r.at != 50*time.Millisecond {
			t.Fatalf("cancelled Wait: %v at %v", r.err, r.at)
		}
		blkOnLoop(t, l, func(time.Duration) {
			if x.Waiting() != 0 {
				t.Errorf("Waiting() = %d after cancel, want 0", x.Waiting())
			}
		})
		// The cancelled reservation's token went back: a newcomer at 50ms
		// waits for the same 100ms token, not one at 200ms.
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Fatalf("Wait returned at %v, want 100ms", d)
		}
	})
}

// TestBlockingXRateHugeTimeout: a context whose deadline is far away must
// behave like no deadline: with the burst spent at 1 s, Wait waits for the
// next token and returns exactly 100 ms later, at 1.1 s on the loop's clock.
// Regression test: Wait once computed the limiter deadline as
// now + time.Until(dl) without saturation, so once the loop's now was
// positive a timeout near math.MaxInt64 wrapped negative and XRate refused
// with TooLate. It also catches a deadline read as "already past" in other
// ways (a refusal, or a return before the token matures) and a wait that
// overshoots the token.
func TestBlockingXRateHugeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			burstAt   = time.Second                    // the loop's clock when the burst is taken
			nextToken = burstAt + 100*time.Millisecond // 10 tokens/s
		)
		l := blkNewLoop(t)
		defer l.Close()
		x, err := models.NewXRate(10, 1, l)
		if err != nil {
			t.Fatal(err)
		}
		b := models.NewBlocking(l, x)
		time.Sleep(burstAt)
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		if now := blkNow(t, l); now != burstAt {
			t.Fatalf("burst taken at %v, want at once at %v", now, burstAt)
		}
		ctx, cancel := context.WithTimeout(t.Context(), math.MaxInt64)
		defer cancel()
		if err := b.Wait(ctx, 1); err != nil {
			t.Fatalf("Wait with a ~292-year timeout: %v, want a 100ms wait", err)
		}
		if now := blkNow(t, l); now != nextToken {
			t.Fatalf("Wait with a ~292-year timeout returned at %v on the loop's clock, want %v (the next token)", now, nextToken)
		}
		blkOnLoop(t, l, func(time.Duration) {
			if x.Waiting() != 0 {
				t.Errorf("Waiting() = %d, want 0", x.Waiting())
			}
		})
	})
}

func TestBlockingClosedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		sem, _, b := blkSem(t, l, 1)
		l.Close()
		if err := b.Wait(blkCtx(t), 1); !errors.Is(err, models.ErrClosed) {
			t.Fatalf("Wait on a closed loop: %v, want ErrClosed", err)
		}
		b.Release(1) // a no-op, must not block or panic
		if sem.InUse() != 0 {
			t.Fatalf("in use %d", sem.InUse())
		}
	})
}

// TestBlockingCloseWakesParked: a caller parked when the loop closes should
// get ErrClosed. Wait selects only on its grant channel and ctx.Done, so it
// stays blocked until its context ends (forever with context.Background).
func TestBlockingCloseWakesParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := blkNewLoop(t)
		_, _, b := blkSem(t, l, 1)
		if err := b.Wait(blkCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		// The hour-long timeout only bounds the test if the bug is present.
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		w := blkGoWait(ctx, b, 1, start)
		synctest.Wait()
		l.Close()
		r := <-w
		if !errors.Is(r.err, models.ErrClosed) || r.at != 0 {
			t.Fatalf("parked Wait after Close: %v at %v, want ErrClosed at once", r.err, r.at)
		}
	})
}

// blkHammer runs goroutines×rounds Wait/Release cycles on a semaphore with
// the given permits, a third of them with short timeouts so that
// cancellations race grants, and checks that no more than permits callers
// ever hold at once and that nothing leaks.
//
// bound limits the whole run: every Wait derives its context from one that
// ends after bound, and the test fails if it did, so a lost grant or release
// fails with a message rather than hanging.
func blkHammer(t *testing.T, l *blkLoop, goroutines, rounds int, permits int64, bound time.Duration, hold func(r *rand.Rand)) {
	run, stop := context.WithTimeout(t.Context(), bound)
	defer stop()
	sem, line, b := blkSem(t, l, permits)
	var (
		held, peak, over atomic.Int64
		grants, timeouts atomic.Int64
		wg               sync.WaitGroup
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range rounds {
				ctx, cancel := run, context.CancelFunc(func() {})
				if r.IntN(3) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(200))*time.Microsecond)
				}
				err := b.Wait(ctx, 1)
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Wait: %v", err)
						return
					}
					timeouts.Add(1)
					continue
				}
				grants.Add(1)
				h := held.Add(1)
				if h > permits {
					over.Add(1)
				}
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				hold(r)
				held.Add(-1)
				b.Release(1)
			}
		}()
	}
	wg.Wait()
	if run.Err() != nil {
		t.Fatalf("the run did not finish within %v (%d grants, %d timeouts): a grant or a release was lost", bound, grants.Load(), timeouts.Load())
	}
	if over.Load() != 0 || peak.Load() > permits {
		t.Fatalf("%d grants exceeded %d permits (peak %d)", over.Load(), permits, peak.Load())
	}
	// Releases are asynchronous; once this Do runs, all earlier ones have.
	inUse, waiting := blkState(t, l, sem, line)
	if inUse != 0 || waiting != 0 {
		t.Fatalf("after the run: in use %d waiting %d, want 0 and 0", inUse, waiting)
	}
	t.Logf("%d grants, %d timeouts, peak %d holders", grants.Load(), timeouts.Load(), peak.Load())
}

func TestBlockingHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := blkNewLoop(t)
		defer l.Close()
		blkHammer(t, l, 50, 100, 3, blkBound, func(r *rand.Rand) {
			time.Sleep(time.Duration(r.IntN(100)) * time.Microsecond)
		})
	})
}

// TestBlockingHammerWallClock is the same run on the real clock, briefly:
// real timers, real preemption, invariants only.
func TestBlockingHammerWallClock(t *testing.T) {
	l := blkNewLoop(t)
	defer l.Close()
	// The run takes tens of milliseconds; 10 s of wall time bounds it with a
	// wide margin on a loaded machine under the race detector.
	blkHammer(t, l, 50, 20, 3, 10*time.Second, func(r *rand.Rand) {
		if r.IntN(2) == 0 {
			time.Sleep(time.Duration(r.IntN(50)) * time.Microsecond)
		}
	})
}
