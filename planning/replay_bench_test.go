package planning

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/limitsim/limitsim/sim/client"
)

// writeBenchLog writes a JSON-lines log of n requests, one a millisecond
// on average, over three tenants, without holding it.
func writeBenchLog(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := genT0.UnixMilli()
	for i := range n {
		status := 200
		if i%50 == 0 {
			status = 429
		}
		fmt.Fprintf(w, `{"time":%d,"status":%d,"request_time":0.%03d,"key":"k%d"}`+"\n", t0+int64(i)+int64(i%3), status, 100+i%700, i%3)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchReplay replays a log of n lines through a token bucket and reports
// the peak heap seen while it ran (sampled every 20 ms) and the records
// replayed a second: the heap stays the same for a log five times longer.
func benchReplay(b *testing.B, n int) {
	path := writeBenchLog(b, n)
	cfg := replayScenario(b, 1000, "[[client.limiter]]\nname = \"pace\"\nkind = \"token_bucket\"\nrate = 1200.0\nburst = 100\n")
	var peak uint64
	for b.Loop() {
		runtime.GC()
		stop, done := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peak = max(peak, ms.HeapAlloc)
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		out, c, err := Replay(cfg, ReplayLog{Path: path, Options: jsonLog}, client.Options{SeriesUnread: true})
		close(stop)
		<-done
		if err != nil {
			b.Fatal(err)
		}
		out.Series.Close()
		if c.Records != int64(n) {
			b.Fatalf("%d records of %d", c.Records, n)
		}
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReplay200k, BenchmarkReplayMillion and
// BenchmarkReplayTenMillion replay logs of 2·10⁵, 10⁶ and 10⁷ lines
// through a token bucket at 1,200/s against a quota of 1,000 a second,
// one a millisecond, so over 3, 17 and 167 minutes: the peak heap grows
// with those minutes (a row each in the comparison), not with the lines.
// The longest writes a log of about 700 MB to the temporary directory.
func BenchmarkReplay200k(b *testing.B)       { benchReplay(b, 200_000) }
func BenchmarkReplayMillion(b *testing.B)    { benchReplay(b, 1_000_000) }
func BenchmarkReplayTenMillion(b *testing.B) { benchReplay(b, 10_000_000) }
