package logs

import (
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// clfGenerator writes a combined log with request_time on the fly, lines
// lines long, without holding it: arrivals 1 ms apart on average, the
// occasional line up to 2 s out of order (a slow request logged late).
type clfGenerator struct {
	lines, written int
	buf            []byte // the current line
	pending        []byte // what of it is not yet read
	t              int64  // ms since the start
}

func (g *clfGenerator) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.pending) == 0 {
			if g.written == g.lines {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			g.buf = g.line(g.buf[:0])
			g.pending = g.buf
			g.written++
		}
		c := copy(p[n:], g.pending)
		g.pending, n = g.pending[c:], n+c
	}
	return n, nil
}

var epoch = time.Date(2023, 10, 10, 0, 0, 0, 0, time.UTC)

func (g *clfGenerator) line(b []byte) []byte {
	g.t += int64(g.written % 3) // 0, 1 or 2 ms apart
	at := g.t
	if g.written%1000 == 0 {
		at -= 2000
	}
	b = append(b, "203.0.113."...)
	b = strconv.AppendInt(b, int64(g.written%250), 10)
	b = append(b, " - key-"...)
	b = strconv.AppendInt(b, int64(g.written%50), 10)
	b = epoch.Add(time.Duration(at)*time.Millisecond).AppendFormat(append(b, " ["...), clfLayout)
	b = append(b, `] "GET /v1/items/`...)
	b = strconv.AppendInt(b, int64(g.written), 10)
	b = append(b, ` HTTP/1.1" 200 2326 "-" "Mozilla/5.0 (X11; Linux x86_64)" 0.`...)
	b = strconv.AppendInt(b, int64(100+g.written%900), 10)
	return append(b, '\n')
}

// BenchmarkReadTenMillion reads a combined log of 10⁷ lines generated on
// the fly, mapping tenant and host. It reports the bytes read per
// iteration (MB/s), the lines read a second (generation included), and
// the peak live heap, sampled after a collection every 2²⁰ lines: a
// bound that does not grow with the log.
func BenchmarkReadTenMillion(b *testing.B) {
	const lines = 10_000_000
	benchRead(b, lines, nil)
}

// BenchmarkReadMillion is BenchmarkReadTenMillion at a tenth of the
// length: the same peak heap shows the bound is fixed.
func BenchmarkReadMillion(b *testing.B) { benchRead(b, 1_000_000, nil) }

// BenchmarkReadMillionMatched is BenchmarkReadMillion with each request
// matched (Options.Match given the method and URL path of every line, a
// million distinct URLs): the same allocations and peak heap.
func BenchmarkReadMillionMatched(b *testing.B) {
	benchRead(b, 1_000_000, func(method, path []byte) int32 { return int32(len(method) + len(path)) })
}

func benchRead(b *testing.B, lines int, match func(method, path []byte) int32) {
	var size int64
	probe := &clfGenerator{lines: lines}
	size, _ = io.Copy(io.Discard, probe)
	b.SetBytes(size)
	b.ReportAllocs()
	var peak uint64
	var ms runtime.MemStats
	for b.Loop() {
		runtime.GC()
		r, err := NewReader(&clfGenerator{lines: lines}, "gen.log", Options{Mapping: Mapping{Tenant: "remote_user", Host: "method"}, Match: match})
		if err != nil {
			b.Fatal(err)
		}
		var rec Record
		for n := 0; ; n++ {
			ok, err := r.Next(&rec)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			if n&(1<<20-1) == 0 {
				runtime.GC() // the live heap: what the reader holds
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
		if r.Records() != int64(lines) {
			bad, named := r.Bad()
			b.Fatalf("%d records of %d lines; %d bad: %v", r.Records(), lines, bad, named)
		}
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
