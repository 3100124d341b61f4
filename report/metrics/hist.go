package metrics

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// maxRecordable is the longest duration histograms hold (longer values are
// recorded as this): about 11.6 days.
const maxRecordable = int64(1e15)

// hist is a latency histogram in nanoseconds (1 ns to maxRecordable, three
// significant digits) with a running sum for the exact mean. It keeps its
// counts in HdrHistogram's own layout, and reads them as HdrHistogram
// reads that layout (the tests hold every reading to the library's): a
// record is then an index and an increment, where HdrHistogram's
// RecordValue checks its arguments and its total every time, and a
// reading walks the counts once, where making the HdrHistogram copies
// them all.
type hist struct {
	counts []int64 // by histIndex
	sum    float64
}

// The layout of an HdrHistogram of 1 ns to maxRecordable at three
// significant digits: 2,048 sub-buckets (single-unit resolution up to
// 2 × 10³), each bucket after the first covering twice the values of the
// one before; histLen counts cover maxRecordable.
const (
	histSubHalfMagnitude = 10 // log2 of half the sub-buckets
	histSubMask          = 1<<(histSubHalfMagnitude+1) - 1
	histLen              = 41 << histSubHalfMagnitude
)

// histIndex is the index of v (0 ≤ v ≤ maxRecordable) in an HdrHistogram's
// counts: its bucket (the power of two above the sub-buckets' range)
// and its sub-bucket in it.
func histIndex(v int64) int {
	bucket := bits.Len64(uint64(v)|histSubMask) - (histSubHalfMagnitude + 1)
	return bucket<<histSubHalfMagnitude + int(v>>uint(bucket))
}

func newHist() *hist { return &hist{counts: make([]int64, histLen)} }

func (h *hist) add(d time.Duration) {
	v := int64(d)
	if uint64(v) > uint64(maxRecordable) { // rare: one comparison for both bounds
		v = min(max(v, 0), maxRecordable)
	}
	h.sum += float64(d)
	h.counts[histIndex(v)]++
}

// addZero is add(0): the sum is unchanged (it is never −0), so only the
// count of zeros moves.
func (h *hist) addZero() { h.counts[0]++ }

// merged returns a histogram of the values of h and o together.
func (h *hist) merged(o *hist) *hist {
	m := &hist{counts: slices.Clone(h.counts), sum: h.sum + o.sum}
	for i, c := range o.counts {
		m.counts[i] += c
	}
	return m
}

// highestAt is the highest value that counts at index i of an
// HdrHistogram's counts whose sub-buckets are 2·2^subHalf and whose unit
// is 2^unit: HdrHistogram's highest equivalent value for the values
// there.
func highestAt(i, subHalf, unit int) int64 {
	bucket, subBucket := 0, i
	if i >= 2<<subHalf { // past the first bucket, whose sub-buckets start at 0
		bucket = i>>subHalf - 1
		subBucket = i - bucket<<subHalf
	}
	return int64(subBucket+1)<<uint(bucket+unit) - 1
}

// buckets re-bins the histogram into tenth-of-a-decade bins from 1 µs,
// each holding the values whose index's highest value (HdrHistogram's
// highest equivalent value) falls in it, zero in a bin of its own. It
// reads the non-zero counts alone: HdrHistogram's Distribution makes a
// bar for every index up to the greatest value (tens of thousands, a
// megabyte, for each limiter of every run, many runs to a sweep).
func (h *hist) buckets() []Bucket {
	out := []Bucket{} // an empty histogram has no bucket: [] in JSON, not null
	last := 0         // the bin of out's last bucket
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		bin := -1 // tenths of a decade above 1 µs; -1 for zero
		if seconds := float64(histHighest(i)) / 1e9; seconds > 0 {
			bin = max(0, int(math.Ceil(10*math.Log10(seconds/1e-6)-1e-9)))
		}
		if len(out) > 0 && bin == last { // indices in order: a bin's values are together
			out[len(out)-1].Count += c
			continue
		}
		upper := 0.0
		if bin >= 0 {
			upper = 1e-6 * math.Pow(10, float64(bin)/10)
		}
		out, last = append(out, Bucket{LE: upper, Count: c}), bin
	}
	return out
}

// histHighest is the highest value that counts at index i of a hist: what
// HdrHistogram's highest equivalent value is for the values there.
func histHighest(i int) int64 { return highestAt(i, histSubHalfMagnitude, 0) }

// dist summarises h in seconds: the count, the mean of the exact sum, and
// HdrHistogram's p50, p90, p99 and Max of the same values (the highest
// value of the index where the cumulative count first reaches the
// quantile's rank, as ValueAtQuantile finds it), read from h's own counts
// in one pass. Making the HdrHistogram to ask it (Import copies every
// count into a new 336 kB array) took a fifth of a short run, and a sweep
// is many short runs.
func (h *hist) dist() Dist {
	var n int64
	for _, c := range h.counts {
		n += c
	}
	if n == 0 {
		return Dist{}
	}
	quantiles := [...]float64{50, 90, 99}
	var ranks, values [len(quantiles)]int64
	for k, q := range quantiles {
		ranks[k] = percentileRank(q, n)
	}
	var cumulative int64
	k := 0
	for i, c := range h.counts {
		if c == 0 { // a rank is at least 1: an empty index never reaches it first
			continue
		}
		cumulative += c
		for ; k < len(quantiles) && cumulative >= ranks[k]; k++ {
			values[k] = histHighest(i)
		}
		if k == len(quantiles) {
			break
		}
	}
	seconds := func(v int64) float64 { return float64(v) / 1e9 }
	return Dist{Count: n, Mean: h.sum / float64(n) / 1e9, P50: seconds(values[0]), P90: seconds(values[1]), P99: seconds(values[2]), Max: seconds(h.max())}
}

// percentileRank is the rank, in [1, total], of the value HdrHistogram's
// ValueAtQuantile(q) answers among total values (q in (0, 100]).
func percentileRank(q float64, total int64) int64 {
	rank := q/100*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// max is the highest value at the last index holding a count (0 with
// none): HdrHistogram's Max of the same values.
func (h *hist) max() int64 {
	for i := len(h.counts) - 1; i > 0; i-- {
		if h.counts[i] != 0 {
			return histHighest(i)
		}
	}
	return 0
}
