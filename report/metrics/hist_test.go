package metrics

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// hist keeps its counts in the layout of an HdrHistogram of 1 ns to
// maxRecordable at three significant digits: every value lands at the index
// RecordValue would count it at, and the counts are as long. Each value is
// recorded with its own weight, so that values put at wrong indexes cannot
// add up to the right counts.
func TestHistLayoutIsHdrHistogram(t *testing.T) {
	ref := hdrhistogram.New(1, maxRecordable, 3)
	if n := len(ref.Export().Counts); n != histLen {
		t.Fatalf("HdrHistogram has %d counts, hist %d", n, histLen)
	}
	values := []int64{0, 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 1e6, 1e9, maxRecordable - 1, maxRecordable}
	for b := range 40 { // each bucket's ends
		values = append(values, 2048<<b-1, 2048<<b, 2048<<b+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, rng.Int64N(maxRecordable+1), rng.Int64N(1<<uint(rng.IntN(50)+1)))
	}
	sameLayout(t, ref, histLen, maxRecordable, histIndex, values)
}

// sameLayout records each of values (clamped to top) with its own weight
// in ref and at index(v) in counts of length n, and fails where the two
// differ.
func sameLayout(t *testing.T, ref *hdrhistogram.Histogram, n int, top int64, index func(int64) int, values []int64) {
	t.Helper()
	counts := make([]int64, n)
	for i, v := range values {
		v = min(v, top)
		if err := ref.RecordValues(v, int64(i+1)); err != nil {
			t.Fatal(err)
		}
		counts[index(v)] += int64(i + 1)
	}
	want := ref.Export().Counts
	for i := range counts {
		if counts[i] != want[i] {
			t.Fatalf("index %d: counts %d, HdrHistogram %d", i, counts[i], want[i])
		}
	}
}

// A hist reads as the HdrHistogram the same values were recorded into.
func TestHistReadsAsHdrHistogram(t *testing.T) {
	h, ref := newHist(), hdrhistogram.New(1, maxRecordable, 3)
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 10_000 {
		d := time.Duration(rng.ExpFloat64() * 1e8)
		if k%7 == 0 {
			d = 0
		}
		h.add(d)
		if err := ref.RecordValue(min(int64(d), maxRecordable)); err != nil {
			t.Fatal(err)
		}
	}
	z := *h
	z.counts = slices.Clone(h.counts)
	z.addZero()
	h.add(0)
	if err := ref.RecordValue(0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(z.counts, h.counts) || math.Float64bits(z.sum) != math.Float64bits(h.sum) {
		t.Fatal("addZero differs from add(0)")
	}
	for _, d := range []time.Duration{-1, time.Duration(maxRecordable + 1)} { // clamped to the ends
		h.add(d)
		if err := ref.RecordValue(min(max(int64(d), 0), maxRecordable)); err != nil {
			t.Fatal(err)
		}
	}
	got := h.hdr()
	if !got.Equals(ref) {
		t.Fatal("hist's HdrHistogram differs from one recorded directly")
	}
	o := newHist()
	o.add(3 * time.Second)
	if err := ref.RecordValue(int64(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if m := h.merged(o); !m.hdr().Equals(ref) || m.sum != h.sum+o.sum {
		t.Fatal("merged histogram differs")
	}
}

// An interval histogram counts in the layout of an HdrHistogram of 1 µs to
// 10¹³ ns at two significant digits: each value at the index RecordValue
// would count it at, with its own weight, and the counts as long.
func TestIvHistLayoutIsHdrHistogram(t *testing.T) {
	ref := hdrhistogram.New(1000, intervalMaxValue, 2)
	if n := len(ref.Export().Counts); n != intervalLen {
		t.Fatalf("HdrHistogram has %d counts, intervalHist %d", n, intervalLen)
	}
	values := []int64{0, 1, 511, 512, 513, 1000, 1 << 16, 1<<17 - 1, 1 << 17, 1<<17 + 1, intervalMaxValue - 1, intervalMaxValue}
	for b := range 28 { // each bucket's ends
		values = append(values, 1<<(17+b)-1, 1<<(17+b), 1<<(17+b)+1)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		values = append(values, rng.Int64N(intervalMaxValue+1), rng.Int64N(1<<uint(rng.IntN(43)+1)))
	}
	sameLayout(t, ref, intervalLen, intervalMaxValue, intervalIndex, values)
	for i := range intervalLen { // the highest value at each index is HdrHistogram's
		ref.Reset()
		if err := ref.RecordValue(intervalHighest(i)); err != nil {
			t.Fatal(err)
		}
		if got, want := intervalHighest(i), ref.ValueAtQuantile(50); got != want {
			t.Fatalf("index %d: highest value %d, HdrHistogram's %d", i, got, want)
		}
		if i > 0 && intervalIndex(intervalHighest(i-1)+1) != i {
			t.Fatalf("index %d does not start one past index %d's highest value", i, i-1)
		}
	}
}

// An interval's percentiles are HdrHistogram's, clamped to the interval's
// extremes, for samples of every size from one value up, with runs of
// equal values (ranks that fall on a boundary between two indexes), and
// the next interval starts empty however far the last one reached.
func TestIvHistPercentilesAreHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	h := newIntervalHist()
	for round := range 400 {
		ref := hdrhistogram.New(1000, intervalMaxValue, 2)
		n := 1 + round%23
		if round%5 == 0 {
			n = 1 + rng.IntN(5000)
		}
		lo, hi := int64(math.MaxInt64), int64(0)
		for range n {
			var v int64
			switch rng.IntN(4) {
			case 0:
				v = 0
			case 1:
				v = int64(rng.ExpFloat64() * 1e9)
			case 2:
				v = int64(1+rng.IntN(3)) * 1e8 // ties
			default:
				v = rng.Int64N(1 << uint(1+rng.IntN(44)))
			}
			v = min(v, intervalMaxValue)
			h.add(time.Duration(v))
			if err := ref.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		want := func(p float64) float64 {
			v := min(max(ref.ValueAtQuantile(p), lo), hi)
			if v < 1000 {
				return 0
			}
			r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v)/1e9, 'g', 3, 64), 64)
			return r
		}
		p50, p95, p99 := h.take()
		if p50 != want(50) || p95 != want(95) || p99 != want(99) {
			t.Fatalf("round %d (%d values): p50 %v p95 %v p99 %v, HdrHistogram %v %v %v", round, n, p50, p95, p99, want(50), want(95), want(99))
		}
		if slices.ContainsFunc(h.counts, func(c int64) bool { return c != 0 }) {
			t.Fatalf("round %d: counts left after take", round)
		}
	}
}

// distributionBuckets re-bins HdrHistogram's own Distribution into the
// tenth-of-a-decade bins of hist.buckets: the oracle buckets is held to.
func distributionBuckets(hh *hdrhistogram.Histogram) []Bucket {
	counts := map[int]int64{}
	for _, bar := range hh.Distribution() {
		if bar.Count == 0 {
			continue
		}
		k := -1
		if v := float64(bar.To) / 1e9; v > 0 {
			k = max(0, int(math.Ceil(10*math.Log10(v/1e-6)-1e-9)))
		}
		counts[k] += bar.Count
	}
	keys := slices.Sorted(maps.Keys(counts))
	out := make([]Bucket, 0, len(keys))
	for _, k := range keys {
		le := 0.0
		if k >= 0 {
			le = 1e-6 * math.Pow(10, float64(k)/10)
		}
		out = append(out, Bucket{LE: le, Count: counts[k]})
	}
	return out
}

// randomHist records n values (n may be 0): zeros, values at a bucket's
// end or just past it, spreads over one to twelve decades, the greatest
// recordable values, and values at random magnitudes.
func randomHist(rng *rand.Rand, n int) *hist {
	h := newHist()
	for range n {
		var d time.Duration
		switch rng.IntN(5) {
		case 0:
			d = 0
		case 1:
			b := uint(rng.IntN(40))
			d = time.Duration(2048<<b - 1 + int64(rng.IntN(3)))
		case 2:
			d = time.Duration(rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(12))))
		case 3:
			d = time.Duration(maxRecordable - int64(rng.IntN(2)))
		default:
			d = time.Duration(rng.Int64N(1 << uint(1+rng.IntN(45))))
		}
		h.add(d)
	}
	return h
}

// A limiter's wait histogram (wait_hist) is HdrHistogram's distribution
// of the same values re-binned: every index's values land in the bin of
// the index's highest value, zeros in a bin of their own, an empty
// histogram has no bin (and is not nil). Values sit at every bucket's
// ends, where a highest value off by one index would cross into the next
// bin.
func TestWaitBucketsAreHdrHistogramsDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for round := range 25 {
		n := rng.IntN(2000)
		if round == 0 {
			n = 0
		}
		h := randomHist(rng, n)
		got, want := h.buckets(), distributionBuckets(h.hdr())
		if got == nil || !slices.Equal(got, want) {
			t.Fatalf("round %d (%d values): buckets\n%v\nwant HdrHistogram's\n%v", round, n, got, want)
		}
	}
	for i := range histLen { // each index's highest value is HdrHistogram's
		if i > 0 && histIndex(histHighest(i-1)+1) != i || histIndex(histHighest(i)) != i {
			t.Fatalf("index %d: highest value %d is not the last of the index", i, histHighest(i))
		}
	}
}

// A hist's greatest value is HdrHistogram's Max of the same values, read
// from its last count: for no value, for zeros alone, for one value at
// each index's end, and for random samples.
func TestHistMaxIsHdrHistogramsMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(what string, h *hist) {
		t.Helper()
		if got, want := h.max(), h.hdr().Max(); got != want {
			t.Fatalf("%s: max %d, HdrHistogram's Max %d", what, got, want)
		}
	}
	check("empty", newHist())
	zeros := newHist()
	zeros.add(0)
	zeros.add(0)
	check("zeros", zeros)
	for _, v := range []int64{1, 2047, 2048, 4095, 4096, 1e9, maxRecordable} {
		h := newHist()
		h.add(time.Duration(v))
		h.add(0)
		check(strconv.FormatInt(v, 10), h)
	}
	for round := range 20 {
		check("random "+strconv.Itoa(round), randomHist(rng, 1+rng.IntN(500)))
	}
}

// hdr returns the HdrHistogram of the values h recorded: the oracle its
// readings are held to.
func (h *hist) hdr() *hdrhistogram.Histogram {
	return hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: 1,
		HighestTrackableValue: maxRecordable, SignificantFigures: 3, Counts: h.counts})
}

// A hist's summary is HdrHistogram's: its p50, p90, p99 and Max are
// ValueAtQuantile's and Max's for the same values, its count the total,
// its mean the exact sum's; for no value, one value, zeros alone, ties
// (ranks that fall on the boundary between two indexes) and random
// samples of every spread.
func TestHistDistIsHdrHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	check := func(what string, h *hist) {
		t.Helper()
		hh := h.hdr()
		var want Dist
		if n := hh.TotalCount(); n > 0 {
			s := func(v int64) float64 { return float64(v) / 1e9 }
			want = Dist{Count: n, Mean: h.sum / float64(n) / 1e9, P50: s(hh.ValueAtQuantile(50)),
				P90: s(hh.ValueAtQuantile(90)), P99: s(hh.ValueAtQuantile(99)), Max: s(hh.Max())}
		}
		if got := h.dist(); got != want {
			t.Fatalf("%s: dist %+v, HdrHistogram's %+v", what, got, want)
		}
	}
	check("empty", newHist())
	one := newHist()
	one.add(1500 * time.Millisecond)
	check("one value", one)
	zeros := newHist()
	zeros.add(0)
	zeros.add(0)
	check("zeros", zeros)
	// Two values, split so that each quantile's rank falls on, just
	// before or just after their boundary for some n.
	for _, c := range []struct {
		low      float64
		from, to int
	}{{0.5, 2, 150}, {0.9, 2, 150}, {0.99, 90, 210}} {
		low := c.low
		for n := c.from; n <= c.to; n++ {
			h := newHist()
			for j := range n {
				d := time.Second
				if float64(j) >= low*float64(n) {
					d = 2 * time.Second
				}
				h.add(d)
			}
			check(fmt.Sprintf("ties %v of %d", low, n), h)
		}
	}
	for round := range 20 {
		check("random "+strconv.Itoa(round), randomHist(rng, 1+rng.IntN(3000)))
	}
	for round := range 40 { // spread over a few decades, none at the top
		h := newHist()
		scale := math.Pow(10, float64(3+rng.IntN(8)))
		for range 1 + rng.IntN(400) {
			h.add(time.Duration(rng.ExpFloat64() * scale))
		}
		check("spread "+strconv.Itoa(round), h)
	}
}
