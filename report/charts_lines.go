package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// rateLines are the throughput chart's reference lines: each rate or
// window limiter's configured rate (over its objects) and the upstreams'
// quotas together, in requests per second; a limiter that counts cost
// (tokens, points) is not on a chart of requests.
func rateLines(r *metrics.Results) []hline {
	grey := draw.LineStyle{Color: color.Gray{Y: 90}, Width: 1.2, Dashes: []vg.Length{3, 3}}
	var out []hline
	for _, l := range r.Limiters {
		if l.Family == kindname.ConcurrencyFamily || l.Capacity <= 0 || l.Unit != "" {
			continue // permits, or cost units per second: not requests per second
		}
		objects := limiterObjects(r, l)
		out = append(out, hline{y: l.Capacity * objects, label: fmt.Sprintf("limit %s %s/s", l.Name, human(l.Capacity*objects, 3)), style: grey})
	}
	// What the quotas admit together, a shared quota counted once at the
	// least of its rate and its hosts' (as the diagnoses read it).
	if quota, known := quotaRPS(r); known && quota > 0 {
		red := draw.LineStyle{Color: color.NRGBA{R: 190, G: 40, B: 40, A: 255}, Width: 1.2, Dashes: []vg.Length{6, 3}}
		label := fmt.Sprintf("upstream quota %s/s", human(quota, 3))
		if costQuota(r) {
			label = fmt.Sprintf("upstream quota ≈%s/s (a cost quota at the mean cost)", human(quota, 3))
		}
		out = append(out, hline{y: quota, label: label, style: red})
	}
	return out
}

// costQuota reports whether some host's quota counts cost, so that its
// requests per second are an estimate at the mean cost.
func costQuota(r *metrics.Results) bool {
	for _, q := range r.Quotas {
		if q.Unit == "cost" {
			return true
		}
	}
	for _, u := range r.Upstreams {
		if u.Cost != nil && u.Cost.QuotaPerS > 0 {
			return true
		}
	}
	return false
}

// segments splits the points (xs, ys) at every NaN or infinite y.
func segments(xs, ys []float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for k := range xs {
		if math.IsNaN(ys[k]) || math.IsInf(ys[k], 0) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: xs[k], Y: ys[k]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Long series are drawn thinned: more than thinAbove points become
// thinColumns columns, each drawn as the mean of its points with a band from
// their minimum to their maximum, so that a chart costs the same whatever
// the run's length and a one-interval spike still reaches its height.
const (
	thinAbove   = 1200
	thinColumns = 600
)

// thin groups consecutive points into at most cols columns. Each column's x
// is the mean x of its points and mean, lo and hi are the mean, minimum and
// maximum of their finite ys; a column without a finite y is NaN in all
// three (a gap).
func thin(xs, ys []float64, cols int) (cx, mean, lo, hi []float64) {
	per := (len(xs) + cols - 1) / cols
	var b bin
	for a := 0; a < len(xs); a += per {
		end := min(a+per, len(xs))
		var sx float64
		b.reset()
		for k := a; k < end; k++ {
			sx += xs[k]
			b.add(ys[k])
		}
		cx = append(cx, sx/float64(end-a))
		mean, lo, hi = b.emit(mean, lo, hi)
	}
	return cx, mean, lo, hi
}

// line draws ys against xs in colour i. A NaN (no data: an interval with
// no attempts) breaks the line instead of being bridged, and a lone point
// between gaps is drawn as a dot. A series longer than thinAbove points is
// thinned: the line is each column's mean, over a band from its minimum to
// its maximum.
func line(p *plot.Plot, xs, ys []float64, name string, i int, dashed bool) error {
	return drawLine(p, xs, series{name: name, ys: ys, dashed: dashed}, i)
}

// drawLine draws sr against xs in colour i, as line does; a series read
// thinned (see timeLines) is drawn with its band as it is.
func drawLine(p *plot.Plot, xs []float64, sr series, i int) error {
	name := sr.name
	parts, first, err := lineParts(xs, sr, i)
	if err != nil {
		return err
	}
	p.Add(parts...)
	if name != "" && first != nil {
		p.Legend.Add(name, first)
	}
	return nil
}

// lineParts returns what line draws, and the first line for the legend.
func lineParts(xs []float64, sr series, i int) (parts []plot.Plotter, first *plotter.Line, err error) {
	ys, lo, hi, dashed := sr.ys, sr.lo, sr.hi, sr.dashed
	if lo == nil && len(xs) > thinAbove {
		xs, ys, lo, hi = thin(xs, ys, thinColumns)
	}
	if lo != nil {
		r, g, bl, _ := colour(i).RGBA()
		parts = append(parts, rangeBand{xs: xs, lo: lo, hi: hi, fill: color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 70}})
	}
	for _, seg := range segments(xs, ys) {
		l, err := plotter.NewLine(seg)
		if err != nil {
			return nil, nil, err
		}
		l.Color = colour(i)
		l.Width = 1.8
		if dashed {
			l.Dashes = []vg.Length{6, 3}
		}
		parts = append(parts, l)
		if len(seg) == 1 {
			if s, err := plotter.NewScatter(seg); err == nil {
				s.GlyphStyle.Color, s.GlyphStyle.Radius = colour(i), 2.5
				parts = append(parts, s)
			}
		}
		if first == nil {
			first = l
		}
	}
	return parts, first, nil
}

func warmupBand(r *metrics.Results) band {
	return band{ranges: [][2]float64{{0, r.WarmupS}}, fill: color.NRGBA{R: 160, G: 160, B: 160, A: 60}}
}

// maxOffPhases is the most off phases of an on/off workload a time chart
// shades; beyond it the shading would cover the chart in stripes.
const maxOffPhases = 300

// addTimeBands shades a time chart's warm-up and, for an on/off workload,
// the phases without arrivals (with a legend entry), under the data.
func addTimeBands(p *plot.Plot, r *metrics.Results, s *metrics.Series) {
	p.Add(warmupBand(r))
	if off := r.OnOff.OffPhases(r.ElapsedS, maxOffPhases); len(off) > 0 {
		b := band{ranges: off, fill: color.NRGBA{R: 70, G: 130, B: 220, A: 40}}
		p.Add(b)
		p.Legend.Add("no arrivals (off phase)", b)
	}
	if from, ok := drainStart(r, s); ok {
		b := band{ranges: [][2]float64{{from, r.ElapsedS}}, fill: color.NRGBA{R: 120, G: 120, B: 120, A: 30}}
		p.Add(b)
		p.Legend.Add("drain: arrivals ended", b)
	}
}

// drainStart is where a run's drain begins on its time charts: the end
// of the last interval with an arrival, when a complete interval without
// any is drawn after it (its rates fall as the last requests finish: a
// drop that is the run ending, not a failure).
func drainStart(r *metrics.Results, s *metrics.Series) (float64, bool) {
	end, ok := arrivalsEnd(r, s)
	if !ok || r.OnOff != nil {
		return 0, false
	}
	last := 0.0
	if n := drawnRows(r, s); n > 0 {
		s.ScanNamed(n-1, []string{"t_s"}, func(_ int, t []float64) bool {
			last = t[0]
			return false
		})
	}
	return end, last > end+1e-9
}

// unhide keeps a series drawn exactly over an earlier one visible: it is
// dashed and its legend says which series it coincides with (two limiters
// pinned at 100% together in a deadlock, say). Series coincide when every
// point is within half a percent of span (the axis range) of the other's
// (see coincides).
func unhide(all []series, span float64) []series {
	out := slices.Clone(all)
	for i := range out {
		for j := range i {
			if out[i].coincides(out[j], 0.005*span) {
				out[i].name += " (same as " + all[j].name + ")"
				out[i].dashed = true
				break
			}
		}
	}
	return out
}

func coincide(a, b []float64, tol float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k := range a {
		if math.IsNaN(a[k]) != math.IsNaN(b[k]) || math.Abs(a[k]-b[k]) > tol {
			return false
		}
	}
	return true
}

// series is one named line of a time chart.
type series struct {
	name   string
	ys     []float64
	dashed bool
	hue    int        // its palette index, where a chart draws it by hue
	lo, hi []float64  // the band of a series read thinned (see timeLines); nil otherwise
	from   *timeLines // the lines a series read thinned is line at of
	at     int
}

// peak returns sr's largest value (0 if none), of every row when it was
// read thinned.
func (sr series) peak() float64 {
	if sr.from != nil {
		return sr.from.peaks[sr.at]
	}
	top := 0.0
	for _, y := range sr.ys {
		top = peakOf(top, y)
	}
	return top
}

// coincides reports whether sr and o are drawn one over the other: every
// point within tol of the other's, gaps in the same places (over every
// row, for series read thinned).
func (sr series) coincides(o series, tol float64) bool {
	if sr.from != nil && sr.from == o.from {
		if len(sr.ys) == 0 || len(o.ys) == 0 {
			return false
		}
		k, j := max(sr.at, o.at), min(sr.at, o.at)
		return k != j && sr.from.apart[k][j] <= tol
	}
	return coincide(sr.ys, o.ys, tol)
}
