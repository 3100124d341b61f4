package eventq

import (
	"math"
	"math/bits"
	"time"

	"github.com/limitsim/limitsim/clock"
)

const (
	slotBits = 28 // up to 268 million pending events
	slotMask = 1<<slotBits - 1
	// genLimit bounds a slot's generations, which an entry holds in the
	// bits above its slot: a slot released that many times is retired
	// rather than reused, so that no entry's generation wraps.
	genLimit = 1 << (64 - slotBits)
)

// entry is one scheduled event: its instant, and the slot that holds its
// payload with the slot's generation when it was scheduled. Events of one
// instant keep their schedule order by where they are, not by a number.
type entry struct {
	at int64
	id uint64 // gen<<slotBits | slot
}

// slot holds the payload of a scheduled event.
type slot struct {
	h clock.Handler
	// arg is the event's argument while the slot holds an event; while it
	// is free, the index+1 of the next free slot (0: none), so that the
	// free slots form a stack through their own records and a slot stays
	// 32 bytes, two a cache line.
	arg uint64
	gen uint64 // bumped on every release: an entry or a Timer of another generation is dead
}

// Queue is a priority queue of events. The zero value is ready to use.
// It is not safe for concurrent use.
//
// Events later than the current instant wait in a radix heap: bucket k
// holds those whose instant first differs from now in bit k (counting from
// the least significant), so every event of a lower bucket is earlier than
// every event of a higher one. When time moves on, an event alone in the
// lowest non-empty bucket is taken from there; otherwise that bucket is
// spilled: its earliest instant becomes now, its events at that instant
// become due, and the others fall into lower buckets. An event moves down
// at most 64 times and usually a few, at an xor, a leading-zero count and
// an append each, whatever the number pending.
type Queue struct {
	// due holds the events at or before now that were scheduled before
	// time reached now, from dueHead on, in (instant, schedule order).
	due     []entry
	dueHead int
	buckets [64][]entry // events after now, by highest bit differing from now
	full    uint64      // bit k: buckets[k] is not empty
	later   int         // events in buckets
	lane    lane        // events scheduled at now, in schedule order: after due
	// held is an event posted at now while the lane was empty: it fires
	// after due (whose events at now were scheduled earlier, and which
	// only an instant before now can join meanwhile) and before the lane,
	// where whatever is scheduled at now after it goes. nil: none.
	held    clock.Handler
	heldArg uint64
	now     int64 // the instant the buckets are relative to
	slots   []slot
	free    uint32 // index+1 of the last slot freed, the top of the free stack; 0: none
	dead    int
}

// laneEntry is an event of the lane, at the current instant: its id (0
// for a posted event, which no Timer names) and its payload.
type laneEntry struct {
	id  uint64
	h   clock.Handler
	arg uint64
}

// lane is a FIFO ring of entries.
type lane struct {
	buf        []laneEntry
	head, size int
}

func (l *lane) push(e laneEntry) {
	if l.size == len(l.buf) {
		grown := make([]laneEntry, max(16, 2*len(l.buf)))
		for i := range l.size {
			grown[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
		}
		l.buf, l.head = grown, 0
	}
	l.buf[(l.head+l.size)&(len(l.buf)-1)] = e
	l.size++
}

func (l *lane) front() *laneEntry { return &l.buf[l.head] }

func (l *lane) pop() {
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.size--
}

// Len returns the number of live (scheduled, not cancelled) events.
func (q *Queue) Len() int {
	n := len(q.due) - q.dueHead + q.later + q.lane.size - q.dead
	if q.held != nil {
		n++
	}
	return n
}

// Push schedules h.Fire(at, arg) and returns a handle for Cancel.
func (q *Queue) Push(at time.Duration, h clock.Handler, arg uint64) clock.Timer {
	// The usual case, kept free of calls so that it needs no stack: a
	// later instant, a freed slot to reuse and room in the bucket.
	if q.free != 0 && int64(at) > q.now {
		k := bucketOf(int64(at), q.now)
		if b := q.buckets[k]; len(b) < cap(b) {
			s := q.free - 1
			sl := &q.slots[s]
			q.free = uint32(sl.arg)
			sl.h, sl.arg = h, arg
			q.buckets[k] = q.buckets[k][:len(b)+1] // the length alone: the array stays
			b[:len(b)+1][len(b)] = entry{at: int64(at), id: sl.gen<<slotBits | uint64(s)}
			q.full |= 1 << k
			q.later++
			return clock.MakeTimer(s, sl.gen)
		}
	}
	return q.push(at, h, arg)
}

// push is Push in every case.
func (q *Queue) push(at time.Duration, h clock.Handler, arg uint64) clock.Timer {
	s := q.alloc()
	sl := &q.slots[s]
	e := entry{at: int64(at), id: sl.gen<<slotBits | uint64(s)}
	switch {
	case e.at > q.now:
		sl.h, sl.arg = h, arg
		q.file(e)
	case e.at == q.now:
		// Due at the instant being processed: every event due now that is
		// not in the lane was scheduled earlier, so a FIFO behind them
		// keeps (instant, schedule order). The lane holds the payload.
		q.lane.push(laneEntry{id: e.id, h: h, arg: arg})
	default:
		sl.h, sl.arg = h, arg
		q.pushPast(e)
	}
	return clock.MakeTimer(s, sl.gen)
}

// alloc returns a free slot, the last one freed if any.
func (q *Queue) alloc() uint32 {
	if q.free != 0 {
		s := q.free - 1
		q.free = uint32(q.slots[s].arg)
		return s
	}
	if len(q.slots) > slotMask {
		// An id holds 28 bits of slot: far beyond what the engine's
		// guards (live requests, events) let a run reach.
		panic("eventq: more than 2^28 events pending at once")
	}
	q.slots = append(q.slots, slot{gen: 1})
	return uint32(len(q.slots) - 1)
}

// Post schedules h.Fire(at, arg) as Push does, for an event that is never
// cancelled. At the current instant (a grant, a zero-delay wake-up) it
// takes no slot: with nothing else due at the instant it is the next event
// whatever is scheduled after it, and is held in the queue's own record
// until popped; otherwise it goes to the lane.
func (q *Queue) Post(at time.Duration, h clock.Handler, arg uint64) {
	if int64(at) == q.now {
		q.postNow(h, arg)
		return
	}
	q.Push(at, h, arg)
}

// postNow is Post at the current instant.
func (q *Queue) postNow(h clock.Handler, arg uint64) {
	// Due drains first anyway: its events at now were scheduled earlier,
	// and only an instant before now can join it meanwhile.
	if q.held == nil && q.lane.size == 0 {
		q.held, q.heldArg = h, arg
		return
	}
	q.lane.push(laneEntry{h: h, arg: arg})
}

// bucketOf is the bucket of instant at, later than now: the highest bit
// in which they differ.
func bucketOf(at, now int64) int {
	return (63 - bits.LeadingZeros64(uint64(at^now))) & 63 // at > now: the xor is not 0
}

// file puts e, later than now, in its bucket.
func (q *Queue) file(e entry) {
	k := bucketOf(e.at, q.now)
	q.buckets[k] = append(q.buckets[k], e)
	q.full |= 1 << k
	q.later++
}

// pushPast inserts e, earlier than now (a scheduler that does not clamp
// instants to its clock), into due at its place: after every event due at
// or before its instant, all scheduled before it.
func (q *Queue) pushPast(e entry) {
	i := len(q.due)
	q.due = append(q.due, e)
	for i > q.dueHead && e.at < q.due[i-1].at {
		q.due[i] = q.due[i-1]
		i--
	}
	q.due[i] = e
}

// Cancel removes the event t refers to and reports whether it was pending.
func (q *Queue) Cancel(t clock.Timer) bool {
	s, gen := t.Parts()
	if gen == 0 || int(s) >= len(q.slots) || q.slots[s].gen != gen {
		return false // fired or cancelled: the slot's generation moved on
	}
	q.release(s)
	q.dead++
	if q.dead > 256 && q.dead > (len(q.due)-q.dueHead+q.later+q.lane.size)/2 {
		q.compact()
	}
	return true
}

// release frees slot s, invalidating every outstanding handle to it and
// every entry naming it.
func (q *Queue) release(s uint32) { q.releaseSlot(s, &q.slots[s]) }

// releaseSlot is release of slot s at sl. The handler stays until the
// slot is reused (handlers live as long as the run). A slot at its last
// generation is retired.
func (q *Queue) releaseSlot(s uint32, sl *slot) {
	if sl.gen++; sl.gen < genLimit {
		sl.arg, q.free = uint64(q.free), s+1
	}
}

// live reports whether the entry's slot is still at the entry's
// generation: neither fired nor cancelled.
func (q *Queue) live(e *entry) bool { return q.slots[e.id&slotMask].gen == e.id>>slotBits }

// laneLive reports whether a lane entry is pending: posted, or not
// cancelled.
func (q *Queue) laneLive(e *laneEntry) bool {
	return e.id == 0 || q.slots[e.id&slotMask].gen == e.id>>slotBits
}

// earliest returns the earliest instant in bucket k (of its events, live
// or cancelled).
func (q *Queue) earliest(k int) int64 {
	b := q.buckets[k]
	at := b[0].at
	for i := 1; i < len(b); i++ {
		at = min(at, b[i].at)
	}
	return at
}

// spill moves time on to at, the earliest instant of bucket k (the lowest
// non-empty one, with due and the lane empty): its events at that instant
// become due, in schedule order, and the others fall into lower buckets.
func (q *Queue) spill(k int, at int64) {
	b := q.buckets[k]
	q.buckets[k] = q.buckets[k][:0]
	q.full &^= 1 << k
	q.later -= len(b)
	q.due, q.dueHead = q.due[:0], 0
	q.now = at
	// Events of one instant sit in a bucket in schedule order: a push
	// appends the latest event, and a spill appends a bucket's events in
	// their order into buckets that were empty (every bucket below the
	// lowest non-empty one is). So due, too, is in schedule order.
	for _, e := range b {
		if e.at == at {
			q.due = append(q.due, e)
		} else {
			q.file(e) // a lower bucket: e and at agree above bit k
		}
	}
}

// Peek returns the instant of the earliest live event. When nothing is due
// now, it reads the whole lowest bucket (dropping its cancelled events):
// unlike a pop, its cost grows with the events that wait there.
func (q *Queue) Peek() (time.Duration, bool) {
	for q.dueHead < len(q.due) {
		if q.live(&q.due[q.dueHead]) {
			return time.Duration(q.due[q.dueHead].at), true
		}
		q.popDue()
		q.dead--
	}
	if q.held != nil {
		return time.Duration(q.now), true
	}
	for q.lane.size > 0 {
		if q.laneLive(q.lane.front()) {
			return time.Duration(q.now), true
		}
		q.lane.pop()
		q.dead--
	}
	for q.full != 0 {
		// Drop the lowest bucket's cancelled events; the earliest of the
		// rest is the earliest live event.
		k := bits.TrailingZeros64(q.full)
		q.dead -= q.sweep(k)
		if len(q.buckets[k]) > 0 {
			return time.Duration(q.earliest(k)), true
		}
	}
	return 0, false
}

// Pop removes the earliest live event and returns it.
func (q *Queue) Pop() (at time.Duration, h clock.Handler, arg uint64, ok bool) {
	return q.PopUntil(math.MaxInt64)
}

// PopUntil removes and returns the earliest live event if it is due at or
// before horizon. With ok false, the queue is empty when Len is 0, and
// otherwise its earliest event is due after horizon. Only the event it
// takes is checked for cancellation: a cancelled one is dropped and the
// search goes on.
func (q *Queue) PopUntil(horizon time.Duration) (at time.Duration, h clock.Handler, arg uint64, ok bool) {
	for {
		switch {
		case q.dueHead < len(q.due):
			e := q.due[q.dueHead]
			if e.at > int64(horizon) {
				return 0, nil, 0, false
			}
			q.popDue()
			if h, arg, ok := q.take(e); ok {
				return time.Duration(e.at), h, arg, true
			}
			q.dead--
			continue
		case q.held != nil:
			if q.now > int64(horizon) {
				return 0, nil, 0, false
			}
			h := q.held
			q.held = nil
			return time.Duration(q.now), h, q.heldArg, true
		case q.lane.size > 0:
			if q.now > int64(horizon) {
				return 0, nil, 0, false
			}
			e := *q.lane.front()
			q.lane.pop()
			if e.id != 0 {
				if !q.laneLive(&e) {
					q.dead--
					continue
				}
				q.release(uint32(e.id & slotMask))
			}
			return time.Duration(q.now), e.h, e.arg, true
		case q.full == 0:
			return 0, nil, 0, false
		}
		k := bits.TrailingZeros64(q.full)
		b := q.buckets[k]
		if len(b) > 1 {
			first := q.earliest(k)
			if first > int64(horizon) {
				return 0, nil, 0, false
			}
			q.spill(k, first)
			continue
		}
		// The usual case: an event alone in the lowest bucket is the
		// earliest (or, cancelled, no later than the earliest live one),
		// taken from there without a spill.
		e := b[0]
		if e.at > int64(horizon) {
			return 0, nil, 0, false
		}
		q.buckets[k] = q.buckets[k][:0]
		q.full &^= 1 << k
		q.later--
		if h, arg, ok := q.take(e); ok {
			q.now = e.at
			return time.Duration(e.at), h, arg, true
		}
		q.dead--
	}
}

// take returns the payload of e, just removed from the queue, and frees
// its slot; ok is false, and nothing is freed, when e was cancelled.
func (q *Queue) take(e entry) (h clock.Handler, arg uint64, ok bool) {
	s := uint32(e.id & slotMask)
	sl := &q.slots[s]
	if sl.gen != e.id>>slotBits {
		return nil, 0, false
	}
	h, arg = sl.h, sl.arg
	q.releaseSlot(s, sl)
	return h, arg, true
}

func (q *Queue) popDue() {
	q.dueHead++
	if q.dueHead == len(q.due) {
		q.due, q.dueHead = q.due[:0], 0
	}
}

// keepLive moves the live entries of es[from:] to the front of es, in
// order, clears the rest and returns the live ones.
func (q *Queue) keepLive(es []entry, from int) []entry {
	kept := es[:0]
	for _, e := range es[from:] {
		if q.live(&e) {
			kept = append(kept, e)
		}
	}
	clear(es[len(kept):])
	return kept
}

// sweep drops bucket k's cancelled events, keeping the others' order, and
// returns how many it dropped.
func (q *Queue) sweep(k int) int {
	n := len(q.buckets[k])
	q.buckets[k] = q.keepLive(q.buckets[k], 0)
	dropped := n - len(q.buckets[k])
	q.later -= dropped
	if len(q.buckets[k]) == 0 {
		q.full &^= 1 << k
	}
	return dropped
}

// compact removes every cancelled entry, keeping due's and the lane's
// order.
func (q *Queue) compact() {
	q.due, q.dueHead = q.keepLive(q.due, q.dueHead), 0
	for k := range q.buckets {
		q.sweep(k)
	}
	old := q.lane
	q.lane.head, q.lane.size = 0, 0
	kept := make([]laneEntry, 0, old.size)
	for i := range old.size {
		if e := old.buf[(old.head+i)&(len(old.buf)-1)]; q.laneLive(&e) {
			kept = append(kept, e)
		}
	}
	for _, e := range kept {
		q.lane.push(e)
	}
	q.dead = 0
}
