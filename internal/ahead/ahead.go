package ahead

import (
	"errors"
	"sync/atomic"
)

const (
	// BatchSize is how many values a batch holds at most: about 0.2 ms
	// of lognormal draws, and a few thousand requests of a simulation,
	// between two hand-overs (each a wake-up of the other goroutine);
	// batches four times larger measured no faster. A stream's first
	// batches are smaller, from firstBatch up, so that a short run does
	// not wait for, nor draw, many values it never reads.
	BatchSize  = 4096
	firstBatch = 256
	// batchesPerStream are the batches of one stream: one being read,
	// the others filled meanwhile.
	batchesPerStream = 3
	// MaxStreams is how many streams one Drawer serves.
	MaxStreams = 16
)

// ErrFull is returned by Drawer.Stream once MaxStreams streams are drawn.
var ErrFull = errors.New("ahead: every stream of the drawer is taken")

// batch is one run of a stream's values: the first n of vals.
type batch struct {
	vals   []uint64
	n      int
	stream *Stream
}

// Drawer runs the draws of its streams on one goroutine of its own, from
// NewDrawer until Close.
type Drawer struct {
	requests chan *batch // batches to fill, in the order their streams asked
	closed   atomic.Bool
	done     chan struct{}
	streams  int
}

// NewDrawer starts a drawer's goroutine; Close stops it.
func NewDrawer() *Drawer {
	d := &Drawer{requests: make(chan *batch, MaxStreams*batchesPerStream), done: make(chan struct{})}
	go d.run()
	return d
}

// run fills the batches asked for, one after another, until Close.
func (d *Drawer) run() {
	defer close(d.done)
	for b := range d.requests {
		if d.closed.Load() {
			continue // closing: nothing will read it
		}
		draw := b.stream.draw
		for i := range b.vals[:b.n] {
			b.vals[i] = draw()
		}
		b.stream.full <- b // never blocks: the channel holds every batch of the stream
	}
}

// Stream returns a stream of the values draw returns, drawn ahead on the
// drawer's goroutine. draw runs there and nowhere else: it must be the
// only user of what it reads. It fails with ErrFull beyond MaxStreams.
func (d *Drawer) Stream(draw func() uint64) (*Stream, error) {
	if d.streams >= MaxStreams {
		return nil, ErrFull
	}
	d.streams++
	// One batch now, the others at the first read: each stream's first
	// values come first, whatever the number of streams.
	s := &Stream{draw: draw, full: make(chan *batch, batchesPerStream), requests: d.requests, size: firstBatch,
		unasked: batchesPerStream - 1}
	d.requests <- s.sized(&batch{stream: s})
	return s, nil
}

// Free returns how many more streams the drawer serves.
func (d *Drawer) Free() int { return MaxStreams - d.streams }

// Close stops the drawer's goroutine and waits for it: a batch being
// filled is finished, the others are dropped. No stream may be read
// after Close.
func (d *Drawer) Close() {
	d.closed.Store(true)
	close(d.requests)
	<-d.done
}

// Stream is one stream's values, in draw order.
type Stream struct {
	cur      *batch // being read, from next; nil before the first value
	next     int
	size     int // the values of the next batch asked for: doubling up to BatchSize
	unasked  int // batches not yet made and asked for
	draw     func() uint64
	full     chan *batch // filled batches, in the order they were asked for
	requests chan *batch // the drawer's
}

// Next returns the stream's next value.
func (s *Stream) Next() uint64 {
	if s.cur != nil && s.next < s.cur.n {
		v := s.cur.vals[s.next]
		s.next++
		return v
	}
	return s.refill()
}

// refill gives the batch just read back to be filled again, takes the
// next filled one and returns its first value.
func (s *Stream) refill() uint64 {
	if s.cur != nil {
		s.requests <- s.sized(s.cur) // never blocks: the channel holds every batch of every stream
	}
	for ; s.unasked > 0; s.unasked-- {
		s.requests <- s.sized(&batch{stream: s})
	}
	s.cur, s.next = <-s.full, 1
	return s.cur.vals[0]
}

// sized sets b to hold the stream's next batch size, and doubles that
// size up to BatchSize.
func (s *Stream) sized(b *batch) *batch {
	b.n = s.size
	if cap(b.vals) < b.n {
		b.vals = make([]uint64, b.n)
	}
	s.size = min(2*s.size, BatchSize)
	return b
}
