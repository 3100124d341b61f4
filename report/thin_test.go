package report

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// Thinning keeps what a reader looks for in a long series: a one-interval
// spike still reaches its height (the band's top), a gap of intervals with
// no data stays a gap, and each column's line is the mean of its points.
func TestThinKeepsSpikesGapsAndMeans(t *testing.T) {
	n := 100_000
	xs, ys := make([]float64, n), make([]float64, n)
	for k := range xs {
		xs[k], ys[k] = float64(k), 10
	}
	ys[54_321] = 5000 // one interval's burst
	ys[54_322] = -3   // and a dip beside it
	for k := 90_000; k < 91_000; k++ {
		ys[k] = math.NaN() // intervals with no attempts
	}
	cx, mean, lo, hi := thin(xs, ys, 600)
	if len(cx) > 600 || len(cx) < 500 {
		t.Fatalf("%d columns, want at most 600 and close to it", len(cx))
	}
	peak, dip := math.Inf(-1), math.Inf(1)
	gaps := 0
	for k := range cx {
		if math.IsNaN(mean[k]) {
			gaps++
			if !math.IsNaN(lo[k]) || !math.IsNaN(hi[k]) {
				t.Fatalf("column %d: a gap in the line but not in the band", k)
			}
			continue
		}
		peak, dip = math.Max(peak, hi[k]), math.Min(dip, lo[k])
		if lo[k] > mean[k] || mean[k] > hi[k] {
			t.Fatalf("column %d: mean %v outside [%v, %v]", k, mean[k], lo[k], hi[k])
		}
	}
	if peak != 5000 || dip != -3 {
		t.Fatalf("band spans [%v, %v], want the spike 5000 and the dip -3", dip, peak)
	}
	if gaps < 4 { // 1,000 missing intervals at 167 per column: at least 4 whole columns
		t.Fatalf("%d gap columns, want the 1,000-interval gap kept", gaps)
	}
	// The column holding the spike averages it with its neighbours.
	per := (n + 599) / 600
	k := 54_321 / per
	want := (float64(per-2)*10 + 5000 - 3) / float64(per)
	if math.Abs(mean[k]-want) > 1e-9 || math.Abs(cx[k]-float64(k*per)-float64(per-1)/2) > 1e-9 {
		t.Fatalf("spike column: mean %v at x %v, want %v at %v", mean[k], cx[k], want, float64(k*per)+float64(per-1)/2)
	}
}

// A chart of a long series draws a bounded number of vertices, and a short
// one is drawn point for point.
func TestLineThinsOnlyLongSeries(t *testing.T) {
	for _, n := range []int{thinAbove, 50_000} {
		xs, ys := make([]float64, n), make([]float64, n)
		for k := range xs {
			xs[k], ys[k] = float64(k), float64(k%7)
		}
		parts, _, err := lineParts(xs, series{ys: ys}, 0)
		if err != nil {
			t.Fatal(err)
		}
		vertices, bands := 0, 0
		for _, pl := range parts {
			switch v := pl.(type) {
			case *plotter.Line:
				vertices += len(v.XYs)
			case rangeBand:
				bands++
			}
		}
		switch {
		case n <= thinAbove && (vertices != n || bands != 0):
			t.Fatalf("n=%d: %d vertices and %d bands, want every point and no band", n, vertices, bands)
		case n > thinAbove && (vertices > thinColumns || bands != 1):
			t.Fatalf("n=%d: %d vertices and %d bands, want at most %d and one band", n, vertices, bands, thinColumns)
		}
	}
}

// A series drawn exactly over an earlier one stays visible: dashed, and its
// legend names the series it coincides with; a series that differs by more
// than half a percent of the axis is left alone.
func TestUnhideMarksCoincidingSeries(t *testing.T) {
	pinned := []float64{94, 100, 100, 100}
	got := unhide([]series{{name: "db", ys: pinned, dashed: false}, {name: "cache", ys: []float64{94, 100, 100, 100.2}, dashed: false}, {name: "conns", ys: []float64{10, 12, 11, 10}, dashed: false}}, 115)
	if got[1].name != "cache (same as db)" || !got[1].dashed {
		t.Fatalf("coinciding series: %+v", got[1])
	}
	if got[0].dashed || got[2].dashed || got[2].name != "conns" {
		t.Fatalf("distinct series changed: %+v %+v", got[0], got[2])
	}
	if got := unhide([]series{{name: "a", ys: []float64{50, 50}, dashed: false}, {name: "b", ys: []float64{50, 51}, dashed: false}}, 115); got[1].dashed {
		t.Fatal("series 0.9% of the axis apart marked as coinciding")
	}
}
