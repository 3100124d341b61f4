// Package eventq is the event queue shared by the virtual-clock engine and
// the wall-clock driver: events ordered by (instant, schedule order), with
// O(1) scheduling and cancellation.
//
// Events later than the current instant wait in a radix heap of 64 buckets
// of 16-byte entries, one per highest bit in which an event's instant
// differs from the current one. Scheduling is an xor, a leading-zero count
// and an append, whatever the number pending. When time moves on, an event
// alone in the lowest non-empty bucket is the earliest and is taken from
// there; otherwise that bucket is spilled: its earliest instant becomes the
// current one, its events at that instant become due (in schedule order),
// and the others fall into lower buckets. An event moves at most 64 times,
// usually a few, so a pop costs about the same with ten thousand pending
// timers as with ten. Simulated time never goes backwards, which is
// what a radix heap needs; an event scheduled before the current instant
// (a scheduler that does not clamp) is inserted in order among the due.
//
// Each entry holds its instant and the slot of its payload, with the
// slot's generation when it was scheduled; events of one instant keep
// their schedule order by their place, in a bucket, due or the lane, so no
// sequence number is kept. Cancellation is lazy: the slot is freed (its
// generation bumped) and the entry, whose generation no longer matches the
// slot's, is dropped when it comes up. When
// dead entries outnumber live ones the queue is compacted in one linear
// pass, so memory stays proportional to the live events even when timeouts
// cancel far more timers than fire.
//
// Events scheduled for the instant being processed (grants, zero-delay
// wake-ups) skip the buckets: they go to a FIFO lane that drains after the
// events due at that instant, which were all scheduled earlier, so the
// order is the same (instant, schedule order) at O(1) per event. A lane
// entry carries its payload; one scheduled with Post, which no Timer
// names (a grant), takes no slot. An event posted at that instant while
// the lane is empty (a grant, most of the time) does not even enter the
// lane: it is the next event after those due, whatever is scheduled after
// it, so the queue holds it in one field and pops it from there.
//
// It imports clock and the standard library only.
package eventq
