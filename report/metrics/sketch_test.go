package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// The per-scope and per-tenant quantiles are within the stated relative
// accuracy of the exact order statistics; count, mean and maximum are
// exact; no quantile exceeds the maximum; zero waits are kept as zeros.
func TestSketchAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := sharedSketchMapping()
	var k sketch
	var xs []float64
	var sum float64
	for range 50_000 {
		d := time.Duration(math.Exp(math.Log(0.2e9) + 1.2*r.NormFloat64()))
		if r.IntN(4) == 0 {
			d = 0 // a quarter of acquisitions never wait
		}
		k.add(d, m)
		xs = append(xs, float64(d)/1e9)
		sum += float64(d)
	}
	slices.Sort(xs)
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
		zeros.add(0, m)
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
	m := sharedSketchMapping()
	ks := make([]sketch, 10_000)
	for i := range ks {
		for range 300 {
			ks[i].add(time.Duration(math.Exp(math.Log(0.05e9)+1.0*r.NormFloat64())), m)
		}
		ks[i].movePending()
	}
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
	m := sharedSketchMapping()
	// Two binned sketches share one queue, as a recorder's hosts do: each
	// must count its own values, whichever fills the queue.
	q := newBinQueue()
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
		direct.add(d, m)
		if i%3 == 0 {
			other.add(2*d, q)
			otherDirect.add(2*d, m)
		}
		if i == 10_000 {
			q.flush()
			if a, b := bin.dist(), direct.dist(m); a != b {
				t.Fatalf("after 10,001 values: binned %+v, direct %+v", a, b)
			}
		}
	}
	q.flush()
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
	if full.positive == nil || full.positive.TotalCount() != math.MaxUint16 || full.bins[m.Index(1e9)-full.low] != 70_000-math.MaxUint16 {
		t.Fatal("a bin reaching its limit did not move the counts into the DDSketch")
	}
	full.add(2*time.Second, q)
	q.flush()
	if got := full.dist(); got.Count != 70_001 || math.Abs(got.P99-1) > 0.01 || got.Max != 2 {
		t.Fatalf("a bin filled past its limit: %+v, want 70,001 values with p99 1 s and max 2 s", got)
	}
}

// A sketch holds its values' bin indices back and moves them into its bins
// a few at a time, and when read: read at any moment, even with values
// pending or in the bins' array, before and after the array first
// spills into the store, it gives the figures of a DDSketch fed each value
// at once, and its bins then hold every value above zero.
func TestSketchPendingValuesReachTheBins(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m := sharedSketchMapping()
	var k sketch
	ref := newRefSketch(m.LogarithmicMapping)
	var above int
	for n := range 4*sketchPending + 3*sketchListLen + 3 {
		d := time.Duration(math.Exp(math.Log(1e8) + 0.5*r.NormFloat64()))
		if n%5 == 2 {
			d = 0
		} else {
			above++
		}
		k.add(d, m)
		ref.add(t, d)
		if got, want := k.dist(m), ref.dist(t); got != want {
			t.Fatalf("after %d values: %+v, fed at once %+v", n+1, got, want)
		}
		if k.positive.count() != above {
			t.Fatalf("after %d values, %d above zero: the bins hold %v once read", n+1, above, k.positive.count())
		}
	}
	// Between reads, at most sketchPending values wait outside the bins.
	var u sketch
	for n := range 10 * sketchPending {
		u.add(time.Duration(n+1)*time.Millisecond, m)
		if in := 0; u.positive != nil {
			in = u.positive.count()
			if n+1-in > sketchPending {
				t.Fatalf("after %d values, %d are in the bins", n+1, in)
			}
		} else if n+1 > sketchPending {
			t.Fatalf("after %d values, none is in the bins", n+1)
		}
	}
}

// The bins' array answers a rank as a DDSketch store holding the same
// indices does: the least index whose cumulative count exceeds the rank,
// the greatest past the last rank, 0 when empty. Repeated indices, ranks
// below zero, fractional, at and beyond the count, and arrays that have
// spilled into the store (or not) are all compared.
func TestSketchBinsRankAsTheStore(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 400 {
		n := trial % (3*sketchListLen + 5)
		var b sketchBins
		st := store.NewBufferedPaginatedStore()
		spread := 1 + r.IntN(40) // narrow spreads repeat indices
		for range n {
			i := uint16(2000 + r.IntN(spread))
			b.add(i)
			st.Add(int(i))
		}
		if b.count() != n {
			t.Fatalf("%d values added, count %d", n, b.count())
		}
		ranks := []float64{-1, 0, 0.5, float64(n) - 1, float64(n) - 0.01, float64(n), float64(n) + 3, math.NaN(), math.Inf(-1), math.Inf(1)}
		for range 5 {
			ranks = append(ranks, r.Float64()*float64(n))
		}
		for _, rank := range ranks {
			if got, want := b.KeyAtRank(rank), st.KeyAtRank(rank); got != want {
				t.Fatalf("%d values (spread %d, in store: %v): rank %v gives %d, the store %d", n, spread, b.store != nil, rank, got, want)
			}
		}
		if n > sketchListLen && b.store == nil {
			t.Fatalf("%d values and no store: the array holds %d", n, len(b.indices))
		}
	}
}

// A binned sketch's bins, ranked where they are, answer a rank as the
// DDSketch store they used to be moved into: bins with gaps, leading and
// trailing zeros, counts near two bytes' limit, and ranks below zero,
// fractional, at and beyond the total, NaN and infinite. A ranking that
// counted from the wrong end, skipped the last bin or returned 0 past the
// total would answer otherwise.
func TestBinRanksAsTheStore(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 300 {
		b := binRanks{low: 1500 + r.IntN(200), bins: make([]uint16, 1+r.IntN(80))}
		st := store.NewDenseStore()
		total := 0
		for j := range b.bins {
			if r.IntN(3) == 0 {
				continue // a gap
			}
			c := 1 + r.IntN(5)
			if trial%10 == 0 {
				c = 65_000 + r.IntN(535)
			}
			b.bins[j] = uint16(c)
			st.AddWithCount(b.low+j, float64(c))
			total += c
		}
		if total == 0 {
			continue
		}
		ranks := []float64{-1, 0, 0.5, 1, float64(total) - 1, float64(total) - 0.01, float64(total), float64(total) + 3, math.NaN(), math.Inf(-1), math.Inf(1)}
		for range 8 {
			ranks = append(ranks, r.Float64()*float64(total))
		}
		for _, rank := range ranks {
			if got, want := b.KeyAtRank(rank), st.KeyAtRank(rank); got != want {
				t.Fatalf("trial %d (%d bins from %d, total %d): rank %v gives %d, the store %d", trial, len(b.bins), b.low, total, rank, got, want)
			}
		}
	}
}

// A binned sketch gives the same figures read from its bins as after they
// moved into a store, and the same again when some of its values moved
// into the store during the run (a bin near two bytes' limit) and the rest
// are read with them.
func TestBinnedDistFromTheBins(t *testing.T) {
	m := sharedSketchMapping()
	r := rand.New(rand.NewPCG(31, 32))
	for trial := range 40 {
		var a, b binned
		a.m, b.m = m, m
		var qa, qb binQueue
		for i := range 200 + trial*50 {
			d := time.Duration(r.ExpFloat64() * float64(50*time.Millisecond))
			if i%17 == 0 {
				d = 0
			}
			a.add(d, &qa)
			b.add(d, &qb)
			if trial%4 == 1 && i == 100 {
				qa.flush()
				a.moveBins() // as an overflow does: later values stay in the bins
			}
		}
		qa.flush()
		qb.flush()
		fromBins := b.dist()
		b.moveBins()
		if b.positive == nil {
			t.Fatal("the bins did not move")
		}
		if got := b.dist(); got != fromBins {
			t.Fatalf("trial %d: from the bins %+v, from the store %+v", trial, fromBins, got)
		}
		if trial%4 == 1 {
			if got := a.dist(); got != fromBins {
				t.Fatalf("trial %d: partly moved %+v, from the bins %+v", trial, got, fromBins)
			}
		}
	}
}

// An index beyond two bytes (none from a duration under this package's
// mapping, but possible under another) goes into the bins at once, after
// the values pending before it: the figures are still a DDSketch's fed
// value by value.
func TestSketchIndexBeyondTwoBytes(t *testing.T) {
	for _, offset := range []float64{64_500, 70_000} {
		m, err := mapping.NewLogarithmicMappingWithGamma(1.02, offset)
		if err != nil {
			t.Fatal(err)
		}
		var k sketch
		ref := newRefSketch(m)
		im := indexMapping(m)
		for n := range 50 {
			d := time.Duration(1 + n*n*n*1_000_003) // 1 ns to 118 s: at offset 64,500, indices on both sides of 65,535
			k.add(d, im)
			ref.add(t, d)
		}
		want := ref.dist(t)
		if got := k.dist(im); got != want {
			t.Errorf("index offset %v: %+v, fed at once %+v", offset, got, want)
		}
	}
}

// refSketch is a DDSketch fed each value at once, with the exact count,
// sum and maximum: the figures a sketch must give.
type refSketch struct {
	s    *ddsketch.DDSketch
	n    int64
	sum  float64
	most time.Duration
}

func newRefSketch(m mapping.IndexMapping) *refSketch {
	return &refSketch{s: ddsketch.NewDDSketch(m, store.NewBufferedPaginatedStore(), store.NewBufferedPaginatedStore())}
}

func (r *refSketch) add(t *testing.T, d time.Duration) {
	t.Helper()
	if err := r.s.Add(float64(d)); err != nil {
		t.Fatal(err)
	}
	r.n++
	r.sum += float64(d)
	r.most = max(r.most, d)
}

// dist is the Dist of the values so far, as sketch.dist reports it.
func (r *refSketch) dist(t *testing.T) Dist {
	t.Helper()
	q := func(p float64) float64 {
		v, err := r.s.GetValueAtQuantile(p)
		if err != nil {
			t.Fatal(err)
		}
		return min(math.Round(v), float64(r.most)) / 1e9
	}
	return Dist{Count: r.n, Mean: r.sum / float64(r.n) / 1e9, P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: float64(r.most) / 1e9}
}

// index gives the mapping's own Index for every duration: at and around
// every bin's bound (where the guard hands the value to the logarithm, and
// just beyond it, where the tables decide), across random durations from
// 1 ns up, and under a mapping with an index offset.
func TestSketchIndexIsTheMappings(t *testing.T) {
	offset, err := mapping.NewLogarithmicMappingWithGamma(1.02, 64_500)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*sketchMapping{sharedSketchMapping(), indexMapping(offset)} {
		if len(m.start) == 0 {
			t.Fatal("no index tables were built: every index takes the logarithm")
		}
		check := func(d time.Duration) {
			t.Helper()
			if got, want := m.index(d), m.Index(float64(d)); got != want {
				t.Fatalf("index(%d ns) = %d, the mapping says %d", d, got, want)
			}
		}
		for _, e := range m.edges {
			b := math.Float64frombits(e.at)
			for _, rel := range []float64{-3e-9, -1e-9, 0, 1e-9, 3e-9} {
				f := b * (1 + rel)
				if f < 1 || f >= math.MaxInt64 {
					continue
				}
				for dd := -3; dd <= 3; dd++ {
					if d := time.Duration(f) + time.Duration(dd); d >= 1 {
						check(d)
					}
				}
			}
		}
		r := rand.New(rand.NewPCG(9, 10))
		for range 300_000 {
			check(time.Duration(math.Exp(r.Float64() * math.Log(math.MaxInt64/2))))
		}
		for _, d := range []time.Duration{1, 2, 3, time.Second, math.MaxInt64} {
			check(d)
		}
	}
}

// The tables' bounds come from the exponential, the mapping's index from
// the logarithm; the guard band around each bound absorbs their
// disagreement. With every bound off by 10⁻¹⁰ of itself (far more than
// rounding), index still agrees with the mapping next to every bound.
func TestSketchIndexGuardAbsorbsBoundError(t *testing.T) {
	for _, nudge := range []float64{1e-10, -1e-10} {
		m := indexMapping(newSketchMapping())
		for j, e := range m.edges {
			b := math.Float64frombits(e.at) * (1 + nudge)
			m.edges[j] = edge{math.Float64bits(b), math.Float64bits(b * (1 + indexGuard)), math.Float64bits(b * (1 - indexGuard))}
		}
		for j, e := range m.edges {
			b := math.Float64frombits(e.at)
			if b < 1e4 || b >= math.MaxInt64/2 {
				continue
			}
			// The integers between the true bound and the nudged one, and
			// a few on either side.
			lo, hi := time.Duration(b*(1-2e-10))-2, time.Duration(b*(1+2e-10))+2
			for d := lo; d <= hi; d += max(1, (hi-lo)/64) {
				if got, want := m.index(d), m.Index(float64(d)); got != want {
					t.Fatalf("bounds nudged by %v: index(%d ns) = %d next to bound %d, the mapping says %d", nudge, d, got, j, want)
				}
			}
		}
	}
}

// The tables answer for themselves away from the bounds: inside every
// bin, just past its lower guard band, at its middle and just short of its
// upper band, tableIndex gives the mapping's index without the logarithm.
// (index alone would hide a wrong table: its guard would send every value
// to the logarithm.) A mapping whose offset makes the index values too
// coarse for the guard band gets no tables.
func TestSketchTablesAnswerOutsideTheGuard(t *testing.T) {
	m := sharedSketchMapping()
	answered := 0
	for j := 0; j+1 < len(m.edges); j++ {
		lo, hi := math.Float64frombits(m.edges[j].at), math.Float64frombits(m.edges[j+1].at)
		if hi >= math.MaxInt64/2 {
			break
		}
		inLo, inHi := lo*(1+2*indexGuard), hi*(1-2*indexGuard)
		for _, c := range []float64{math.Ceil(inLo), math.Round(math.Sqrt(lo * hi)), math.Floor(inHi)} {
			if c <= inLo || c >= inHi {
				continue // no whole nanosecond there: the bins of a few nanoseconds
			}
			i, ok := m.tableIndex(time.Duration(c))
			if want := m.Index(c); !ok || i != want {
				t.Fatalf("tableIndex(%v ns) = %d, %v inside bin %d; want %d from the tables", c, i, ok, m.base+j, want)
			}
			answered++
		}
	}
	if answered < 5000 { // three in each of the 1,900 bins from about 100 ns up to 2⁶² ns, fewer below
		t.Fatalf("the tables answered only %d values", answered)
	}
	coarse, err := mapping.NewLogarithmicMappingWithGamma(1.02, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	cm := indexMapping(coarse)
	if len(cm.start) > 0 {
		t.Fatal("tables built for index values around 10⁹, whose rounding steps are wider than the guard band")
	}
	for _, d := range []time.Duration{1, 999, 9191337947403611136} {
		if got, want := cm.index(d), coarse.Index(float64(d)); got != want {
			t.Fatalf("without tables: index(%d) = %d, want %d", d, got, want)
		}
	}
}

// FuzzSketchIndex checks index against the mapping's Index for any
// duration of at least 1 ns, under the sketches' mapping and one with an
// index offset; the input is also read as a point on a log scale from
// 1 ns to 2⁶² ns, so that short durations are tried as often as long ones.
func FuzzSketchIndex(f *testing.F) {
	for _, d := range []int64{1, 999, 1e9, 1e18, math.MaxInt64, -1} {
		f.Add(d)
	}
	offset, err := mapping.NewLogarithmicMappingWithGamma(1.02, 64_500)
	if err != nil {
		f.Fatal(err)
	}
	ms := []*sketchMapping{sharedSketchMapping(), indexMapping(offset)}
	f.Fuzz(func(t *testing.T, x int64) {
		logScale := time.Duration(math.Exp(float64(uint64(x)) / (1 << 64) * 62 * math.Ln2))
		for _, d := range []time.Duration{time.Duration(x), logScale} {
			if d < 1 {
				continue
			}
			for _, m := range ms {
				if got, want := m.index(d), m.Index(float64(d)); got != want {
					t.Fatalf("index(%d ns) = %d, the mapping says %d", d, got, want)
				}
			}
		}
	})
}

// BenchmarkSketchIndex times one bin index of a response-like duration
// (lognormal, median 100 ms), by the tables and by the mapping's
// logarithm. Each value is chosen by the index before it, so the time is
// that of one index after another, not of many overlapping.
func BenchmarkSketchIndex(b *testing.B) {
	m := sharedSketchMapping()
	r := rand.New(rand.NewPCG(11, 12))
	ds := make([]time.Duration, 1024)
	for i := range ds {
		ds[i] = time.Duration(math.Exp(math.Log(0.1e9) + 0.5*r.NormFloat64()))
	}
	for _, c := range []struct {
		name  string
		index func(time.Duration) int
	}{
		{"tables", m.index},
		{"logarithm", func(d time.Duration) int { return m.Index(float64(d)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			k := 0
			for i := 0; b.Loop(); i++ {
				k = c.index(ds[(i+k)&1023])
			}
			sinkIndex = k
		})
	}
}

var sinkIndex int

// dists reads many sketches on two goroutines and gives each the summary
// read alone gives, in its place: the halves neither swap nor share.
func TestDistsMatchSketchesReadOneByOne(t *testing.T) {
	m := sharedSketchMapping()
	fill := func() []sketch {
		r := rand.New(rand.NewPCG(13, 14))
		ks := make([]sketch, parallelDistsFrom+7)
		for i := range ks {
			for range 1 + i%9 {
				ks[i].add(time.Duration(math.Exp(math.Log(float64(1+i)*1e6)+0.7*r.NormFloat64())), m)
			}
		}
		return ks
	}
	alone, together := fill(), fill()
	got := dists(len(together), func(i int) Dist { return together[i].dist(m) })
	for i := range alone {
		if want := alone[i].dist(m); got[i] != want {
			t.Fatalf("sketch %d of %d: %+v, read alone %+v", i, len(alone), got[i], want)
		}
	}
	if len(got) != len(alone) {
		t.Fatalf("%d summaries for %d sketches", len(got), len(alone))
	}
}

// count returns how many values the bins hold.
func (b *sketchBins) count() int {
	if b == nil {
		return 0
	}
	c := b.n
	if b.store != nil {
		c += int(b.store.TotalCount())
	}
	return c
}
