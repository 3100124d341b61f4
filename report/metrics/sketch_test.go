package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// The per-scope and per-tenant quantiles are within the stated relative
// accuracy of the exact order statistics; count, mean and maximum are
// exact; no quantile exceeds the maximum; zero waits are kept as zeros.
func TestSketchAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := newSketchMapping()
	sq := newSketchQueue(m)
	var k sketch
	var xs []float64
	var sum float64
	for range 50_000 {
		d := time.Duration(math.Exp(math.Log(0.2e9) + 1.2*r.NormFloat64()))
		if r.IntN(4) == 0 {
			d = 0 // a quarter of acquisitions never wait
		}
		k.add(d, sq)
		xs = append(xs, float64(d)/1e9)
		sum += float64(d)
	}
	slices.Sort(xs)
	sq.flush()
	got := k.dist(m)
	if got.Count != int64(len(xs)) || math.Abs(got.Mean-sum/float64(len(xs))/1e9) > 1e-12 || got.Max != xs[len(xs)-1] {
		t.Fatalf("count %d mean %v max %v, want %d %v %v", got.Count, got.Mean, got.Max, len(xs), sum/float64(len(xs))/1e9, xs[len(xs)-1])
	}
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, got.P50}, {0.9, got.P90}, {0.99, got.P99}} {
		// Any value between the order statistics around rank q·n is exact
		// enough; the sketch may be 1% off that range.
		lo, hi := xs[int(math.Floor(c.q*float64(len(xs)-1)))], xs[int(math.Ceil(c.q*float64(len(xs)-1)))]
		if c.got < lo*(1-sketchAccuracy)-1e-9 || c.got > hi*(1+sketchAccuracy)+1e-9 {
			t.Errorf("p%v = %v, want within 1%% of [%v, %v]", c.q*100, c.got, lo, hi)
		}
		if c.got > got.Max {
			t.Errorf("p%v = %v above the maximum %v", c.q*100, c.got, got.Max)
		}
	}
	var zeros sketch
	for range 10 {
		zeros.add(0, sq)
	}
	if d := zeros.dist(m); d.Count != 10 || d.P99 != 0 || d.Max != 0 {
		t.Fatalf("ten zero waits: %+v", d)
	}
	if (&sketch{}).dist(m) != (Dist{}) {
		t.Fatal("an empty sketch reports figures")
	}
}

// Ten thousand scopes with 300 waits each fit in a few tens of
// megabytes: memory follows the spread of the values, not their number
// (a 2-significant-figure HdrHistogram over the same range takes 34 KB
// each, 340 MB in all).
func TestSketchMemoryPerScope(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 10,000 sketches")
	}
	r := rand.New(rand.NewPCG(3, 4))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sq := newSketchQueue(newSketchMapping())
	ks := make([]sketch, 10_000)
	for i := range ks {
		for range 300 {
			ks[i].add(time.Duration(math.Exp(math.Log(0.05e9)+1.0*r.NormFloat64())), sq)
		}
	}
	sq.flush()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perScope := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(ks))
	t.Logf("%.0f bytes per scope", perScope)
	if perScope > 6_000 {
		t.Fatalf("%.0f bytes per scope, want at most 6,000", perScope)
	}
	runtime.KeepAlive(ks)
}

// A binned sketch counts its values in its own bins and moves them into the
// DDSketch when read, or when a bin is about to overflow: its figures are
// those of the DDSketch fed directly, value by value, whichever way its
// bins grew (values arriving below and above the first ones) and however
// often it is read.
func TestDenseSketchMatchesDDSketch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m := newSketchMapping()
	// Two binned sketches share one queue, as a recorder's hosts do: each
	// must count its own values, whichever fills the queue.
	q, sq := newBinQueue(), newSketchQueue(m)
	bin, direct := binned{m: m}, sketch{}
	other, otherDirect := binned{m: m}, sketch{}
	least := time.Duration(math.MaxInt64)
	for i := range 20_000 {
		// Ever wider: the bins grow on both sides, a few decades in all.
		d := time.Duration(math.Exp(math.Log(0.1e9) + (0.2+float64(i)/10_000)*r.NormFloat64()))
		if i%7 == 0 {
			d = 0
		}
		if d > 0 {
			least = min(least, d)
		}
		bin.add(d, q)
		direct.add(d, sq)
		if i%3 == 0 {
			other.add(2*d, q)
			otherDirect.add(2*d, sq)
		}
		if i == 10_000 {
			q.flush()
			sq.flush()
			if a, b := bin.dist(), direct.dist(m); a != b {
				t.Fatalf("after 10,001 values: binned %+v, direct %+v", a, b)
			}
		}
	}
	q.flush()
	sq.flush()
	if a, b := bin.dist(), direct.dist(m); a != b {
		t.Fatalf("binned %+v, direct %+v", a, b)
	}
	if a, b := other.dist(), otherDirect.dist(m); a != b {
		t.Fatalf("second sketch on the queue: binned %+v, direct %+v", a, b)
	}
	// Room to spare, but bounded by the spread of the values.
	if spread := m.Index(float64(direct.max)) - m.Index(float64(least)) + 1; len(bin.bins) > 2*spread+64 {
		t.Errorf("%d bins for values spanning %d", len(bin.bins), spread)
	}

	// A full bin moves every count into the DDSketch: 70,000 equal values
	// overflow a two-byte bin once.
	full := binned{m: m}
	for range 70_000 {
		full.add(time.Second, q)
	}
	q.flush()
	if full.s == nil || full.s.GetCount() != math.MaxUint16 || full.bins[m.Index(1e9)-full.lo] != 70_000-math.MaxUint16 {
		t.Fatal("a bin reaching its limit did not move the counts into the DDSketch")
	}
	full.add(2*time.Second, q)
	q.flush()
	if got := full.dist(); got.Count != 70_001 || math.Abs(got.P99-1) > 0.01 || got.Max != 2 {
		t.Fatalf("a bin filled past its limit: %+v, want 70,001 values with p99 1 s and max 2 s", got)
	}
}

// Sketches sharing a queue each get their own values, in their
// DDSketches once the queue is flushed, whether it flushed itself when
// full or was flushed when read: each reads as a DDSketch fed its values
// one by one.
func TestSketchQueueFeedsEachSketch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m := newSketchMapping()
	sq := newSketchQueue(m)
	ks := make([]sketch, 3)
	refs := make([]*ddsketch.DDSketch, len(ks))
	for i := range refs {
		refs[i] = ddsketch.NewDDSketch(m, store.NewBufferedPaginatedStore(), store.NewBufferedPaginatedStore())
	}
	for n := range 3*sketchQueueLen + 17 { // the queue fills three times, and holds 17 at the end
		i := r.IntN(len(ks))
		d := time.Duration(math.Exp(math.Log(float64(i+1)*1e8) + 0.5*r.NormFloat64()))
		ks[i].add(d, sq)
		if err := refs[i].Add(float64(d)); err != nil {
			t.Fatal(err)
		}
		if n == sketchQueueLen-1 && len(sq.q) != 0 {
			t.Fatalf("a full queue holds %d values", len(sq.q))
		}
	}
	sq.flush()
	for i, k := range ks {
		for _, p := range []float64{0.5, 0.9, 0.99} {
			got, err := k.s.GetValueAtQuantile(p)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := refs[i].GetValueAtQuantile(p)
			if got != want || k.s.GetCount() != refs[i].GetCount() {
				t.Fatalf("sketch %d: p%v %v of %v values, fed directly %v of %v", i, 100*p, got, k.s.GetCount(), want, refs[i].GetCount())
			}
		}
	}
}
