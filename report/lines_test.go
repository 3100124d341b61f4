package report

import (
	"math"
	"slices"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// longSeries is a series of n one-second rows (t_s, a count with a spike
// and a gap of NaN, and a second count), the last ending half an interval
// after the run: partial, so never drawn.
func longSeries(n int) (*metrics.Results, *metrics.Series) {
	s := metrics.NewSeries([]string{"t_s", "a", "b"})
	for i := range n {
		a, b := float64(i%7), float64(i%3)
		if i == n/3 {
			a = 5000
		}
		if i > n/2 && i < n/2+40 {
			a = math.NaN()
		}
		s.Append([]float64{float64(i + 1), a, b})
	}
	return &metrics.Results{IntervalS: 1, ElapsedS: float64(n) - 0.5}, s
}

// A long series read for a chart gives exactly what thinning its whole
// columns gives (x, means and bands: a spike keeps its height, a gap stays
// a gap), for a plain column and one derived from two; the partial last
// interval is left out. It catches a column boundary off by one, a
// column's x averaged over the wrong count, and the cut row drawn.
func TestReadLinesThinsAsThinDoes(t *testing.T) {
	for _, n := range []int{thinAbove + 2, 7_777, 50_000} { // n−1 drawn: more than thinAbove
		r, s := longSeries(n)
		ratio := column{[]string{"b", "a"}, func(v []float64) float64 { return v[0] / v[1] }}
		got := readLines(r, s, plain("a"), ratio, plain("missing"))
		xs, as, bs := s.Column("t_s")[:n-1], s.Column("a")[:n-1], s.Column("b")[:n-1]
		for k := range xs {
			xs[k]--
		}
		rs := make([]float64, len(as))
		for k := range as {
			rs[k] = bs[k] / as[k]
		}
		for line, ys := range [][]float64{as, rs} {
			cx, mean, lo, hi := thin(xs, ys, thinColumns)
			same := func(a, b []float64) bool {
				return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
			}
			if !same(got.x, cx) || !same(got.ys[line], mean) || !same(got.lo[line], lo) || !same(got.hi[line], hi) {
				t.Fatalf("n=%d, line %d: the chart's columns differ from thinning the whole column", n, line)
			}
		}
		if got.ys[2] != nil || got.lo[2] != nil {
			t.Fatalf("n=%d: a line of a missing column has points", n)
		}
		top := 0.0
		for _, v := range got.hi[0] {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
		if top != 5000 {
			t.Fatalf("n=%d: the band's top is %v, want the spike's 5000", n, top)
		}
	}
}

// A short series is read point for point: x the drawn intervals' starts,
// each line a value for every row (the partial last one included, as a
// whole column has), no band.
func TestReadLinesShortIsEveryPoint(t *testing.T) {
	r, s := longSeries(thinAbove + 1)
	r.ElapsedS = float64(thinAbove) // the last row ends 1 s after the run: cut
	got := readLines(r, s, plain("a"))
	if len(got.x) != thinAbove || got.x[0] != 0 || got.x[thinAbove-1] != thinAbove-1 || got.lo != nil {
		t.Fatalf("%d points from %v to %v, band %v: want %d from 0", len(got.x), got.x[0], got.x[len(got.x)-1], got.lo != nil, thinAbove)
	}
	if len(got.ys[0]) != thinAbove+1 || got.ys[0][thinAbove/3] != 5000 {
		t.Fatalf("%d values, spike %v", len(got.ys[0]), got.ys[0][thinAbove/3])
	}
	r.ElapsedS = float64(thinAbove + 1) // the last row is whole: drawn
	if n := drawnRows(r, s); n != thinAbove+1 {
		t.Fatalf("%d rows drawn of a run that ended with its last interval, want all %d", n, thinAbove+1)
	}
}
