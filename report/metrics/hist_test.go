package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
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
	counts := make([]int64, histLen)
	for i, v := range values {
		v = min(v, maxRecordable)
		if err := ref.RecordValues(v, int64(i+1)); err != nil {
			t.Fatal(err)
		}
		counts[histIndex(v)] += int64(i + 1)
	}
	if want := ref.Export().Counts; !slices.Equal(counts, want) {
		for i := range counts {
			if counts[i] != want[i] {
				t.Fatalf("index %d: hist counts %d, HdrHistogram %d", i, counts[i], want[i])
			}
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
