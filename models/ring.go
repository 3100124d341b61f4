package models

// ring is a growable FIFO of values in a power-of-two buffer: push at the
// back, drop at the front, index from the front. It is the storage of the
// waiting lines (fifo) and of the sliding window's log of starts; memory is
// at most twice the most values held at once.
type ring[T any] struct {
	buf  []T
	head int
	size int
}

// len returns how many values the ring holds.
func (q *ring[T]) len() int { return q.size }

// at returns the i-th value from the front (0 ≤ i < len).
func (q *ring[T]) at(i int) *T { return &q.buf[(q.head+i)&(len(q.buf)-1)] }

// push appends v at the back, doubling the buffer when it is full.
func (q *ring[T]) push(v T) {
	if q.size == len(q.buf) {
		buf := make([]T, max(8, 2*len(q.buf)))
		for i := range q.size {
			buf[i] = *q.at(i)
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.size)&(len(q.buf)-1)] = v
	q.size++
}

// drop removes the front value (the ring must not be empty).
func (q *ring[T]) drop() {
	var zero T
	q.buf[q.head] = zero
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.size--
}
