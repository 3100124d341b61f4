package slab

import "testing"

// A stale handle must never reach the slot's next occupant, and a released
// slot must come back zeroed: the bugs a request pool or a waiter table
// would otherwise show as a grant delivered to the wrong request.
func TestStaleHandlesAndReuse(t *testing.T) {
	var s Slab[int]
	i, v, h := s.Alloc()
	*v = 7
	if got, _, ok := s.Lookup(h); !ok || got != i {
		t.Fatalf("Lookup of a live handle: %d %v", got, ok)
	}
	if s.Handle(i) != h || h.Index() != i {
		t.Fatalf("Handle(%d) = %x, want %x", i, s.Handle(i), h)
	}
	s.Release(i)
	if _, _, ok := s.Lookup(h); ok {
		t.Fatal("a released slot is still found by its old handle")
	}
	j, w, h2 := s.Alloc()
	if j != i {
		t.Fatalf("released slot %d not reused (got %d)", i, j)
	}
	if *w != 0 {
		t.Fatalf("reused slot holds %d, want zero", *w)
	}
	if h2 == h {
		t.Fatal("reused slot got the same handle: stale handles would reach it")
	}
	if _, _, ok := s.Lookup(h); ok {
		t.Fatal("the old handle reaches the new occupant")
	}
	if _, _, ok := s.Lookup(Handle(1<<32 | 99)); ok {
		t.Fatal("a handle past the end was found")
	}
	if _, _, ok := s.Lookup(0); ok {
		t.Fatal("the zero handle names a slot")
	}
}

func TestLiveAndEach(t *testing.T) {
	var s Slab[string]
	a, va, _ := s.Alloc()
	*va = "a"
	_, vb, _ := s.Alloc()
	*vb = "b"
	c, vc, _ := s.Alloc()
	*vc = "c"
	s.Release(a)
	if s.Live() != 2 {
		t.Fatalf("Live = %d, want 2", s.Live())
	}
	var seen []string
	s.Each(func(i uint32, v *string) { seen = append(seen, *v) })
	if len(seen) != 2 || seen[0] != "b" || seen[1] != "c" {
		t.Fatalf("Each visited %v, want [b c]", seen)
	}
	s.Release(c)
	s.Each(func(i uint32, v *string) {
		if i == c {
			t.Fatal("Each visited a released slot")
		}
	})
}
