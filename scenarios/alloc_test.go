package scenarios

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// Runs allocate nothing per request or per event: memory follows what is
// in flight and waiting, and each measurement is counted into structures
// sized when the run starts. Each bundled scenario runs twice, the second
// time twice as long, with hour-long intervals so that the rows of the
// time series add almost nothing: the longer run may make a few dozen more
// allocations and one per hundred more requests (slices doubling as the
// waiting lines and the pending timers reach higher peaks). A closure, a
// boxed value or a string built on a hot path would add one or more per
// request or per event. (A slice that grows by appends with every request
// allocates only at its doublings, which this test does not see.)
func TestRunsAllocateNothingPerRequest(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector allocates on its own")
	}
	files, err := filepath.Glob("examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".toml"), func(t *testing.T) {
			sc, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			// Twice the length: twice the requests of a run they bound
			// (at most 40,000 first), else twice the duration.
			length := func(k int64) Override {
				if n := sc.Run.Requests; n > 0 && sc.Run.Duration == 0 {
					return Override{Key: "run.requests", Value: k * min(n, 40_000)}
				}
				return Override{Key: "run.duration", Value: (time.Duration(k) * time.Duration(sc.Run.Duration)).String()}
			}
			type measured struct {
				allocs uint64
				r      *metrics.Results
			}
			run := func(k int64) measured {
				sc, err := LoadWith(f, []Override{length(k), {Key: "run.interval", Value: "1h"}})
				if err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				out, err := sc.Simulate(client.Options{})
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				return measured{after.Mallocs - before.Mallocs, out.Results}
			}
			short, long := run(1), run(2)
			more := float64(long.r.Requests.Arrived - short.r.Requests.Arrived)
			if more < 1000 {
				t.Fatalf("%d requests, then %d: want at least 1,000 more", short.r.Requests.Arrived, long.r.Requests.Arrived)
			}
			if extra, allowed := float64(long.allocs)-float64(short.allocs), 32+more/100; extra > allowed {
				t.Errorf("%d allocations for %d requests, %d for %d: %.0f more, want at most %.0f",
					short.allocs, short.r.Requests.Arrived, long.allocs, long.r.Requests.Arrived, extra, allowed)
			}
		})
	}
}
