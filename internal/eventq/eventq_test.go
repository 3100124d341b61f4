package eventq

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
)

type rec struct{ got []uint64 }

func (r *rec) Fire(_ time.Duration, arg uint64) { r.got = append(r.got, arg) }

// Against a reference (a stable sort of the surviving events), with random
// cancellations that trigger compaction, and slots that reach their last
// generation mid-run.
func TestAgainstSortedReference(t *testing.T) {
	for _, nearWrap := range []bool{false, true} {
		var q Queue
		if nearWrap {
			nearLastGeneration(&q, 64)
		}
		r := rand.New(rand.NewPCG(3, 4))
		type ev struct {
			at  time.Duration
			id  uint64
			tmr clock.Timer
		}
		var evs []ev
		h := &rec{}
		for i := range uint64(6000) {
			at := time.Duration(r.IntN(500)) // many ties
			evs = append(evs, ev{at, i, q.Push(at, h, i)})
		}
		alive := evs[:0:0]
		for _, e := range evs {
			if r.IntN(3) == 0 {
				alive = append(alive, e)
			} else if !q.Cancel(e.tmr) {
				t.Fatal("cancel failed")
			}
		}
		if q.Len() != len(alive) {
			t.Fatalf("len %d, want %d", q.Len(), len(alive))
		}
		slices.SortStableFunc(alive, func(a, b ev) int { return int(a.at - b.at) })
		for q.Len() > 0 {
			_, hh, arg, _ := q.Pop()
			hh.Fire(0, arg)
		}
		if len(h.got) != len(alive) {
			t.Fatalf("popped %d, want %d", len(h.got), len(alive))
		}
		for i, e := range alive {
			if h.got[i] != e.id {
				t.Fatalf("nearWrap=%v: position %d got %d want %d", nearWrap, i, h.got[i], e.id)
			}
		}
		if nearWrap && !retired(t, &q) {
			t.Fatal("no slot reached its last generation")
		}
	}
}

// nearLastGeneration gives q n free slots a few releases short of their
// last generation, so that a test reuses them past it.
func nearLastGeneration(q *Queue, n int) {
	for i := range n {
		q.slots = append(q.slots, slot{gen: genLimit - 1 - uint64(i%4), arg: uint64(q.free)})
		q.free = uint32(i + 1)
	}
}

// retired reports whether a slot of q reached its last generation, and
// fails t if such a slot is still free to reuse.
func retired(t *testing.T, q *Queue) bool {
	for s := q.free; s != 0; s = uint32(q.slots[s-1].arg) {
		if q.slots[s-1].gen >= genLimit {
			t.Fatalf("slot %d is free past its last generation", s-1)
		}
	}
	for _, sl := range q.slots {
		if sl.gen >= genLimit {
			return true
		}
	}
	return false
}

// refEvent is one event of the reference queue: a slice kept in
// (instant, schedule order).
type refEvent struct {
	at   time.Duration
	seq  uint64
	id   uint64
	tmr  clock.Timer
	dead bool
}

// A running simulation against a reference: handlers schedule events at the
// current instant (the lane), later instants and, rarely, earlier ones (a
// scheduler that does not clamp), a third of them posted (no Timer), and
// cancel pending events at random, so lane, heap, compaction and
// retired slots interleave. Every pop must be the
// reference's earliest live event by (instant, schedule order).
func TestDynamicAgainstReference(t *testing.T) {
	// Short spreads make ties; wide ones (up to about a day in
	// nanoseconds) fill every bucket of the radix heap. With a few events
	// pending, most later events find their bucket empty and take the
	// soon register when it is free.
	for _, spread := range []int64{30, 1 << 46} {
		for _, nearWrap := range []bool{false, true} {
			for _, pending := range []int{200, 3} {
				dynamicAgainstReference(t, spread, nearWrap, pending)
			}
		}
	}
}

func dynamicAgainstReference(t *testing.T, spread int64, nearWrap bool, pending int) {
	{
		var q Queue
		if nearWrap {
			nearLastGeneration(&q, 64)
		}
		r := rand.New(rand.NewPCG(7, uint64(len(t.Name()))))
		var ref []*refEvent
		byID := map[uint64]*refEvent{}
		var seq, next uint64
		h := &rec{}
		push := func(at time.Duration) {
			e := &refEvent{at: at, seq: seq, id: next}
			if r.IntN(3) == 0 { // posted: never cancelled; at now, no slot
				q.Post(at, h, next)
			} else {
				e.tmr = q.Push(at, h, next)
			}
			seq++
			next++
			ref = append(ref, e)
			byID[e.id] = e
		}
		for range 50 {
			push(time.Duration(r.Int64N(spread)))
		}
		var now time.Duration
		popped := 0
		for ; popped < 20000; popped++ {
			// The reference's earliest live event.
			best := -1
			for i, e := range ref {
				if e.dead {
					continue
				}
				if best < 0 || e.at < ref[best].at || (e.at == ref[best].at && e.seq < ref[best].seq) {
					best = i
				}
			}
			at, ok := q.Peek()
			if best < 0 {
				if ok {
					t.Fatalf("queue has an event at %v, the reference none", at)
				}
				break
			}
			if !ok || at != ref[best].at {
				t.Fatalf("pop %d: peek %v %v, want %v", popped, at, ok, ref[best].at)
			}
			at, _, arg, _ := q.Pop()
			if arg != ref[best].id || at != ref[best].at {
				t.Fatalf("spread %d nearWrap=%v pending %d pop %d: got event %d at %v, want %d at %v", spread, nearWrap, pending, popped, arg, at, ref[best].id, ref[best].at)
			}
			ref[best].dead = true
			now = max(now, at)
			if len(ref) > 4096 { // drop fired and cancelled events from the reference
				live := ref[:0]
				for _, e := range ref {
					if !e.dead {
						live = append(live, e)
					}
				}
				ref = live
			}
			n := r.IntN(3 + min(1, pending/max(1, q.Len()))) // about pending pending
			if q.Len() == 0 {
				n = max(n, 1) // never empty
			}
			for range n {
				switch k := r.IntN(10); {
				case k < 5:
					push(now)
				case k < 9:
					push(now + time.Duration(1+r.Int64N(spread)))
				default:
					push(max(0, now-time.Duration(1+r.IntN(5))))
				}
			}
			for range r.IntN(2) {
				if next == 0 {
					break
				}
				if e := byID[uint64(r.Int64N(int64(next)))]; e != nil && !e.dead && !e.tmr.IsZero() {
					if !q.Cancel(e.tmr) {
						t.Fatalf("cancel of pending event %d failed", e.id)
					}
					e.dead = true
					delete(byID, e.id)
				}
			}
			live := 0
			for _, e := range ref {
				if !e.dead {
					live++
				}
			}
			if q.Len() != live {
				t.Fatalf("pop %d: len %d, want %d", popped, q.Len(), live)
			}
		}
		if popped < 20000 {
			t.Fatalf("the queue emptied after %d pops", popped)
		}
		if nearWrap && !retired(t, &q) {
			t.Fatal("no slot reached its last generation")
		}
	}
}

// PopUntil, its horizon moved forward a little at a time, takes the events
// Pop takes, in the same order, with cancelled entries at the front of the
// heap or the lane and events scheduled at the current instant as others
// fire; it never takes an event beyond its horizon, and stops only at one.
func TestPopUntilIsPop(t *testing.T) {
	var a, b Queue
	ra, rb := rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(7, 8))
	ha, hb := &rec{}, &rec{}
	var ta, tb []clock.Timer
	for i := range uint64(2000) {
		at := time.Duration(ra.IntN(300))
		rb.IntN(300)
		ta, tb = append(ta, a.Push(at, ha, i)), append(tb, b.Push(at, hb, i))
	}
	horizon := time.Duration(0)
	step := func(q *Queue, r *rand.Rand, h *rec, ts *[]clock.Timer, until bool) bool {
		var at time.Duration
		var hh clock.Handler
		var arg uint64
		var ok bool
		if until {
			for {
				if at, hh, arg, ok = q.PopUntil(horizon); ok {
					break
				}
				if q.Len() == 0 {
					return false
				}
				next, _ := q.Peek()
				if next <= horizon {
					t.Fatalf("PopUntil(%v) stopped, but an event is due at %v", horizon, next)
				}
				horizon += 7
			}
			if at > horizon {
				t.Fatalf("PopUntil(%v) took an event at %v", horizon, at)
			}
		} else if at, hh, arg, ok = q.Pop(); !ok {
			return false
		}
		hh.Fire(at, arg)
		switch r.IntN(4) {
		case 0: // an event at this very instant: the lane
			*ts = append(*ts, q.Push(at, h, 10_000+arg))
		case 1: // cancel some pending event, perhaps the next one
			q.Cancel((*ts)[r.IntN(len(*ts))])
		}
		return true
	}
	for step(&a, ra, ha, &ta, false) {
	}
	for step(&b, rb, hb, &tb, true) {
	}
	if !slices.Equal(ha.got, hb.got) || len(ha.got) < 2000 {
		t.Fatalf("Pop took %d events, PopUntil %d, or a different order", len(ha.got), len(hb.got))
	}
}

// PopUntil drops cancelled events wherever they wait (front, heap, lane)
// and reports an empty queue only when no live event remains.
func TestPopUntilSkipsCancelled(t *testing.T) {
	var q Queue
	h := &rec{}
	t1 := q.Push(1, h, 1)
	q.Push(2, h, 2)
	q.Push(3, h, 3)
	q.Cancel(t1) // the earliest
	if at, hh, arg, ok := q.PopUntil(10); !ok || hh == nil || arg != 2 || at != 2 {
		t.Fatalf("after cancelling the earliest, PopUntil took %d at %v (ok %v)", arg, at, ok)
	}
	q.Cancel(q.Push(2, h, 4)) // a cancelled event at the current instant: the lane
	if _, _, arg, ok := q.PopUntil(2); ok || q.Len() != 1 {
		t.Fatalf("PopUntil(2) took %d (ok %v) with only an event at 3 live (len %d)", arg, ok, q.Len())
	}
	if at, _, arg, ok := q.PopUntil(3); !ok || arg != 3 || at != 3 {
		t.Fatalf("PopUntil(3) took %d at %v (ok %v)", arg, at, ok)
	}
	if _, _, _, ok := q.PopUntil(1 << 62); ok || q.Len() != 0 {
		t.Fatalf("an empty queue gave an event (len %d)", q.Len())
	}
}

// Memory follows the events pending, not those scheduled: a long run of
// timers fired, cancelled and posted at a steady few dozen pending reuses
// its slots and its lane. It catches a slot not freed when its event fires
// from the lane or a bucket, or when it is cancelled.
func TestSlotsFollowThePending(t *testing.T) {
	var q Queue
	h := &rec{}
	r := rand.New(rand.NewPCG(9, 10))
	var timers []clock.Timer
	for i := range uint64(200_000) {
		now := time.Duration(0)
		if at, hh, arg, ok := q.Pop(); ok {
			now = at
			hh.Fire(at, arg)
			h.got = h.got[:0]
		}
		for q.Len() < 40 {
			switch r.IntN(3) {
			case 0:
				timers = append(timers, q.Push(now, h, i)) // the lane, with a slot
			case 1:
				q.Post(now, h, i) // the lane, without
			default:
				timers = append(timers, q.Push(now+time.Duration(1+r.IntN(1000)), h, i))
			}
		}
		if len(timers) > 0 && r.IntN(4) == 0 {
			k := r.IntN(len(timers))
			q.Cancel(timers[k])
			timers = slices.Delete(timers, k, k+1)
		}
		if len(timers) > 1000 {
			timers = timers[500:]
		}
	}
	if len(q.slots) > 1000 || len(q.lane.buf) > 1024 {
		t.Fatalf("%d slots and a lane of %d for about 40 pending events", len(q.slots), len(q.lane.buf))
	}
}

// An event posted at the current instant with nothing else due then is
// held: it pops before what is scheduled at the instant after it (timers,
// posts), after an event scheduled at an earlier instant meanwhile, and
// counts as pending; with an event in the lane it queues behind it.
func TestPostedAtNowHeldInOrder(t *testing.T) {
	var q Queue
	h := &rec{}
	q.Push(5, h, 0)
	if _, _, arg, _ := q.Pop(); arg != 0 {
		t.Fatalf("popped %d, want 0", arg)
	}
	q.Post(5, h, 1) // nothing else at 5: held
	q.Push(5, h, 2)
	q.Post(5, h, 3)
	q.Push(3, h, 4) // before now: first
	q.Push(8, h, 5)
	if at, ok := q.Peek(); !ok || at != 3 || q.Len() != 5 {
		t.Fatalf("peek %v %v, len %d: want 3, 5 pending", at, ok, q.Len())
	}
	if _, _, _, ok := q.PopUntil(2); ok {
		t.Fatal("popped an event after the horizon")
	}
	var got []uint64
	for {
		_, _, arg, ok := q.Pop()
		if !ok {
			break
		}
		got = append(got, arg)
	}
	if want := []uint64{4, 1, 2, 3, 5}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}

	q.Post(8, h, 6) // held: the queue is at 8
	q.Post(8, h, 7) // the lane
	if _, _, arg, _ := q.Pop(); arg != 6 {
		t.Fatalf("popped %d, want 6", arg)
	}
	q.Post(8, h, 8) // 7 waits in the lane: behind it
	got = got[:0]
	for {
		_, _, arg, ok := q.Pop()
		if !ok {
			break
		}
		got = append(got, arg)
	}
	if want := []uint64{7, 8}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
}
