package models

import (
	"fmt"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// item is work waiting for a worker.
type item struct {
	h   clock.Handler
	arg uint64
}

// putter is a producer blocked on a full queue, with the item it brings.
type putter struct {
	it  item
	h   clock.Handler
	arg uint64
}

// Queue is a bounded work queue drained by a fixed pool of workers: the
// article's asyncio.Queue(maxsize) with N worker tasks, which bounds what is
// resident and pushes back on the producer. capacity counts items waiting
// for a worker (not those being worked on), as asyncio.Queue's maxsize does.
// Items are taken in FIFO order; producers blocked on a full queue are
// admitted in FIFO order as workers take items.
type Queue struct {
	sched    clock.Scheduler
	workers  int
	busy     int
	capacity Bound // items waiting for a worker
	items    fifo[item]
	putters  fifo[putter]
}

// NewQueue returns a queue holding at most capacity items waiting for a
// worker, served by workers workers.
func NewQueue(sched clock.Scheduler, capacity Bound, workers int) (*Queue, error) {
	if workers < 1 {
		return nil, fmt.Errorf("%w: queue needs at least 1 worker, got %d", ErrConfig, workers)
	}
	return &Queue{sched: sched, workers: workers, capacity: capacity}, nil
}

// Put offers an item. Granted: a worker took it now and the caller proceeds
// with it. Parked: it waits in the queue and h.Fire(at, arg) announces the
// worker that takes it. Full: the queue is full and nothing was queued.
func (q *Queue) Put(now time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if q.busy < q.workers && q.items.live == 0 && q.putters.live == 0 {
		q.busy++
		return 0, Granted
	}
	if q.putters.live > 0 || !q.capacity.Admits(q.items.live) {
		return 0, Full // blocked producers go first
	}
	return q.items.push(item{h: h, arg: arg}), Parked
}

// PutWait is Put for a producer that blocks when the queue is full (the
// article's `await queue.put(target)`): instead of Full it returns Blocked,
// parks the producer, and later enqueues the item and announces it with
// ph.Fire(at, parg). The item's own outcome then arrives as from Put: the
// item is queued, and h.Fire announces its worker.
func (q *Queue) PutWait(now time.Duration, h clock.Handler, arg uint64, ph clock.Handler, parg uint64) (Ticket, Status) {
	t, st := q.Put(now, h, arg)
	if st != Full {
		return t, st
	}
	return q.putters.push(putter{it: item{h: h, arg: arg}, h: ph, arg: parg}), Blocked
}

// Done tells the queue a worker has finished; the worker takes the next item.
func (q *Queue) Done(now time.Duration) {
	it, _ := q.items.front()
	if it == nil {
		// No queued item: with no queue space (capacity 0) a blocked
		// producer hands its item straight to the freed worker.
		if p, _ := q.putters.front(); p != nil {
			q.sched.Post(now, p.h, p.arg)
			q.sched.Post(now, p.it.h, p.it.arg)
			q.putters.pop()
			return
		}
		if q.busy > 0 {
			q.busy--
		}
		return
	}
	q.sched.Post(now, it.h, it.arg)
	q.items.pop()
	q.admit(now)
}

// admit moves blocked producers' items into freed queue space.
func (q *Queue) admit(now time.Duration) {
	for q.capacity.Admits(q.items.live) {
		p, _ := q.putters.front()
		if p == nil {
			return
		}
		q.items.push(p.it)
		q.sched.Post(now, p.h, p.arg)
		q.putters.pop()
	}
}

// Cancel removes a queued item (its request gave up) and reports whether it
// was still waiting.
func (q *Queue) Cancel(now time.Duration, t Ticket) bool {
	if _, ok := q.items.cancel(t); !ok {
		return false
	}
	q.admit(now)
	return true
}

// CancelPut withdraws a blocked producer and reports whether it was blocked.
func (q *Queue) CancelPut(_ time.Duration, t Ticket) bool {
	_, ok := q.putters.cancel(t)
	return ok
}

// Waiting returns how many items wait for a worker.
func (q *Queue) Waiting() int { return q.items.live }

// BlockedProducers returns how many producers wait for queue space.
func (q *Queue) BlockedProducers() int { return q.putters.live }

// Busy returns how many workers are working.
func (q *Queue) Busy() int { return q.busy }

// Usage returns busy workers ÷ workers.
func (q *Queue) Usage(time.Duration) float64 { return float64(q.busy) / float64(q.workers) }
