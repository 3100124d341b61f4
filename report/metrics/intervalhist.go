package metrics

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// The layout of an interval's distribution: an HdrHistogram's of 1 µs to
// 10¹³ ns at two significant digits. Its unit is 2⁹ ns (values under 512 ns
// count as zero); its 256 sub-buckets give single-unit resolution up to
// 2¹⁷ ns, and each bucket after the first covers twice the values of the
// one before; intervalLen counts cover intervalMaxValue.
const (
	intervalUnitMagnitude    = 9
	intervalSubHalfMagnitude = 7 // log2 of half the sub-buckets
	intervalSubMask          = (1<<(intervalSubHalfMagnitude+1) - 1) << intervalUnitMagnitude
	intervalMaxValue         = int64(1e13)
	intervalLen              = 29 << intervalSubHalfMagnitude
)

// intervalIndex is the index of v (0 ≤ v ≤ intervalMaxValue) in the
// counts of an HdrHistogram of the interval layout.
func intervalIndex(v int64) int {
	bucket := bits.Len64(uint64(v)|intervalSubMask) - (intervalUnitMagnitude + intervalSubHalfMagnitude + 1)
	return bucket<<intervalSubHalfMagnitude + int(v>>uint(bucket+intervalUnitMagnitude))
}

// intervalHighest is the highest value that counts at index i: what
// HdrHistogram's ValueAtQuantile answers for a quantile that falls there.
func intervalHighest(i int) int64 {
	return highestAt(i, intervalSubHalfMagnitude, intervalUnitMagnitude)
}

// intervalHist is a distribution kept for one interval: percentiles to two
// significant digits from 1 µs to about 3 hours (30 KB), cleared at every
// tick, so timeseries.csv can say how waits and latencies moved. It
// counts in an HdrHistogram's layout (intervalIndex) and reads its
// percentiles as HdrHistogram does, in one pass over the counts up to the
// highest one in use, which is all it clears.
type intervalHist struct {
	counts []int64
	// max is the interval's greatest value: no percentile lies above it.
	// (None lies below the least either: a percentile is the highest value
	// of an index where some value was counted.)
	max int64
	n   int64
}

func newIntervalHist() *intervalHist { return &intervalHist{counts: make([]int64, intervalLen)} }

// add records d, unless the interval percentiles are dropped (h is nil):
// a check small enough to be made where it is called.
func (h *intervalHist) add(d time.Duration) {
	if h != nil {
		h.record(d)
	}
}

func (h *intervalHist) record(d time.Duration) {
	v := int64(d)
	if uint64(v) > uint64(intervalMaxValue) { // rare: one comparison for both bounds
		v = min(max(v, 0), intervalMaxValue)
	}
	h.n++
	h.max = max(h.max, v)
	h.counts[intervalIndex(v)]++
}

// take returns the interval's p50, p95 and p99 in seconds (NaN when it
// holds nothing) and clears it.
func (h *intervalHist) take() (p50, p95, p99 float64) {
	if h == nil || h.n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	// The rank r of each percentile among the n values, as HdrHistogram
	// takes it (percentileRank). Its value is the highest of the first
	// index at which the counts reach r: the last one, from the top down,
	// below which fewer than r are counted. The percentiles lie in the
	// upper part, so the scan starts at the top.
	var ranks, values [3]int64
	for k, p := range [3]float64{50, 95, 99} {
		ranks[k] = percentileRank(p, h.n)
	}
	top := intervalIndex(h.max)
	var above int64 // counted at and above i
	k := len(ranks) - 1
	for i := top; k >= 0; i-- {
		above += h.counts[i]
		for k >= 0 && above > h.n-ranks[k] {
			values[k] = intervalHighest(i)
			k--
		}
	}
	clear(h.counts[:top+1])
	// Values under the 1 µs resolution are kept as zero; others are
	// written to three significant digits, the histogram's resolution
	// (its buckets' upper ends would print as 0.501219327 for 0.5).
	seconds := func(v int64) float64 {
		v = min(v, h.max)
		if v < 1000 {
			return 0
		}
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v)/1e9, 'g', 3, 64), 64)
		return rounded
	}
	p50, p95, p99 = seconds(values[0]), seconds(values[1]), seconds(values[2])
	h.n, h.max = 0, 0
	return p50, p95, p99
}
