package eventq

import (
	"slices"
	"time"

	"github.com/limitsim/limitsim/clock"
)

const (
	slotBits = 28 // up to 268 million pending events
	slotMask = 1<<slotBits - 1
	seqLimit = 1 << (64 - slotBits)
)

// entry is one heap element, compared by (at, key).
type entry struct {
	at  int64
	key uint64 // seq<<slotBits | slot
}

func less(a, b *entry) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

// slot holds the payload of a scheduled event.
type slot struct {
	h   clock.Handler
	arg uint64
	key uint64 // key of the live entry using this slot; 0 when free
	gen uint64 // bumped on every release; a Timer names (slot, gen)
}

// Queue is a priority queue of events. The zero value is ready to use.
// It is not safe for concurrent use.
type Queue struct {
	heap  []entry
	front entry // when hasFront: an event earlier than every heap entry, kept out of the heap
	// hasFront says front holds an event. An event scheduled before the
	// heap's earliest (the next arrival of a process, typically) waits
	// there and is taken without a heap operation.
	hasFront bool
	lane     lane // events scheduled for the instant last popped, in schedule order
	now      int64
	slots    []slot
	free     []uint32
	seq      uint64
	dead     int
}

// lane is a FIFO ring of entries.
type lane struct {
	buf        []entry
	head, size int
}

func (l *lane) push(e entry) {
	if l.size == len(l.buf) {
		grown := make([]entry, max(16, 2*len(l.buf)))
		for i := range l.size {
			grown[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
		}
		l.buf, l.head = grown, 0
	}
	l.buf[(l.head+l.size)&(len(l.buf)-1)] = e
	l.size++
}

func (l *lane) front() *entry { return &l.buf[l.head] }

func (l *lane) pop() {
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.size--
}

// Len returns the number of live (scheduled, not cancelled) events.
func (q *Queue) Len() int { return len(q.heap) + q.lane.size + q.fronts() - q.dead }

func (q *Queue) fronts() int {
	if q.hasFront {
		return 1
	}
	return 0
}

// Push schedules h.Fire(at, arg) and returns a handle for Cancel.
func (q *Queue) Push(at time.Duration, h clock.Handler, arg uint64) clock.Timer {
	var s uint32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		s = uint32(len(q.slots))
		q.slots = append(q.slots, slot{gen: 1})
	}
	if q.seq+1 >= seqLimit {
		q.renumber()
	}
	q.seq++
	key := q.seq<<slotBits | uint64(s)
	sl := &q.slots[s]
	sl.h, sl.arg, sl.key = h, arg, key
	if int64(at) == q.now {
		// Due at the instant being processed: every heap entry due now was
		// scheduled earlier, so a FIFO behind them keeps (instant, schedule
		// order) without a heap operation.
		q.lane.push(entry{at: int64(at), key: key})
	} else {
		q.schedule(entry{at: int64(at), key: key})
	}
	return clock.MakeTimer(s, sl.gen)
}

// schedule puts e in front, if it is earlier than every other scheduled
// event, or in the heap.
func (q *Queue) schedule(e entry) {
	switch {
	case q.hasFront && less(&e, &q.front):
		e, q.front = q.front, e
	case !q.hasFront && (len(q.heap) == 0 || less(&e, &q.heap[0])):
		q.front, q.hasFront = e, true
		return
	}
	q.heap = append(q.heap, e)
	q.up(len(q.heap) - 1)
}

// Cancel removes the event t refers to and reports whether it was pending.
func (q *Queue) Cancel(t clock.Timer) bool {
	s, gen := t.Parts()
	if gen == 0 || int(s) >= len(q.slots) || q.slots[s].gen != gen || q.slots[s].key == 0 {
		return false
	}
	q.release(s)
	q.dead++
	if q.dead > 256 && q.dead > (len(q.heap)+q.lane.size+q.fronts())/2 {
		q.compact()
	}
	return true
}

// release frees slot s, invalidating every outstanding handle to it.
func (q *Queue) release(s uint32) {
	sl := &q.slots[s]
	sl.h, sl.arg, sl.key = nil, 0, 0
	sl.gen++
	q.free = append(q.free, s)
}

func (q *Queue) live(e *entry) bool { return q.slots[e.key&slotMask].key == e.key }

// skipDead drops cancelled entries from front, the top of the heap and the
// front of the lane.
func (q *Queue) skipDead() {
	if q.hasFront && !q.live(&q.front) {
		q.hasFront = false
		q.dead--
	}
	for len(q.heap) > 0 && !q.live(&q.heap[0]) {
		q.removeTop()
		q.dead--
	}
	for q.lane.size > 0 && !q.live(q.lane.front()) {
		q.lane.pop()
		q.dead--
	}
}

// fromHeap reports whether the next event comes from front or the heap
// rather than the lane: the lane holds events due now, scheduled after
// every other event due now (and one due before now, scheduled in the
// past, is earlier still).
func (q *Queue) fromHeap() bool {
	if q.lane.size == 0 {
		return true
	}
	if q.hasFront {
		return q.front.at <= q.now
	}
	return len(q.heap) > 0 && q.heap[0].at <= q.now
}

// Peek returns the instant of the earliest live event.
func (q *Queue) Peek() (time.Duration, bool) {
	q.skipDead()
	switch {
	case !q.fromHeap():
		return time.Duration(q.now), true
	case q.hasFront:
		return time.Duration(q.front.at), true
	case len(q.heap) > 0:
		return time.Duration(q.heap[0].at), true
	}
	return 0, false
}

// Pop removes the earliest live event and returns it.
func (q *Queue) Pop() (at time.Duration, h clock.Handler, arg uint64, ok bool) {
	q.skipDead()
	return q.take()
}

// PopUntil removes and returns the earliest live event if it is due at or
// before horizon. With ok false, the queue is empty when Len is 0, and
// otherwise its earliest event is due after horizon. It finds the next event
// once: the candidate a Peek would settle on is checked for cancellation,
// dropped if cancelled, and taken otherwise.
func (q *Queue) PopUntil(horizon time.Duration) (at time.Duration, h clock.Handler, arg uint64, ok bool) {
	for {
		var top *entry
		src := srcNone
		if q.hasFront {
			top, src = &q.front, srcFront
		} else if len(q.heap) > 0 {
			top, src = &q.heap[0], srcHeap
		}
		if q.lane.size > 0 && (top == nil || top.at > q.now) {
			top, src = q.lane.front(), srcLane
		}
		if top == nil {
			return 0, nil, 0, false
		}
		s := uint32(top.key & slotMask)
		sl := &q.slots[s]
		if sl.key != top.key { // cancelled: drop it and look again
			q.drop(src)
			q.dead--
			continue
		}
		if top.at > int64(horizon) {
			return 0, nil, 0, false
		}
		at = time.Duration(top.at)
		q.drop(src)
		if src != srcLane {
			q.now = max(q.now, int64(at)) // the lane is empty when time advances
		}
		h, arg = sl.h, sl.arg
		q.release(s)
		return at, h, arg, true
	}
}

// Where PopUntil found its candidate.
const (
	srcNone = iota
	srcFront
	srcHeap
	srcLane
)

// drop removes the candidate at src.
func (q *Queue) drop(src int) {
	switch src {
	case srcFront:
		q.hasFront = false
	case srcHeap:
		q.removeTop()
	case srcLane:
		q.lane.pop()
	}
}

// take removes the earliest event, the queue's front being live.
func (q *Queue) take() (at time.Duration, h clock.Handler, arg uint64, ok bool) {
	var top entry
	switch {
	case !q.fromHeap():
		top = *q.lane.front()
		q.lane.pop()
	case q.hasFront:
		top, q.hasFront = q.front, false
		q.now = max(q.now, top.at)
	case len(q.heap) > 0:
		top = q.heap[0]
		q.removeTop()
		q.now = max(q.now, top.at) // the lane is empty when time advances
	default:
		return 0, nil, 0, false
	}
	s := uint32(top.key & slotMask)
	sl := &q.slots[s]
	h, arg = sl.h, sl.arg
	q.release(s)
	return time.Duration(top.at), h, arg, true
}

// removeTop removes the root: the hole walks down to a leaf along the
// smaller children, then the last element is sifted up from there (Floyd's
// method: about half the comparisons of a plain sift-down).
func (q *Queue) removeTop() {
	h := q.heap
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.heap = h
	if n == 0 {
		return
	}
	i := 0
	for {
		c := i<<2 + 1
		if c >= n {
			break
		}
		m := c
		if c+3 < n {
			if less(&h[c+1], &h[m]) {
				m = c + 1
			}
			if less(&h[c+2], &h[m]) {
				m = c + 2
			}
			if less(&h[c+3], &h[m]) {
				m = c + 3
			}
		} else {
			for j := c + 1; j < n; j++ {
				if less(&h[j], &h[m]) {
					m = j
				}
			}
		}
		h[i] = h[m]
		i = m
	}
	h[i] = last
	q.up(i)
}

func (q *Queue) up(i int) {
	h := q.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) >> 2
		if !less(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *Queue) down(i int) {
	h := q.heap
	n := len(h)
	e := h[i]
	for {
		c := i<<2 + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		if !less(&h[m], &e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}

// compact removes every cancelled entry, restores the heap property and
// keeps the lane's order.
func (q *Queue) compact() {
	if q.hasFront && !q.live(&q.front) {
		q.hasFront = false
	}
	live := q.heap[:0]
	for _, e := range q.heap {
		if q.live(&e) {
			live = append(live, e)
		}
	}
	clear(q.heap[len(live):])
	q.heap = live
	for i := (len(live) - 2) >> 2; i >= 0; i-- {
		q.down(i)
	}
	old := q.lane
	q.lane.head, q.lane.size = 0, 0
	kept := make([]entry, 0, old.size)
	for i := range old.size {
		if e := old.buf[(old.head+i)&(len(old.buf)-1)]; q.live(&e) {
			kept = append(kept, e)
		}
	}
	for _, e := range kept {
		q.lane.push(e)
	}
	q.dead = 0
}

// renumber gives the live events fresh sequence numbers 1, 2, … in their
// current order, so the sequence counter never wraps. It runs once per
// 2^36 events scheduled. Timers name (slot, generation), not the key, so
// handles stay valid across a renumbering.
func (q *Queue) renumber() {
	q.compact()
	slices.SortFunc(q.heap, func(a, b entry) int {
		switch {
		case less(&a, &b):
			return -1
		case less(&b, &a):
			return 1
		}
		return 0
	})
	// front is earlier than every heap entry: it comes first.
	n := uint64(0)
	if q.hasFront {
		n++
		s := q.front.key & slotMask
		q.front.key = n<<slotBits | s
		q.slots[s].key = q.front.key
	}
	for i := range q.heap {
		e := &q.heap[i]
		s := e.key & slotMask
		n++
		e.key = n<<slotBits | s
		q.slots[s].key = e.key
	}
	// The lane's entries come after every other entry, in lane order.
	for i := range q.lane.size {
		e := &q.lane.buf[(q.lane.head+i)&(len(q.lane.buf)-1)]
		s := e.key & slotMask
		n++
		e.key = n<<slotBits | s
		q.slots[s].key = e.key
	}
	q.seq = n
}
