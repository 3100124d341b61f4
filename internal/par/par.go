package par

import (
	"sync"
	"sync/atomic"
)

// Run calls job(i) for i in [0, n) on up to workers goroutines (at least
// one), starting jobs in the order of i, and returns once every job it
// started has returned. A job that returns true stops: no job numbered
// after it starts (jobs already running finish).
func Run(n, workers int, job func(i int) (stop bool)) {
	var next, stopAt atomic.Int64
	stopAt.Store(int64(n))
	var wg sync.WaitGroup
	for range min(max(1, workers), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || int64(i) > stopAt.Load() {
					return
				}
				if job(i) {
					for at := stopAt.Load(); int64(i) < at && !stopAt.CompareAndSwap(at, int64(i)); at = stopAt.Load() {
					}
				}
			}
		})
	}
	wg.Wait()
}
