package metrics

import "github.com/HdrHistogram/hdrhistogram-go"

// maxCount is the largest count a CountHist records exactly enough; larger
// ones are recorded as it.
const maxCount = int64(1e12)

// CountHist is a distribution of whole counts (a request's tokens) to two
// significant digits, with an exact mean.
type CountHist struct {
	h   *hdrhistogram.Histogram
	sum float64
}

// NewCountHist returns an empty CountHist.
func NewCountHist() *CountHist { return &CountHist{h: hdrhistogram.New(1, maxCount, 2)} }

// Add records one count (counts below 1 are recorded as 1, but their
// real value goes into the mean).
func (c *CountHist) Add(v int64) {
	_ = c.h.RecordValue(min(max(v, 1), maxCount))
	c.sum += float64(v)
}

// Dist returns the distribution in the counts' own units.
func (c *CountHist) Dist() Dist {
	n := c.h.TotalCount()
	if n == 0 {
		return Dist{}
	}
	q := func(p float64) float64 { return float64(c.h.ValueAtQuantile(p)) }
	return Dist{Count: n, Mean: c.sum / float64(n), P50: q(50), P90: q(90), P99: q(99), Max: float64(c.h.Max())}
}
