package client

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// cumulative returns the running sums of the weights ws (positive and
// finite), normalised so that the last is 1. Weights whose sum overflows
// (two of 1e308) are first divided by the largest, which leaves their
// ratios; other weights are summed as given.
func cumulative(ws []float64) []float64 {
	out := make([]float64, len(ws))
	var t float64
	for i, w := range ws {
		t += w
		out[i] = t
	}
	if math.IsInf(t, 1) {
		top := slices.Max(ws)
		t = 0
		for i, w := range ws {
			t += w / top
			out[i] = t
		}
	}
	for i := range out {
		out[i] /= t
	}
	return out
}

// weighted draws indices 0…n−1 in proportion to their weights.
type weighted struct {
	cum  []float64 // cumulative weights, normalised: the last is 1
	even bool      // every weight is the same (and there are two or more)
}

func newWeighted(ws []float64) weighted {
	w := weighted{cum: cumulative(ws), even: len(ws) > 1}
	for _, x := range ws {
		w.even = w.even && x == ws[0]
	}
	return w
}

// n is the number of indices.
func (w *weighted) n() int { return len(w.cum) }

// pick draws an index: the first i with cum[i] ≥ a uniform draw.
func (w *weighted) pick(r *rand.Rand) int {
	if len(w.cum) == 1 { // one host, tenant or path: no draw (and the call inlines to this test)
		return 0
	}
	return w.draw(r)
}

// draw is pick among two or more indices; kept out of pick, whose call
// then inlines.
func (w *weighted) draw(r *rand.Rand) int { return w.at(r.Float64()) }

// evenGuard is how close, in units of one index, x·n may come to a whole
// number before an even pick looks at the cumulative weights: far more
// than their rounding, so that outside it the index from x·n alone is the
// one the cumulative weights give. The running sums of n equal weights
// drift from k·w by at most about n²·2⁻⁵⁴ of an index (2.4·10⁻⁷ for the
// 65,536 tenants or hosts a scenario may have; 6.6·10⁻⁸ measured with
// weights of 0.1), and x·n rounds by n·2⁻⁵³.
const evenGuard = 1e-4

// at returns the first i with cum[i] ≥ x, x in [0, 1). Among equal
// weights that is ⌊x·n⌋, read without touching cum (thousands of tenants
// or hosts: a cache miss an arrival) unless x·n is within evenGuard of a
// whole number. Otherwise it guesses i as if the weights were equal and
// walks a few steps from there, which finds it at once among near-equal
// weights, and falls back to a binary search. The index is the same
// every way.
func (w *weighted) at(x float64) int {
	cum := w.cum
	n := len(cum)
	f := x * float64(n)
	i := min(int(f), n-1)
	if w.even {
		if d := f - float64(i); d > evenGuard && d < 1-evenGuard {
			return i
		}
	}
	for range 4 {
		switch {
		case i > 0 && cum[i-1] >= x:
			i--
		case i < n-1 && cum[i] < x:
			i++
		default:
			return i
		}
	}
	return min(sort.SearchFloat64s(cum, x), n-1)
}
