// Package eventq is the event queue shared by the virtual-clock engine and
// the wall-clock driver: a 4-ary min-heap of 16-byte entries ordered by
// (instant, schedule order), with O(1) cancellation.
//
// Each entry packs its schedule sequence number and its payload slot into
// one key (sequence in the high bits, so comparing keys orders ties by
// schedule order). Cancellation is lazy: the slot is freed and the heap
// entry, whose key no longer matches the slot's, is skipped when it reaches
// the top. When dead entries outnumber live ones the heap is compacted in
// one linear pass, so memory stays proportional to the live events even when
// timeouts cancel far more timers than fire.
//
// Events scheduled for the instant being processed (grants, zero-delay
// wake-ups) skip the heap: they go to a FIFO lane that drains after the
// heap entries due at that instant, which were all scheduled earlier, so the
// order is the same (instant, schedule order) at O(1) per event.
//
// An event scheduled before every other pending one (in a simulation, most
// often the next arrival of a process) is held beside the heap rather than
// in it, and taken from there: no heap operation for it at all.
//
// It imports clock and the standard library only.
package eventq
