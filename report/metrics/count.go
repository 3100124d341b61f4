package metrics

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// CountHist is a distribution of whole counts (a request's tokens): a
// DDSketch whose quantiles are within 1% of the true ones and whose memory
// grows with the spread of the counts, never with their number (a
// thousand metered hosts hold a few kilobytes each), with the count, sum
// and maximum kept exactly.
type CountHist struct {
	sketch *ddsketch.DDSketch
	n      int64
	sum    float64
	max    int64
}

// NewCountHist returns an empty CountHist.
func NewCountHist() *CountHist {
	return &CountHist{sketch: ddsketch.NewDDSketch(newSketchMapping(), store.NewBufferedPaginatedStore(), store.NewBufferedPaginatedStore())}
}

// Add records one count (a negative count as zero).
func (c *CountHist) Add(v int64) {
	v = max(v, 0)
	_ = c.sketch.Add(float64(v))
	c.n++
	c.sum += float64(v)
	c.max = max(c.max, v)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the counts, rounded to a
// whole count and never above the largest; 0 when empty.
func (c *CountHist) Quantile(q float64) int64 {
	if c.n == 0 {
		return 0
	}
	v, err := c.sketch.GetValueAtQuantile(q)
	if err != nil {
		return 0
	}
	return min(int64(math.Round(max(v, 0))), c.max)
}

// Dist returns the distribution in the counts' own units.
func (c *CountHist) Dist() Dist {
	if c.n == 0 {
		return Dist{}
	}
	q := func(p float64) float64 { return float64(c.Quantile(p)) }
	return Dist{Count: c.n, Mean: c.sum / float64(c.n), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: float64(c.max)}
}
