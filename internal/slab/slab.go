package slab

// Handle names one occupancy of a slot: its index in the low 32 bits and
// the slot's generation in the high 32 bits. The zero Handle names nothing
// that Alloc returns.
type Handle uint64

// Index returns the slot index h names.
func (h Handle) Index() uint32 { return uint32(h) }

// Slab is a pool of T. The zero value is ready to use; it is not safe for
// concurrent use. A pointer from Alloc, At or Lookup stays valid until the
// next Alloc, which may move the slots.
type Slab[T any] struct {
	slots []slot[T]
	free  []uint32
	live  int
}

// slot is one value with its generation. The header comes first: a
// lookup reads it, then the value's first fields, from one cache line.
type slot[T any] struct {
	gen  uint32
	live bool
	v    T
}

// Alloc takes a free slot (or a new one), zeroed, and returns its index,
// value and handle.
func (s *Slab[T]) Alloc() (uint32, *T, Handle) {
	var i uint32
	if k := len(s.free); k > 0 {
		i = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		i = uint32(len(s.slots))
		s.slots = append(s.slots, slot[T]{})
	}
	sl := &s.slots[i]
	sl.gen++
	sl.live = true
	s.live++
	return i, &sl.v, Handle(uint64(sl.gen)<<32 | uint64(i))
}

// At returns slot i's value; i must have come from Alloc.
func (s *Slab[T]) At(i uint32) *T { return &s.slots[i].v }

// Handle returns the handle of slot i's current occupant.
func (s *Slab[T]) Handle(i uint32) Handle { return Handle(uint64(s.slots[i].gen)<<32 | uint64(i)) }

// Lookup returns the live value h names, or ok = false when h is stale.
func (s *Slab[T]) Lookup(h Handle) (uint32, *T, bool) {
	i, gen := uint32(h), uint32(h>>32)
	if int(i) >= len(s.slots) || !s.slots[i].live || s.slots[i].gen != gen {
		return 0, nil, false
	}
	return i, &s.slots[i].v, true
}

// Release frees slot i: its value is zeroed and every handle to it goes
// stale.
func (s *Slab[T]) Release(i uint32) {
	sl := &s.slots[i]
	var zero T
	sl.v, sl.live = zero, false
	s.live--
	s.free = append(s.free, i)
}

// Live returns how many slots are taken.
func (s *Slab[T]) Live() int { return s.live }

// Each calls f with every live slot's index and value, in index order.
func (s *Slab[T]) Each(f func(i uint32, v *T)) {
	for i := range s.slots {
		if s.slots[i].live {
			f(uint32(i), &s.slots[i].v)
		}
	}
}
