package sim_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/sim"
)

// logger records (name, now) for every event it receives, SimPy-style.
type logger struct {
	names []string
	log   []string
}

func (l *logger) Fire(now time.Duration, arg uint64) {
	l.log = append(l.log, fmt.Sprintf("%s@%v", l.names[arg], now))
}

func (l *logger) name(s string) uint64 {
	l.names = append(l.names, s)
	return uint64(len(l.names) - 1)
}

func TestOrderAndTies(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	e.At(30*time.Millisecond, l, l.name("c"))
	e.At(10*time.Millisecond, l, l.name("a1"))
	e.At(20*time.Millisecond, l, l.name("b"))
	e.At(10*time.Millisecond, l, l.name("a2")) // same instant: after a1
	e.At(10*time.Millisecond, l, l.name("a3"))
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a1@10ms", "a2@10ms", "a3@10ms", "b@20ms", "c@30ms"}
	if !slices.Equal(l.log, want) {
		t.Fatalf("trace %v, want %v", l.log, want)
	}
	if e.Now() != 30*time.Millisecond || e.Events() != 5 {
		t.Fatalf("now %v events %d", e.Now(), e.Events())
	}
}

func TestPastRunsNowAndAfter(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	late := l.name("late")
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		e.At(0, l, late) // in the past: runs at now, after this handler
		e.After(time.Millisecond, l, l.name("after"))
	}), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"late@1s", "after@1.001s"}
	if !slices.Equal(l.log, want) {
		t.Fatalf("trace %v, want %v", l.log, want)
	}
}

func TestCancel(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	a := e.At(time.Second, l, l.name("a"))
	b := e.At(2*time.Second, l, l.name("b"))
	e.At(3*time.Second, l, l.name("c"))
	if !e.Cancel(b) {
		t.Fatal("cancel of a pending event returned false")
	}
	if e.Cancel(b) {
		t.Fatal("second cancel returned true")
	}
	if e.Cancel(clock.Timer{}) {
		t.Fatal("cancel of the zero timer returned true")
	}
	if e.Pending() != 2 {
		t.Fatalf("pending %d, want 2", e.Pending())
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if e.Cancel(a) {
		t.Fatal("cancel after firing returned true")
	}
	if want := []string{"a@1s", "c@3s"}; !slices.Equal(l.log, want) {
		t.Fatalf("trace %v, want %v", l.log, want)
	}
}

// A cancelled timer's slot is reused: its stale handle must not cancel the
// new event.
func TestStaleTimerDoesNotCancelReusedSlot(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	a := e.At(time.Second, l, l.name("a"))
	e.Cancel(a)
	e.At(time.Second, l, l.name("b")) // reuses a's slot
	if e.Cancel(a) {
		t.Fatal("stale handle cancelled a new event")
	}
	e.Run()
	if want := []string{"b@1s"}; !slices.Equal(l.log, want) {
		t.Fatalf("trace %v, want %v", l.log, want)
	}
}

// Many more timers are cancelled than fire (timeouts); the survivors still
// fire in order and the queue does not keep the dead ones.
func TestMassCancellation(t *testing.T) {
	e := sim.New(1)
	r := rand.New(rand.NewPCG(1, 2))
	var fired []time.Duration
	h := clock.HandlerFunc(func(now time.Duration, _ uint64) { fired = append(fired, now) })
	var keep int
	for i := range 100000 {
		tm := e.At(time.Duration(r.Int64N(int64(time.Hour))), h, 0)
		if i%10 != 0 {
			e.Cancel(tm)
		} else {
			keep++
		}
	}
	if e.Pending() != keep {
		t.Fatalf("pending %d, want %d", e.Pending(), keep)
	}
	e.Run()
	if len(fired) != keep || !slices.IsSorted(fired) {
		t.Fatalf("fired %d (sorted %v), want %d in order", len(fired), slices.IsSorted(fired), keep)
	}
}

func TestRunUntilHorizon(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	e.At(time.Second, l, l.name("a"))
	e.At(5*time.Second, l, l.name("b"))
	if err := e.RunUntil(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if e.Now() != 2*time.Second || len(l.log) != 1 || e.Pending() != 1 {
		t.Fatalf("now %v log %v pending %d", e.Now(), l.log, e.Pending())
	}
	e.RunUntil(10 * time.Second)
	if len(l.log) != 2 {
		t.Fatalf("log %v", l.log)
	}
}

func TestRunWhileAndStop(t *testing.T) {
	e := sim.New(1)
	n := 0
	var tick clock.HandlerFunc
	tick = func(now time.Duration, _ uint64) {
		n++
		e.After(time.Millisecond, tick, 0)
	}
	e.At(0, tick, 0)
	if err := e.RunWhile(func() bool { return n < 10 }); err != nil {
		t.Fatal(err)
	}
	if n != 10 || e.Now() != 9*time.Millisecond {
		t.Fatalf("n %d now %v", n, e.Now())
	}
	e.At(e.Now(), clock.HandlerFunc(func(time.Duration, uint64) { e.Stop() }), 0)
	if err := e.Run(); !errors.Is(err, sim.ErrStopped) {
		t.Fatalf("err %v, want ErrStopped", err)
	}
}

type parker struct {
	name string
	n    int
}

func (p *parker) Name() string { return p.name }
func (p *parker) Parked() int  { return p.n }

func TestStallReportsParkedAndCycle(t *testing.T) {
	e := sim.New(1)
	e.Watch(&parker{"idle", 0})
	e.Watch(&parker{"db", 1})
	e.Watch(&parker{"cache", 1})
	e.ExplainStalls(func(s *sim.StallError) {
		var g sim.WaitGraph
		g.Add("db", "cache", "path writes")
		g.Add("cache", "db", "path reads")
		s.Cycle = g.Cycle()
	})
	e.At(time.Second, clock.HandlerFunc(func(time.Duration, uint64) {}), 0)
	err := e.Run()
	var st *sim.StallError
	if !errors.As(err, &st) {
		t.Fatalf("err %v, want StallError", err)
	}
	if st.At != time.Second || len(st.Parked) != 2 || st.Parked[0].Name != "db" {
		t.Fatalf("stall %+v", st)
	}
	if !slices.Equal(st.Cycle, []string{"cache", "db", "cache"}) {
		t.Fatalf("cycle %v", st.Cycle)
	}
	if msg := err.Error(); !strings.Contains(msg, "cache → db → cache") || !strings.Contains(msg, "db holds 1 waiting") {
		t.Fatalf("message %q", msg)
	}
}

func TestNoStallWhenNothingParked(t *testing.T) {
	e := sim.New(1)
	e.Watch(&parker{"db", 0})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestWaitGraph(t *testing.T) {
	var g sim.WaitGraph
	g.Add("global", "host", "p1")
	g.Add("host", "tenant", "p1")
	if c := g.Cycle(); c != nil {
		t.Fatalf("acyclic graph has cycle %v", c)
	}
	g.Add("tenant", "global", "p2")
	g.Add("tenant", "global", "p3")
	g.Add("tenant", "global", "p2")
	if c := g.Cycle(); !slices.Equal(c, []string{"global", "host", "tenant", "global"}) {
		t.Fatalf("cycle %v", c)
	}
	if l := g.Labels("tenant", "global"); !slices.Equal(l, []string{"p2", "p3"}) {
		t.Fatalf("labels %v", l)
	}
}

// Same seed, same trace; different seed, different trace; streams with
// different names are independent of each other's use.
func TestDeterminismAndStreams(t *testing.T) {
	trace := func(seed uint64) []string {
		e := sim.New(seed)
		arr := e.Stream("arrivals")
		l := &logger{}
		for i := range 50 {
			e.At(time.Duration(arr.Int64N(int64(time.Second))), l, l.name(fmt.Sprint(i)))
		}
		e.Run()
		return l.log
	}
	a, b, c := trace(7), trace(7), trace(8)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different traces")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same trace")
	}
	e := sim.New(7)
	x := e.Stream("latency")
	first := x.Uint64()
	e.Stream("arrivals").Uint64() // drawing from another stream ...
	y := e.Stream("latency")      // ... does not shift this one
	if y.Uint64() != first {
		t.Fatal("stream not reproducible")
	}
	if e.Stream("latency/api").Uint64() == first {
		t.Fatal("different names gave the same stream")
	}
}

func ExampleEngine() {
	e := sim.New(1)
	e.At(200*time.Millisecond, clock.HandlerFunc(func(now time.Duration, arg uint64) {
		fmt.Println("response", arg, "at", now)
	}), 42)
	e.After(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		fmt.Println("deadline at", now)
	}), 0)
	fmt.Println(e.Run(), e.Events())
	// Output:
	// response 42 at 200ms
	// deadline at 1s
	// <nil> 2
}

// A guard stops the run before the event it looked at fires: exactly the
// limit's number of events fire, the one that tripped it stays pending, and
// the error names the guard and the instant.
func TestGuardsStopBeforeTheEvent(t *testing.T) {
	e := sim.New(1)
	fired := 0
	count := clock.HandlerFunc(func(time.Duration, uint64) { fired++ })
	for i := range 5 {
		e.At(time.Duration(i+1)*time.Second, count, 0)
	}
	e.SetLimits(sim.Limits{MaxEvents: 3})
	var g *sim.GuardError
	if err := e.Run(); !errors.As(err, &g) || g.Guard != "max_events" || g.Limit != 3 {
		t.Fatalf("run returned %v, want the max_events guard", err)
	}
	if fired != 3 || e.Pending() != 2 || e.Now() != 3*time.Second {
		t.Fatalf("fired %d, pending %d, now %v: want 3, 2, 3s", fired, e.Pending(), e.Now())
	}

	e = sim.New(1)
	var loop clock.HandlerFunc
	fired = 0
	loop = func(now time.Duration, _ uint64) { fired++; e.At(now, loop, 0) } // a zero-delay storm
	e.At(time.Second, loop, 0)
	e.SetLimits(sim.Limits{MaxEventsPerInstant: 100})
	if err := e.Run(); !errors.As(err, &g) || g.Guard != "max_events_per_instant" || g.At != time.Second {
		t.Fatalf("run returned %v, want the per-instant guard at 1s", err)
	}
	if fired != 100 || e.Pending() != 1 {
		t.Fatalf("fired %d, pending %d: want 100 events at one instant, then the next left pending", fired, e.Pending())
	}
}

// A run a guard stopped goes on, once the limit is raised, exactly as if
// it had not stopped: the event the guard looked at keeps its place among
// the events of its instant, and its timer still cancels it.
func TestGuardStopKeepsTheEventAsItWas(t *testing.T) {
	e := sim.New(1)
	var got []uint64
	h := clock.HandlerFunc(func(_ time.Duration, a uint64) { got = append(got, a) })
	e.At(5, h, 1)
	second := e.At(5, h, 2)
	e.At(5, h, 3)
	e.SetLimits(sim.Limits{MaxEvents: 1})
	var g *sim.GuardError
	if err := e.Run(); !errors.As(err, &g) || !slices.Equal(got, []uint64{1}) {
		t.Fatalf("run returned %v after %v, want the max_events guard after event 1", err, got)
	}
	if !e.Cancel(second) {
		t.Fatal("the timer of the event the guard stopped at no longer cancels it")
	}
	e.At(5, h, 4)
	e.SetLimits(sim.Limits{})
	if err := e.Run(); err != nil || !slices.Equal(got, []uint64{1, 3, 4}) {
		t.Fatalf("after raising the limit: %v, events %v; want 1, 3, 4", err, got)
	}

	e = sim.New(1)
	got = got[:0]
	e.At(7, h, 1)
	e.At(7, h, 2)
	e.At(7, h, 3)
	e.SetLimits(sim.Limits{MaxEventsPerInstant: 2})
	if err := e.Run(); !errors.As(err, &g) || g.Guard != "max_events_per_instant" || g.At != 7 || !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("run returned %v after %v, want the per-instant guard at 7ns after events 1 and 2", err, got)
	}
	if e.Pending() != 1 || e.Events() != 2 {
		t.Fatalf("pending %d, events %d: want 1 and 2", e.Pending(), e.Events())
	}
}

// An interrupt stops a run that would never end on its own: at once when
// the flag is already up, and within the poll interval when a handler
// raises it; the run ends with ErrInterrupted and can go on afterwards.
// It catches a loop that never looks at the flag, or looks only at the
// start.
func TestInterruptStopsTheRun(t *testing.T) {
	var flag atomic.Bool
	e := sim.New(1)
	e.SetInterrupt(&flag)
	var loop clock.HandlerFunc
	loop = func(time.Duration, uint64) {
		if e.Events() == 10 {
			flag.Store(true)
		}
		e.After(time.Nanosecond, loop, 0)
	}
	e.At(0, loop, 0)
	if err := e.Run(); !errors.Is(err, sim.ErrInterrupted) {
		t.Fatalf("Run = %v, want ErrInterrupted", err)
	}
	if n := e.Events(); n < 10 || n > 10+4096 {
		t.Fatalf("the run fired %d events, want it stopped within 4096 of the interrupt at 10", n)
	}
	n := e.Events()
	if err := e.Run(); !errors.Is(err, sim.ErrInterrupted) || e.Events() != n {
		t.Fatalf("with the flag up, Run = %v after %d more events, want ErrInterrupted at once", err, e.Events()-n)
	}
	if e.Pending() != 1 {
		t.Fatalf("%d pending, want the loop's next event kept", e.Pending())
	}
}
