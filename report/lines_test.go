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

// What a chart decides from whole lines is decided alike when they are
// read thinned: a line's peak counts every row (the one after the drawn
// ones and an infinity included), and two lines are "the same" only when
// no row sets them further apart than the tolerance and their gaps fall
// in the same rows, however their columns' means and bands agree. It
// catches peaks taken from the bands, and lines called the same from
// their thinned shapes.
func TestThinnedLinesKeepWholeColumnDecisions(t *testing.T) {
	const n = 5000
	s := metrics.NewSeries([]string{"t_s", "a", "b", "c", "d"})
	for i := range n {
		a := float64(i % 10)
		b, c, d := a, a, a
		switch i {
		case 2500, 2501: // rows 0 and 1 swapped, in one column (2493-2501): the same mean, least and most
			b = float64(2501 - i)
		}
		if i == 4000 {
			c = math.NaN() // a gap where the others have a value
		}
		if i == n-1 {
			d = 1e6 // only in the last row, which the run ended inside
		}
		s.Append([]float64{float64(i + 1), a, b, c, d})
	}
	r := &metrics.Results{IntervalS: 1, ElapsedS: n - 0.5}
	lines := readLines(r, s, plain("a"), plain("b"), plain("c"), plain("d"))
	if lines.lo == nil {
		t.Fatal("not thinned")
	}
	a, b, c, d := lines.line(0, "a", false), lines.line(1, "b", false), lines.line(2, "c", false), lines.line(3, "d", false)
	if a.peak() != 9 || d.peak() != 1e6 {
		t.Fatalf("peaks %v and %v, want 9 and the last row's 1e6", a.peak(), d.peak())
	}
	for _, o := range []series{b, c, d} {
		if a.coincides(o, 0.5) {
			t.Errorf("%s called the same as a within 0.5", o.name)
		}
	}
	if k := 2500 / ((n - 1 + thinColumns - 1) / thinColumns); b.ys[k] != a.ys[k] || b.lo[k] != a.lo[k] || b.hi[k] != a.hi[k] {
		t.Fatalf("column %d: b's mean and band differ from a's", k)
	}
	if !a.coincides(b, 1) || a.coincides(c, 1e9) {
		t.Errorf("b within 1 of a: %v (want true); c with a gap of its own: %v (want false)", a.coincides(b, 1), a.coincides(c, 1e9))
	}
	got := unhide([]series{a, b, d}, 115)
	if got[1].dashed || got[2].dashed {
		t.Fatalf("legends %q, %q: lines apart in some rows marked as the same", got[1].name, got[2].name)
	}
}
