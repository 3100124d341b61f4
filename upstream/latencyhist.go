package upstream

import "math"

// latencyHist counts latencies in whole microseconds as Envoy's
// circllhist does: in bins of two significant digits (10 µs wide from
// 100 µs, 100 µs wide from 1 ms, 1 ms wide from 10 ms, …), whatever the
// number of samples, so it holds a fixed few kilobytes.
type latencyHist struct {
	zero  int64                  // samples of 0 µs
	bins  [histDecades][90]int64 // [decade][leading two digits − 10]
	count int64
}

// histDecades covers latencies up to 10¹⁹ µs: every int64.
const histDecades = 19

// binOf returns the bin of v > 0 µs: its decade d (v has d + 1 digits)
// and its leading two digits, 10 to 99 (a single digit reads as v × 10,
// in a bin 0.1 µs wide).
func binOf(v int64) (decade int, lead int64) {
	if v < 10 {
		return 0, v * 10
	}
	scale := int64(1)
	for v/scale >= 100 {
		scale *= 10
		decade++
	}
	return decade + 1, v / scale
}

// binLeft returns the left edge and width of a bin, in µs.
func binLeft(decade int, lead int64) (left, width float64) {
	width = math.Pow10(decade - 1)
	return float64(lead) * width, width
}

// add counts a latency of v µs.
func (h *latencyHist) add(v int64) {
	h.count++
	if v <= 0 {
		h.zero++
		return
	}
	d, lead := binOf(v)
	h.bins[d][lead-10]++
}

// clear drops every sample.
func (h *latencyHist) clear() {
	if h.count > 0 {
		*h = latencyHist{}
	}
}

// take returns the q-quantile (0 ≤ q ≤ 1) of the samples, in whole µs
// (truncated), and drops them. As circllhist's hist_approx_quantile
// reads it, the rank q × n falls in a bin, between the samples below it
// and those up to its end, and the value is interpolated linearly across
// the bin's width: a rank at the bin's start reads its left edge, at its
// end its right edge. At least one sample is needed.
func (h *latencyHist) take(q float64) int64 {
	defer h.clear()
	target := q * float64(h.count)
	var lower, upper, left, width float64
	started := false
	// step moves to the next bin holding c samples unless the rank is
	// already reached; it reports whether to go on.
	step := func(c int64, binLeft, binWidth float64) bool {
		if c == 0 {
			return true
		}
		if started && upper >= target {
			return false
		}
		lower, upper, left, width, started = upper, upper+float64(c), binLeft, binWidth, true
		return true
	}
	if step(h.zero, 0, 0) {
	walk:
		for d := range h.bins {
			for i, c := range h.bins[d] {
				l, w := binLeft(d, int64(i)+10)
				if !step(c, l, w) {
					break walk
				}
			}
		}
	}
	switch {
	case lower == target:
		return int64(left)
	case upper == target:
		return int64(left + width)
	case width == 0:
		return int64(left)
	}
	return int64(left + (target-lower)/(upper-lower)*width)
}
