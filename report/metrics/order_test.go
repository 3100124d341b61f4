package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// orderStats finds, in passes over numbers it never holds, what a sort
// puts at each place: over sets with ties, negatives, infinities, zeros
// of both signs, tiny and huge magnitudes and NaN, at every rank of small
// sets and at the ends, the deciles and random places of large ones. It
// catches a digit read from the wrong end of the key, a rank carried to
// the next pass unadjusted, negative numbers ordered by their magnitude,
// and a count that leaks between ranks.
func TestOrderStatsMatchSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1, -1}
	for trial := range 80 {
		n := 1 + rng.IntN(40)
		if trial%10 == 0 {
			n = 1000 + rng.IntN(20_000)
		}
		xs := make([]float64, n)
		for k := range xs {
			switch rng.IntN(4) {
			case 0:
				xs[k] = special[rng.IntN(len(special))]
			case 1:
				xs[k] = float64(rng.IntN(5)) // ties
			case 2:
				xs[k] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			default:
				xs[k] = -rng.ExpFloat64()
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		var ranks []int
		if n <= 40 {
			for k := range n {
				ranks = append(ranks, k)
			}
		} else {
			ranks = []int{0, n - 1, n / 10, min(n-1, int(0.9*float64(n))), rng.IntN(n), rng.IntN(n)}
		}
		passes := 0
		got := orderStats(func(yield func(float64)) {
			passes++
			for _, v := range xs {
				yield(v)
			}
		}, ranks)
		if passes != 64/digitBits {
			t.Fatalf("%d passes, want %d", passes, 64/digitBits)
		}
		for k, r := range ranks {
			if w := sorted[r]; got[k] != w && !(math.IsNaN(got[k]) && math.IsNaN(w)) {
				t.Fatalf("trial %d (n=%d): place %d holds %v, a sort puts %v there", trial, n, r, got[k], w)
			}
		}
	}
}

// The spread of a set read in passes is the one read from the set held
// in full: count, sum in order, the ends and the oscillation (p90 − p10)
// ÷ mean, with the deciles at min(n−1, ⌊q·n⌋) as before.
func TestValueSpreadOf(t *testing.T) {
	xs := []float64{12, 3, 7, 7, 20, 1, 9, 15, 4, 8, 11}
	s := valueSpreadOf(func(yield func(float64)) {
		for _, v := range xs {
			yield(v)
		}
	})
	// sorted: 1 3 4 7 7 8 9 11 12 15 20; p10 at ⌊1.1⌋ = 1: 3; p90 at ⌊9.9⌋ = 9: 15.
	if s.n != 11 || s.sum != 97 || s.min != 1 || s.max != 20 || s.p10 != 3 || s.p90 != 15 {
		t.Fatalf("%+v", s)
	}
	if want := 12 / (97.0 / 11); s.oscillation() != want {
		t.Fatalf("oscillation %v, want %v", s.oscillation(), want)
	}
	if empty := valueSpreadOf(func(func(float64)) {}); empty.n != 0 {
		t.Fatalf("%+v from no numbers", empty)
	}
	// Past sortAtMost numbers the passes answer what the sort answered.
	rng := rand.New(rand.NewPCG(8, 9))
	many := make([]float64, sortAtMost+1)
	for k := range many {
		many[k] = math.Round(rng.ExpFloat64()*100) / 4
	}
	big := valueSpreadOf(func(yield func(float64)) {
		for _, v := range many {
			yield(v)
		}
	})
	sorted := slices.Clone(many)
	slices.Sort(sorted)
	n := len(many)
	if big.min != sorted[0] || big.max != sorted[n-1] || big.p10 != sorted[n/10] || big.p90 != sorted[int(0.9*float64(n))] {
		t.Fatalf("%+v, want the ends %v %v and deciles %v %v", big, sorted[0], sorted[n-1], sorted[n/10], sorted[int(0.9*float64(n))])
	}
}
