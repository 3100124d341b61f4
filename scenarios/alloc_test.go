package scenarios

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/sim/client"
)

// Runs allocate nothing per request or per event: memory follows what is
// in flight and waiting, and each measurement is counted into structures
// sized when the run starts. What a longer run adds is the rows of its
// time series, a few allocations per interval (two or three in every
// bundled scenario). Each bundled scenario runs twice, the second time
// twice as long: a closure, a boxed value or a slice grown on a hot path
// would add an allocation per request or per event, far over the
// allowance of five per interval.
func TestRunsAllocateNothingPerRequest(t *testing.T) {
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
			run := func(k int64) (allocs uint64, requests int64, intervals float64) {
				sc, err := LoadWith(f, []Override{length(k)})
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
				r := out.Results
				return after.Mallocs - before.Mallocs, r.Requests.Arrived, r.ElapsedS / r.IntervalS
			}
			a1, n1, iv1 := run(1)
			a2, n2, iv2 := run(2)
			extra, allowed := float64(a2)-float64(a1), 5*(iv2-iv1)
			if n2-n1 < 1000 || extra > allowed {
				t.Errorf("%d allocations for %d requests over %.0f intervals, %d for %d over %.0f: %.0f more, want at most %.0f (five an interval) and at least 1,000 requests more",
					a1, n1, iv1, a2, n2, iv2, extra, allowed)
			}
		})
	}
}
