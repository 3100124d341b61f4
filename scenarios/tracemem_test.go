package scenarios

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// traceHeapBound is the most the heap in use may grow, loading and
// replaying a trace of a million arrivals: less than the 8 MB (7.6 MiB)
// that holding its instants in memory takes.
const traceHeapBound = 6 << 20

// heapNow returns the heap in use (runtime.MemStats.HeapInuse), read
// without stopping the world.
func heapNow(samples []metrics.Sample) uint64 {
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

// heapSamples are the runtime metrics whose sum is the heap in use.
func heapSamples() []metrics.Sample {
	return []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
}

// sampleHeap samples the heap in use every millisecond, and once more
// when stopped; stop returns the most it saw.
func sampleHeap() (stop func() uint64) {
	done, res := make(chan struct{}), make(chan uint64)
	go func() {
		samples := heapSamples()
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heapNow(samples))
			select {
			case <-done:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-res
	}
}

// heapInUse collects garbage and returns the heap in use.
func heapInUse() uint64 {
	runtime.GC()
	return heapNow(heapSamples())
}

// Loading and replaying a trace of a million arrivals in ascending order
// grows the heap in use by less than its instants would take (8 MB; the
// bound is 6 MiB): the
// file is read as the run goes, and nothing the run keeps grows with the
// arrivals. The same instants out of order, held in memory to be sorted,
// take more, which shows the measure sees them. Garbage is collected
// often (GOGC=10) so that the heap in use is what is live.
func TestTraceReplaysInBoundedMemory(t *testing.T) {
	const n = 1_000_000
	dir := t.TempDir()
	writeTrace(t, filepath.Join(dir, "trace.csv"), n, 10*time.Microsecond)
	if err := os.WriteFile(filepath.Join(dir, "late.csv"), []byte("99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "trace.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))

	before := heapInUse()
	stop := sampleHeap()
	sc, err := Parse(filepath.Join(dir, "s.toml"), []byte(bigTraceScenario))
	out, err := mustSimulateErr(sc, err)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results.Requests.Arrived; got != n {
		t.Fatalf("%d arrivals, want %d", got, n)
	}
	runtime.KeepAlive(out)
	if grew := int64(peak) - int64(before); grew >= traceHeapBound {
		t.Errorf("the heap in use grew by %.1f MiB replaying %d arrivals, want under %.0f MiB", float64(grew)/(1<<20), n, float64(traceHeapBound)/(1<<20))
	}

	// The control: one instant out of order at the end.
	if _, err := f.WriteString("0.5\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before = heapInUse()
	held, err := Parse(filepath.Join(dir, "s.toml"), []byte(bigTraceScenario))
	if err != nil {
		t.Fatal(err)
	}
	if grew := int64(heapInUse()) - int64(before); held.Workload.TraceTimes == nil || grew < traceHeapBound {
		t.Errorf("a trace of %d instants held in memory grew the heap in use by %.1f MiB, want at least %.0f MiB", n+1, float64(grew)/(1<<20), float64(traceHeapBound)/(1<<20))
	}
	runtime.KeepAlive(held)
}

// BenchmarkTraceReplay loads and replays a trace of
// LIMITSIM_TRACE_ARRIVALS arrivals a microsecond apart (10⁷ by default,
// about 100 MB; 10⁸ is about 1.1 GB), written to a temporary folder first,
// and reports the arrivals loaded and replayed a second and the most heap
// in use seen (GOGC as set, garbage included).
func BenchmarkTraceReplay(b *testing.B) {
	n := 10_000_000
	if s := os.Getenv("LIMITSIM_TRACE_ARRIVALS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("LIMITSIM_TRACE_ARRIVALS=%q: want a positive count", s)
		}
	}
	dir := b.TempDir()
	writeTrace(b, filepath.Join(dir, "trace.csv"), n, time.Microsecond)
	var peak, base uint64
	for b.Loop() {
		base = max(base, heapInUse())
		stop := sampleHeap()
		sc, err := Parse(filepath.Join(dir, "s.toml"), []byte(bigTraceScenario))
		out, err := mustSimulateErr(sc, err)
		peak = max(peak, stop())
		if err != nil {
			b.Fatal(err)
		}
		if got := out.Results.Requests.Arrived; got != int64(n) {
			b.Fatalf("%d arrivals, want %d", got, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "arrivals/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base)/(1<<20), "base-heap-MiB")
}
