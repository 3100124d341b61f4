package report

import (
	"fmt"
	"image/color"
	"math"

	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// waitHistTitle titles a limiter's wait histogram. Its count is every
// steady-state wait that ended (or was cut off by an early stop), not the
// grants alone: when the two differ the title splits it, so that it reads
// beside the limiter's acquired count.
func waitHistTitle(r *metrics.Results, l metrics.LimiterStats, zero, total int64) string {
	t := fmt.Sprintf("Wait in %s: %.0f%% of %s steady-state acquisitions waited", l.Name, 100*(1-metrics.Ratio(float64(zero), float64(total))), Grouped(total))
	granted := l.WaitGrantedS.Count
	if other := total - granted; other > 0 {
		// Given up at the acquisition timeout or the request's deadline: more
		// than the limiter's timeouts alone, which count the first.
		rest := "given up (acquisition timeout or request deadline)"
		switch {
		case !r.Complete && l.Timeouts == 0:
			rest = "still waiting when the run stopped"
		case !r.Complete:
			rest = "given up or still waiting when the run stopped"
		}
		t += fmt.Sprintf(" (%s granted, %s %s)", Grouped(granted), Grouped(other), rest)
	}
	return t
}

func waitHistogram(r *metrics.Results, l metrics.LimiterStats) (*plot.Plot, string) {
	var zero, total int64
	var bars []metrics.Bucket
	for _, b := range l.WaitHist {
		total += b.Count
		if b.LE == 0 {
			zero += b.Count
		} else {
			bars = append(bars, b)
		}
	}
	if len(bars) == 0 {
		return nil, "no acquisition of " + l.Name + " waited in the steady state"
	}
	p := newPlot(waitHistTitle(r, l, zero, total), "wait (s, log scale)", "acquisitions")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	hs := make(plotter.XYs, 0, len(bars))
	for _, b := range bars {
		hs = append(hs, plotter.XY{X: b.LE, Y: float64(b.Count)})
	}
	h := &logBars{pts: hs, fill: colour(limiterHue(r, l.Name))}
	p.Add(h)
	_, _, _, top := h.DataRange()
	p.Y.Min, p.Y.Max = 0, top
	addMarkers(p, r, l, top)
	return p, ""
}

// addMarkers marks a limiter's p50 and p99 wait and the alert line on a
// chart of its waits: lines up to top, the top of the data, and their
// labels each in a row of its own above it.
func addMarkers(p *plot.Plot, r *metrics.Results, l metrics.LimiterStats, top float64) {
	row := 0
	mark := func(x float64, label string, c color.Color, dashed bool) {
		if x <= 0 {
			return
		}
		st := draw.LineStyle{Color: c, Width: 1.5}
		if dashed {
			st.Dashes = []vg.Length{5, 3}
		}
		p.Add(vline{x: x, label: label, style: st, row: row, top: top})
		row++
	}
	defer func() { legendRoom(p, row) }()
	mark(l.WaitS.P50, "p50 "+secs(l.WaitS.P50), colour(2), false)
	mark(l.WaitS.P99, "p99 "+secs(l.WaitS.P99), colour(5), false)
	if a := alertWait(r); a > 0 {
		mark(a, "alert "+secs(a), color.RGBA{200, 0, 0, 255}, true)
	}
}

func waitCDF(r *metrics.Results, l metrics.LimiterStats) (*plot.Plot, string) {
	xs, ys := waitCDFPoints(l)
	if len(xs) == 0 {
		return nil, "no acquisition of " + l.Name + " waited in the steady state"
	}
	p := newPlot("Wait in "+l.Name+": cumulative share", "wait (s, log scale)", "share of acquisitions waiting at most x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = cappedTicks{max: 1} // above 1 is room for the labels
	line(p, xs, ys, "", limiterHue(r, l.Name), false)
	addMarkers(p, r, l, 1)
	return p, ""
}

// binWidth is the ratio of a wait histogram bin's upper edge to its
// lower one: bins are a tenth of a decade wide (metrics.Bucket).
var binWidth = math.Pow(10, 0.1)

// waitCDFPoints is a limiter's wait CDF drawn from its histogram at the
// bins' true edges: from the lower edge of the first bin with a wait (at
// the share that did not wait) to each bin's upper edge (at the share that
// waited at most that), the last edge cut to the longest wait seen, so
// that waits of 1.0003 s in the bin up to 1.26 s do not read as waits up
// to 1.26 s. Between two edges the line is what the bins cannot resolve.
// No points: nothing waited.
func waitCDFPoints(l metrics.LimiterStats) (xs, ys []float64) {
	var total, zero int64
	for _, b := range l.WaitHist {
		total += b.Count
		if b.LE == 0 {
			zero += b.Count
		}
	}
	if zero == total {
		return nil, nil
	}
	cum := zero
	for _, b := range l.WaitHist {
		if b.LE == 0 {
			continue
		}
		lower := b.LE / binWidth
		if len(xs) == 0 {
			xs, ys = append(xs, lower), append(ys, float64(zero)/float64(total))
		}
		cum += b.Count
		upper := b.LE
		if longest := l.WaitS.Max; longest > 0 && longest < upper {
			upper = math.Max(longest, lower*(1+1e-9))
		}
		xs, ys = append(xs, upper), append(ys, float64(cum)/float64(total))
	}
	return xs, ys
}
