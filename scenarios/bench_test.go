package scenarios

import (
	"testing"
	"time"
)

// BenchmarkPipeline runs a full scenario (Poisson arrivals, a FIFO token
// bucket, a semaphore, a lognormal upstream with a quota answering 429)
// and reports simulated requests per wall second.
func BenchmarkPipeline(b *testing.B) {
	sc, err := Load("examples/fail-sustained-429.toml")
	if err != nil {
		b.Fatal(err)
	}
	sc.Run.Duration = Duration(time.Duration(b.N) * time.Second / 150) // b.N arrivals at 150/s
	sc.Run.Warmup = 0
	b.ReportAllocs()
	b.ResetTimer()
	out, err := simulate(sc)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(out.Results.Requests.Arrived)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(out.Results.Events)/float64(max(1, out.Results.Requests.Arrived)), "events/req")
}
