package par

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Every job runs once, on at most the workers asked for, whatever their
// number (none or more than the jobs included).
func TestRunRunsEveryJobOnce(t *testing.T) {
	for _, workers := range []int{-1, 0, 1, 2, 7, 100} {
		for _, n := range []int{0, 1, 5, 64} {
			counts := make([]atomic.Int64, n)
			var running, most atomic.Int64
			Run(n, workers, func(i int) bool {
				r := running.Add(1)
				for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
				}
				counts[i].Add(1)
				running.Add(-1)
				return false
			})
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("%d jobs on %d workers: job %d ran %d times", n, workers, i, c)
				}
			}
			if m := most.Load(); m > int64(max(1, workers)) {
				t.Fatalf("%d jobs on %d workers: %d ran at once", n, workers, m)
			}
		}
	}
}

// A job that stops keeps every job numbered after it from starting once it
// has returned, and none before it: jobs start in order. On one worker
// that leaves exactly the jobs up to the first stop; on more, every job up
// to it at least.
func TestRunStopsTheJobsAfter(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		var mu sync.Mutex
		var started []int
		Run(20, workers, func(i int) bool {
			mu.Lock()
			started = append(started, i)
			mu.Unlock()
			return i == 6 || i == 9
		})
		slices.Sort(started)
		for i := range 7 {
			if !slices.Contains(started, i) {
				t.Errorf("%d workers: job %d, before the stop, did not run (%v)", workers, i, started)
			}
		}
		if workers == 1 && !slices.Equal(started, []int{0, 1, 2, 3, 4, 5, 6}) {
			t.Errorf("one worker: jobs %v ran, want 0 to 6", started)
		}
	}
}
