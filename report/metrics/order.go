package metrics

import (
	"math"
	"slices"
)

// A values is a pass over a set of numbers: each call yields the same
// numbers in the same order (rows of a series read again).
type values func(yield func(v float64))

// valueSpread is what a run's figures need of a set of numbers: how many, their
// sum in the order given, and the order statistics a sort would give at
// the first and last place and at 10% and 90% (see oscillation).
type valueSpread struct {
	n        int
	sum      float64
	min, max float64
	p10, p90 float64
}

// valueSpreadOf returns the valueSpread of the numbers of pass. Up to
// sortAtMost numbers are held and sorted; beyond, they are never held, and
// four more passes find the order statistics (see orderStats): bounded
// memory, however many there are.
func valueSpreadOf(pass values) valueSpread {
	var s valueSpread
	pass(func(v float64) {
		s.n++
		s.sum += v
	})
	if s.n == 0 {
		return s
	}
	at := func(q float64) int { return min(s.n-1, int(q*float64(s.n))) }
	ranks := []int{0, s.n - 1, at(0.1), at(0.9)}
	var got []float64
	if s.n <= sortAtMost {
		all := make([]float64, 0, s.n)
		pass(func(v float64) { all = append(all, v) })
		slices.Sort(all)
		for _, r := range ranks {
			got = append(got, all[r])
		}
	} else {
		got = orderStats(pass, ranks)
	}
	s.min, s.max, s.p10, s.p90 = got[0], got[1], got[2], got[3]
	return s
}

// oscillation is (p90 − p10) ÷ mean: the width of a sawtooth relative to
// its level.
func (s valueSpread) oscillation() float64 { return Ratio(s.p90-s.p10, s.sum/float64(s.n)) }

// sortAtMost is how many numbers valueSpreadOf sorts in memory (half a
// megabyte) rather than reading them again four times.
const sortAtMost = 1 << 16

// digitBits is how many bits of a number's key orderStats settles a pass.
const digitBits = 16

// orderStats returns the numbers of pass that a sort (slices.Sort: NaN
// first) would put at places ranks (each in [0, n)), exactly: each pass
// counts the numbers that share the key prefix found so far by their next
// digitBits bits, and the count finds the next digit of each rank's key.
// Four passes settle the 64 bits.
func orderStats(pass values, ranks []int) []float64 {
	prefix := make([]uint64, len(ranks))
	left := append([]int(nil), ranks...) // each rank's place among the numbers sharing its prefix
	counts := make([][]int, len(ranks))
	for k := range counts {
		counts[k] = make([]int, 1<<digitBits)
	}
	for shift := 64 - digitBits; shift >= 0; shift -= digitBits {
		for k := range counts {
			clear(counts[k])
		}
		high := shift + digitBits // the bits settled so far are those at and above high
		pass(func(v float64) {
			key := orderKey(v)
			for k := range prefix {
				if high == 64 || key>>high == prefix[k]>>high {
					counts[k][key>>shift&(1<<digitBits-1)]++
				}
			}
		})
		for k := range prefix {
			d := 0
			for ; d < len(counts[k])-1 && left[k] >= counts[k][d]; d++ { // the bound holds only if a pass changed its numbers
				left[k] -= counts[k][d]
			}
			prefix[k] |= uint64(d) << shift
		}
	}
	out := make([]float64, len(ranks))
	for k, key := range prefix {
		out[k] = fromOrderKey(key)
	}
	return out
}

// orderKey maps a number to a key whose unsigned order is the numbers'
// order, NaN first.
func orderKey(v float64) uint64 {
	if math.IsNaN(v) {
		return 0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// fromOrderKey inverts orderKey (0 is NaN).
func fromOrderKey(k uint64) float64 {
	switch {
	case k == 0:
		return math.NaN()
	case k>>63 != 0:
		return math.Float64frombits(k &^ (1 << 63))
	default:
		return math.Float64frombits(^k)
	}
}
