package models

import (
	"testing"
	"unsafe"
)

// A bucketLine is 192 bytes on 64-bit platforms (an allocation size class that is a multiple
// of a cache line), and what an acquisition granted at once reads — the
// bucket, the line's core and its count of waiters — lies in its first 64.
func TestBucketLineLayout(t *testing.T) {
	var bl bucketLine
	if n := unsafe.Sizeof(bl); unsafe.Sizeof(uintptr(0)) == 8 && n != 192 {
		t.Errorf("bucketLine is %d bytes, want 192", n)
	}
	live := unsafe.Offsetof(bl.Line) + unsafe.Offsetof(bl.Line.q) + unsafe.Offsetof(bl.Line.q.live) + unsafe.Sizeof(bl.Line.q.live)
	core := unsafe.Offsetof(bl.Line) + unsafe.Offsetof(bl.Line.core) + unsafe.Sizeof(bl.Line.core)
	if live > 64 || core > 64 {
		t.Errorf("the waiters' count ends at byte %d and the core at %d: past the first cache line", live, core)
	}
}
