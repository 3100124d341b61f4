package arrivalfit

import (
	"math/rand/v2"
	"slices"
	"time"
)

// SpreadTies spreads the instants times (in order, as offsets from the
// Unix instant origin) that share an epoch-aligned window of width,
// uniformly and in order within it, drawing from rng: times logged to
// the second are so many ties at each second, which Judge would take for
// bursts. A window's instants may move before the first logged one.
func SpreadTies(times []time.Duration, origin int64, width time.Duration, rng *rand.Rand) {
	window := func(off time.Duration) time.Duration {
		return time.Duration(floorDiv(origin+int64(off), int64(width))*int64(width) - origin)
	}
	for i := 0; i < len(times); {
		base := window(times[i])
		j := i
		for j < len(times) && window(times[j]) == base {
			j++
		}
		group := times[i:j]
		for k := range group {
			group[k] = base + time.Duration(rng.Int64N(int64(width)))
		}
		slices.Sort(group)
		i = j
	}
}

// floorDiv is a / b rounded toward minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
