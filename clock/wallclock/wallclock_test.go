package wallclock_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/clock/wallclock"
)

// Every test runs inside a synctest bubble: time.Now, time.Since and the
// loop's timer are fake, so the instants below are exact and the tests take
// no wall time. Each loop is created inside the bubble and closed before the
// bubble ends.

// tracer records "name@now" for every event it receives. It is touched only
// on the loop goroutine; tests read it through onLoop or after Close.
type tracer struct {
	names []string
	log   []string
}

func (tr *tracer) Fire(now time.Duration, arg uint64) {
	tr.log = append(tr.log, fmt.Sprintf("%s@%v", tr.names[arg], now))
}

func (tr *tracer) name(s string) uint64 {
	tr.names = append(tr.names, s)
	return uint64(len(tr.names) - 1)
}

// onLoop runs f on the loop goroutine and waits for it to finish.
func onLoop(t *testing.T, l *wallclock.Loop, f func(now time.Duration)) {
	t.Helper()
	done := make(chan struct{})
	if !l.Do(func(now time.Duration) { f(now); close(done) }) {
		t.Fatal("Do refused: loop closed")
	}
	<-done
}

// trace returns a copy of the tracer's log, read on the loop goroutine.
func trace(t *testing.T, l *wallclock.Loop, tr *tracer) []string {
	t.Helper()
	var out []string
	onLoop(t, l, func(time.Duration) { out = slices.Clone(tr.log) })
	return out
}

func TestLoopNowFollowsWallClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		if got := l.Now(); got != 0 {
			t.Fatalf("Now at start = %v, want 0", got)
		}
		time.Sleep(1500 * time.Millisecond)
		onLoop(t, l, func(now time.Duration) {
			if now != 1500*time.Millisecond || l.Now() != now {
				t.Errorf("Do got now %v, Now() %v, want 1.5s", now, l.Now())
			}
		})
	})
}

func TestLoopOrderAndTies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		onLoop(t, l, func(time.Duration) {
			l.At(30*time.Millisecond, tr, tr.name("c"))
			l.At(10*time.Millisecond, tr, tr.name("a1"))
			l.At(20*time.Millisecond, tr, tr.name("b"))
			l.At(10*time.Millisecond, tr, tr.name("a2")) // same instant: after a1
			l.At(10*time.Millisecond, tr, tr.name("a3"))
			clock.After(l, 25*time.Millisecond, tr, tr.name("after"))
		})
		time.Sleep(15 * time.Millisecond)
		if got, want := trace(t, l, tr), []string{"a1@10ms", "a2@10ms", "a3@10ms"}; !slices.Equal(got, want) {
			t.Fatalf("trace at 15ms %v, want %v", got, want)
		}
		time.Sleep(time.Second)
		want := []string{"a1@10ms", "a2@10ms", "a3@10ms", "b@20ms", "after@25ms", "c@30ms"}
		if got := trace(t, l, tr); !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
		if d := time.Since(start); d != 1015*time.Millisecond {
			t.Fatalf("fake time elapsed %v", d)
		}
	})
}

func TestLoopHandlerSchedulesMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		var (
			now0  = tr.name("now")
			later = tr.name("later")
			done  = tr.name("do")
		)
		onLoop(t, l, func(time.Duration) {
			l.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
				l.At(now, tr, now0) // same instant: runs in this same round
				clock.After(l, time.Millisecond, tr, later)
				// Do from a handler runs on the loop too, after this round.
				l.Do(func(now time.Duration) { tr.Fire(now, done) })
			}), 0)
		})
		time.Sleep(2 * time.Second)
		want := []string{"now@1s", "do@1s", "later@1.001s"}
		if got := trace(t, l, tr); !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
	})
}

func TestLoopCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		var a, b, c clock.Timer
		onLoop(t, l, func(time.Duration) {
			a = l.At(time.Second, tr, tr.name("a"))
			b = l.At(2*time.Second, tr, tr.name("b"))
			c = l.At(3*time.Second, tr, tr.name("c"))
			if !l.Cancel(a) {
				t.Error("Cancel(a) = false for a pending event")
			}
			if l.Cancel(a) {
				t.Error("second Cancel(a) = true")
			}
			if l.Cancel(clock.Timer{}) {
				t.Error("Cancel(zero Timer) = true")
			}
			// b cancels c when it fires.
			l.At(2*time.Second, clock.HandlerFunc(func(time.Duration, uint64) {
				if !l.Cancel(c) {
					t.Error("Cancel(c) from a handler = false")
				}
			}), 0)
		})
		time.Sleep(5 * time.Second)
		if got, want := trace(t, l, tr), []string{"b@2s"}; !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
		onLoop(t, l, func(time.Duration) {
			if l.Cancel(b) {
				t.Error("Cancel of a fired event = true")
			}
			// a's slot may be reused; the stale handle must not cancel the new event.
			l.At(6*time.Second, tr, tr.name("d"))
			if l.Cancel(a) {
				t.Error("stale handle cancelled a new event")
			}
		})
		time.Sleep(2 * time.Second)
		if got, want := trace(t, l, tr), []string{"b@2s", "d@6s"}; !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
	})
}

func TestLoopCancelEarliestRearmsTimer(t *testing.T) {
	// Cancelling the event the loop's timer is armed for must not stall or
	// misfire the next one.
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		var a clock.Timer
		onLoop(t, l, func(time.Duration) {
			a = l.At(100*time.Millisecond, tr, tr.name("a"))
			l.At(300*time.Millisecond, tr, tr.name("b"))
		})
		time.Sleep(50 * time.Millisecond)
		onLoop(t, l, func(time.Duration) { l.Cancel(a) })
		time.Sleep(200 * time.Millisecond)
		if got := trace(t, l, tr); len(got) != 0 {
			t.Fatalf("trace at 250ms %v, want nothing", got)
		}
		time.Sleep(100 * time.Millisecond)
		if got, want := trace(t, l, tr), []string{"b@300ms"}; !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
	})
}

func TestLoopPastEventFiresImmediately(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		time.Sleep(5 * time.Second)
		start := time.Now()
		l.Do(func(time.Duration) {
			l.At(-time.Second, tr, tr.name("neg"))
			l.At(time.Second, tr, tr.name("past"))
			l.At(clock.Never, tr, tr.name("never"))
		})
		synctest.Wait() // the loop is idle again, and no fake time has passed
		if d := time.Since(start); d != 0 {
			t.Fatalf("fake time advanced %v", d)
		}
		want := []string{"neg@5s", "past@5s"}
		if got := trace(t, l, tr); !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
	})
}

// TestLoopPastEventsKeepScheduleOrder checks clock.Scheduler's contract:
// "An instant before Now runs at Now. Events at the same instant run in the
// order they were scheduled." sim.Engine clamps t to Now in At; Loop.At does
// not, so past events are ordered by their raw instant instead.
func TestLoopPastEventsKeepScheduleOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		tr := &tracer{}
		time.Sleep(time.Second)
		onLoop(t, l, func(now time.Duration) {
			l.At(now, tr, tr.name("first"))
			l.At(0, tr, tr.name("second")) // in the past: runs at now, after first
		})
		synctest.Wait()
		want := []string{"first@1s", "second@1s"}
		if got := trace(t, l, tr); !slices.Equal(got, want) {
			t.Fatalf("trace %v, want %v", got, want)
		}
	})
}

func TestLoopDoIsSerial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		const goroutines, each = 64, 200
		var (
			counter int  // unsynchronised on purpose: -race flags concurrent Do
			inside  bool // set while a function runs
			overlap int
			wg      sync.WaitGroup
		)
		wg.Add(goroutines * each)
		for range goroutines {
			go func() {
				for range each {
					if !l.Do(func(time.Duration) {
						if inside {
							overlap++
						}
						inside = true
						counter++
						inside = false
						wg.Done()
					}) {
						t.Error("Do refused on an open loop")
						wg.Done()
					}
				}
			}()
		}
		wg.Wait()
		onLoop(t, l, func(time.Duration) {
			if counter != goroutines*each || overlap != 0 {
				t.Errorf("counter %d (want %d), overlaps %d", counter, goroutines*each, overlap)
			}
		})
	})
}

func TestLoopDoOrderFromOneGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		defer l.Close()
		var got []int
		for i := range 1000 {
			l.Do(func(time.Duration) { got = append(got, i) })
		}
		onLoop(t, l, func(time.Duration) {
			for i, v := range got {
				if v != i {
					t.Fatalf("Do #%d ran as #%d", v, i)
				}
			}
			if len(got) != 1000 {
				t.Fatalf("%d of 1000 functions ran", len(got))
			}
		})
	})
}

func TestLoopCloseStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		tr := &tracer{}
		onLoop(t, l, func(time.Duration) { l.At(time.Second, tr, tr.name("dropped")) })
		l.Close()
		select {
		case <-l.Done():
		default:
			t.Fatal("Done not closed after Close")
		}
		if l.Do(func(time.Duration) { t.Error("function ran after Close") }) {
			t.Fatal("Do accepted a function after Close")
		}
		l.Close() // idempotent
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if len(tr.log) != 0 { // Close happened before: safe to read
			t.Fatalf("pending event fired after Close: %v", tr.log)
		}
	})
}

func TestLoopContextEndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		l := wallclock.New(ctx)
		cancel()
		<-l.Done()
		if l.Do(func(time.Duration) { t.Error("function ran after ctx end") }) {
			t.Fatal("Do accepted a function after the context ended")
		}
		l.Close() // must not block on a stopped loop
	})
}

func TestLoopCloseWaitsForRunningFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.New(t.Context())
		gate := make(chan struct{})
		finished := false
		l.Do(func(time.Duration) {
			<-gate
			finished = true
		})
		synctest.Wait() // the loop is parked inside the function
		closed := make(chan struct{})
		go func() { l.Close(); close(closed) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while a function was still running")
		default:
		}
		close(gate)
		<-closed
		if !finished {
			t.Fatal("Close returned before the running function finished")
		}
	})
}

// A loop ten times as fast as the wall clock reports ten times the elapsed
// time and fires an event 1 s ahead after 100 ms of wall time, at its
// instant; Events counts what fired and Pending what is left.
func TestScaledLoopRunsFaster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := wallclock.NewScaled(t.Context(), 10)
		defer l.Close()
		fired := make(chan time.Duration, 1)
		onLoop(t, l, func(now time.Duration) {
			l.At(now+time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) { fired <- now }), 0)
			l.At(now+time.Hour, clock.HandlerFunc(func(time.Duration, uint64) {}), 0)
		})
		start := time.Now()
		got := <-fired
		if wall := time.Since(start); wall != 100*time.Millisecond || got != time.Second {
			t.Fatalf("fired at loop time %v after %v of wall time, want 1s after 100ms", got, wall)
		}
		onLoop(t, l, func(time.Duration) {
			if l.Events() != 1 || l.Pending() != 1 {
				t.Errorf("events %d, pending %d; want 1 fired and the hour's left", l.Events(), l.Pending())
			}
		})
		if l.Wall(time.Second) != 100*time.Millisecond {
			t.Errorf("Wall(1s) = %v at speed 10", l.Wall(time.Second))
		}
	})
}
