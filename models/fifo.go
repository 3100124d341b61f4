package models

// fifo is a growable ring (a power-of-two size) of values addressed by ticket: the value with
// ticket t sits at position t − base. Cancelled entries stay as tombstones
// until they reach the head, so cancellation is O(1) and memory is bounded
// by the span from the oldest live entry to the newest.
type fifo[T any] struct {
	buf  []entry[T]
	head int
	size int    // slots in use, tombstones included
	base uint64 // ticket of the head slot
	live int    // entries not cancelled
}

type entry[T any] struct {
	v    T
	gone bool
}

// push appends v and returns its ticket.
func (q *fifo[T]) push(v T) Ticket {
	if q.size == len(q.buf) {
		n := max(8, 2*len(q.buf))
		buf := make([]entry[T], n)
		for i := range q.size {
			buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.size)&(len(q.buf)-1)] = entry[T]{v: v}
	q.size++
	q.live++
	return Ticket(q.base + uint64(q.size-1))
}

// get returns the live entry with ticket t.
func (q *fifo[T]) get(t Ticket) (*T, bool) {
	i := uint64(t) - q.base
	if uint64(t) < q.base || i >= uint64(q.size) {
		return nil, false
	}
	e := &q.buf[(q.head+int(i))&(len(q.buf)-1)]
	if e.gone {
		return nil, false
	}
	return &e.v, true
}

// cancel tombstones the entry with ticket t. It reports whether the entry
// was live and whether it was the first live entry.
func (q *fifo[T]) cancel(t Ticket) (wasHead, ok bool) {
	v, ok := q.get(t)
	if !ok {
		return false, false
	}
	f, _ := q.front()
	wasHead = f == v
	e := &q.buf[(q.head+int(uint64(t)-q.base))&(len(q.buf)-1)]
	var zero T
	e.v, e.gone = zero, true
	q.live--
	return wasHead, true
}

// front returns the first live entry and its ticket, dropping tombstones
// before it.
func (q *fifo[T]) front() (*T, Ticket) {
	for q.size > 0 {
		e := &q.buf[q.head]
		if !e.gone {
			return &e.v, Ticket(q.base)
		}
		q.drop()
	}
	return nil, 0
}

// pop removes the first entry, which must be live (call front first).
func (q *fifo[T]) pop() {
	q.live--
	q.drop()
}

func (q *fifo[T]) drop() {
	q.buf[q.head] = entry[T]{}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.size--
	q.base++
}
