package sim_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/sim"
)

// An event posted at the current instant fires after every event already
// scheduled for that instant and before everything scheduled after it,
// whether the queue holds it in its own field (its lane empty) or puts it
// in the lane.
func TestPostedAtNowKeepsScheduleOrder(t *testing.T) {
	e := sim.New(1)
	l := &logger{}
	g1, x, g2, g3, h := l.name("g1"), l.name("x"), l.name("g2"), l.name("g3"), l.name("h")
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		l.log = append(l.log, "a")
		e.Post(now, l, g1) // b is pending at this instant: queued behind it
	}), 0)
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		l.log = append(l.log, "b")
		e.Post(now, l, g2)
	}), 0)
	e.At(2*time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		l.log = append(l.log, "c")
		e.Post(now, l, g3)            // nothing else at 2s: held aside
		e.At(now, l, x)               // after it
		e.Post(0, l, h)               // in the past: at now, after x
		e.Post(now+time.Second, l, h) // later
	}), 0)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b", "g1@1s", "g2@1s", "c", "g3@2s", "x@2s", "h@2s", "h@3s"}
	if !slices.Equal(l.log, want) {
		t.Fatalf("trace %v, want %v", l.log, want)
	}
	if e.Events() != 9 {
		t.Fatalf("events %d, want 9: a held event counts as one", e.Events())
	}
}

// A chain of events each posting the next at the same instant runs as a
// loop, one handler at a time: no handler runs inside another.
func TestPostedChainDoesNotNest(t *testing.T) {
	e := sim.New(1)
	depth, deepest, fired := 0, 0, 0
	var link clock.HandlerFunc
	link = func(now time.Duration, n uint64) {
		depth++
		deepest = max(deepest, depth)
		fired++
		if n > 0 {
			e.Post(now, link, n-1)
		}
		depth--
	}
	e.At(time.Second, link, 100_000)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if fired != 100_001 || deepest != 1 || e.Now() != time.Second {
		t.Fatalf("fired %d, deepest nesting %d, now %v: want 100001, 1, 1s", fired, deepest, e.Now())
	}
}

// The guards see a held event as any other: the per-instant guard stops a
// zero-delay chain of posts, and a stopped run leaves the held event
// pending, to fire first when the run goes on.
func TestHeldEventUnderGuardsAndStop(t *testing.T) {
	e := sim.New(1)
	fired := 0
	var loop clock.HandlerFunc
	loop = func(now time.Duration, _ uint64) { fired++; e.Post(now, loop, 0) }
	e.At(time.Second, loop, 0)
	e.SetLimits(sim.Limits{MaxEventsPerInstant: 100})
	var g *sim.GuardError
	if err := e.Run(); !errors.As(err, &g) || g.Guard != "max_events_per_instant" || g.At != time.Second {
		t.Fatalf("run returned %v, want the per-instant guard at 1s", err)
	}
	if fired != 100 || e.Pending() != 1 {
		t.Fatalf("fired %d, pending %d: want 100, then the held event pending", fired, e.Pending())
	}

	e = sim.New(1)
	var got []uint64
	h := clock.HandlerFunc(func(_ time.Duration, a uint64) { got = append(got, a) })
	e.At(time.Second, clock.HandlerFunc(func(now time.Duration, _ uint64) {
		e.Post(now, h, 1)
		e.Stop()
	}), 0)
	if err := e.Run(); !errors.Is(err, sim.ErrStopped) {
		t.Fatalf("run returned %v, want ErrStopped", err)
	}
	if e.Pending() != 1 || len(got) != 0 {
		t.Fatalf("pending %d, fired %v: want the posted event held", e.Pending(), got)
	}
	e.At(time.Second, h, 2) // scheduled later: fires after the held one
	first, second, third := e.Step(), e.Step(), e.Step()
	if !first || !second || third {
		t.Fatalf("Step: %v, %v, %v: want two events, then none", first, second, third)
	}
	if !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("fired %v, want [1 2]", got)
	}
	if err := e.RunUntil(0); err != nil || e.Now() != time.Second {
		t.Fatalf("RunUntil before now: %v, now %v", err, e.Now())
	}
}

// ordered is a model whose handlers schedule, post and cancel at random;
// it numbers every event it schedules and checks that each one fired is
// the earliest pending in (instant, schedule order).
type ordered struct {
	t       *testing.T
	e       *sim.Engine
	rng     *rand.Rand
	seq     uint64
	pending map[uint64]time.Duration // by schedule number: instant
	timers  map[uint64]clock.Timer
	budget  int
}

func (o *ordered) schedule(now time.Duration) {
	o.seq++
	var at time.Duration
	switch o.rng.IntN(3) {
	case 0:
		at = now
	case 1:
		at = now + time.Duration(o.rng.IntN(4))
	default:
		at = now + time.Duration(o.rng.IntN(1000))
	}
	o.pending[o.seq] = at
	if o.rng.IntN(2) == 0 {
		o.e.Post(at, o, o.seq)
		return
	}
	o.timers[o.seq] = o.e.At(at, o, o.seq)
}

func (o *ordered) Fire(now time.Duration, n uint64) {
	at, ok := o.pending[n]
	if !ok || at != now {
		o.t.Fatalf("event %d fired at %v: pending %v, at %v", n, now, ok, at)
	}
	for m, a := range o.pending {
		if a < at || a == at && m < n {
			o.t.Fatalf("event %d (%v) fired before event %d (%v)", n, at, m, a)
		}
	}
	delete(o.pending, n)
	delete(o.timers, n)
	if o.budget <= 0 {
		return
	}
	for range o.rng.IntN(4) {
		o.budget--
		o.schedule(now)
	}
	for m, tm := range o.timers {
		if o.rng.IntN(8) == 0 && o.e.Cancel(tm) {
			delete(o.pending, m)
			delete(o.timers, m)
		}
		break
	}
}

// Whatever mix of posts at the current instant, later events and
// cancellations the handlers make, events fire in (instant, schedule
// order).
func TestPostedEventsFireInOrder(t *testing.T) {
	for seed := range uint64(20) {
		e := sim.New(seed)
		o := &ordered{t: t, e: e, rng: rand.New(rand.NewPCG(seed, 7)), pending: map[uint64]time.Duration{},
			timers: map[uint64]clock.Timer{}, budget: 3000}
		for range 5 {
			o.schedule(0)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if len(o.pending) != 0 || e.Pending() != 0 {
			t.Fatalf("seed %d: %d events never fired", seed, len(o.pending))
		}
	}
}
