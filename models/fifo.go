package models

// fifo is a waiting line of values addressed by ticket: the value with
// ticket t sits at position t − base of the ring. Cancelled entries stay as
// tombstones until they reach the head, so cancellation is O(1) and memory
// is bounded by the span from the oldest live entry to the newest.
type fifo[T any] struct {
	live int            // entries not cancelled (first: the one field a grant at once reads)
	base uint64         // ticket of the head entry
	q    ring[entry[T]] // tombstones included
}

type entry[T any] struct {
	v    T
	gone bool
}

// push appends v and returns its ticket.
func (f *fifo[T]) push(v T) Ticket {
	f.q.push(entry[T]{v: v})
	f.live++
	return Ticket(f.base + uint64(f.q.len()-1))
}

// get returns the live entry with ticket t.
func (f *fifo[T]) get(t Ticket) (*T, bool) {
	i := uint64(t) - f.base
	if uint64(t) < f.base || i >= uint64(f.q.len()) {
		return nil, false
	}
	e := f.q.at(int(i))
	if e.gone {
		return nil, false
	}
	return &e.v, true
}

// cancel tombstones the entry with ticket t. It reports whether the entry
// was live and whether it was the first live entry.
func (f *fifo[T]) cancel(t Ticket) (wasHead, ok bool) {
	v, ok := f.get(t)
	if !ok {
		return false, false
	}
	head, _ := f.front()
	wasHead = head == v
	e := f.q.at(int(uint64(t) - f.base))
	var zero T
	e.v, e.gone = zero, true
	f.live--
	return wasHead, true
}

// front returns the first live entry and its ticket, dropping tombstones
// before it.
func (f *fifo[T]) front() (*T, Ticket) {
	for f.q.len() > 0 {
		if e := f.q.at(0); !e.gone {
			return &e.v, Ticket(f.base)
		}
		f.drop()
	}
	return nil, 0
}

// pop removes the first entry, which must be live (call front first).
func (f *fifo[T]) pop() {
	f.live--
	f.drop()
}

func (f *fifo[T]) drop() {
	f.q.drop()
	f.base++
}
