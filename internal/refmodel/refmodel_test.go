package refmodel

import (
	"math"
	"runtime"
	"testing"
	"time"
)

// The model's outcome is known from the bespoke implementation: for
// N = 1,000,000 it completes 589,887 requests (58.99%), rejects the rest at
// the waiting bound, sees no 429 (the semaphore binds at ~88/s, under the
// quota) and a mean wait of about 5.64 s. Our random streams differ, so the
// numbers agree statistically, not exactly.
func TestAgreesWithBespokeModel(t *testing.T) {
	r := Run(Default(200_000))
	frac := float64(r.Completed) / 200_000
	if math.Abs(frac-0.58989) > 0.01 {
		t.Errorf("completed fraction %.4f, want 0.590 ± 0.01", frac)
	}
	if r.Throttled != 0 {
		t.Errorf("429s %d, want 0", r.Throttled)
	}
	if r.Completed+r.Rejected != 200_000 {
		t.Errorf("completed %d + rejected %d != arrivals", r.Completed, r.Rejected)
	}
	if w := r.MeanWait.Seconds(); math.Abs(w-5.64) > 0.15 {
		t.Errorf("mean wait %.3fs, want 5.64 ± 0.15 s", w)
	}
	// Little's Law for the in-flight stage: L = λW within 1%.
	if rel := math.Abs(r.MeanInFlight-r.LambdaW) / r.LambdaW; rel > 0.01 {
		t.Errorf("Little: L %.3f vs λW %.3f (rel %.4f)", r.MeanInFlight, r.LambdaW, rel)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := Run(Default(20_000)), Run(Default(20_000))
	if a != b {
		t.Fatalf("same seed, different results:\n%+v\n%+v", a, b)
	}
	c := Default(20_000)
	c.Seed = 2
	if Run(c) == a {
		t.Fatal("different seeds gave identical results")
	}
}

// Memory follows what waits and is in flight, not the number of requests.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Run(Default(2_000_000))
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Fatalf("retained heap grew by %d bytes after 2M requests", grown)
	}
}

func BenchmarkFullPath(b *testing.B) {
	cfg := Default(b.N)
	b.ReportAllocs()
	start := time.Now()
	r := Run(cfg)
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
	b.ReportMetric(float64(r.Events)/float64(b.N), "events/req")
}
