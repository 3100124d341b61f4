package models

// slab holds per-waiter state for limiters whose waiters each keep their own
// timer (the polling bucket, x/time/rate reservations). Slots are reused;
// a Ticket names a slot and its generation, so a stale ticket never touches
// the slot's next occupant.
type slab[T any] struct {
	slots []slabSlot[T]
	free  []uint32
	live  int
}

type slabSlot[T any] struct {
	v    T
	gen  uint32
	live bool
}

// alloc takes a slot and returns its index, value and ticket.
func (s *slab[T]) alloc() (uint32, *T, Ticket) {
	var i uint32
	if k := len(s.free); k > 0 {
		i = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		i = uint32(len(s.slots))
		s.slots = append(s.slots, slabSlot[T]{})
	}
	sl := &s.slots[i]
	sl.gen++
	sl.live = true
	s.live++
	return i, &sl.v, Ticket(uint64(sl.gen)<<32 | uint64(i))
}

// at returns slot i's value.
func (s *slab[T]) at(i uint32) *T { return &s.slots[i].v }

// lookup returns the live slot a ticket names.
func (s *slab[T]) lookup(t Ticket) (uint32, *T, bool) {
	i, gen := uint32(t), uint32(t>>32)
	if int(i) >= len(s.slots) || !s.slots[i].live || s.slots[i].gen != gen {
		return 0, nil, false
	}
	return i, &s.slots[i].v, true
}

// release frees slot i.
func (s *slab[T]) release(i uint32) {
	sl := &s.slots[i]
	var zero T
	sl.v, sl.live = zero, false
	s.live--
	s.free = append(s.free, i)
}
