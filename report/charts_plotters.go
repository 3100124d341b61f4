package report

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// band shades x ranges over the whole height: the warm-up, 429 pauses.
type band struct {
	ranges [][2]float64
	fill   color.Color
	// strip, when set, draws the ranges as a strip that high along the
	// top, row strips down (0 = the top one), instead of full height:
	// episodes that cover most of a run then mark it without washing the
	// chart in their colour.
	strip vg.Length
	row   int
}

// stripH is the height of a pause strip; strips sit stripH*1.3 apart.
const stripH = 6 * vg.Millimeter / 2

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	y0, y1 := c.Min.Y, c.Max.Y
	if b.strip > 0 {
		y1 = c.Max.Y - vg.Length(b.row)*b.strip*1.3
		y0 = y1 - b.strip
	}
	for _, r := range b.ranges {
		x0, x1 := trX(math.Max(r[0], p.X.Min)), trX(math.Min(r[1], p.X.Max))
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(b.fill, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
	}
}

// Thumbnail draws the band's colour in a legend entry.
func (b band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// vline marks an x value, with a label above the data.
type vline struct {
	x     float64
	label string
	style draw.LineStyle
	row   int // label row from the top, so that close markers' labels never overlap
	// top, when not 0, is the y value (data units) the line stops at: the
	// top of the data, so that the line never crosses the labels and the
	// legend in the room above it.
	top float64
}

func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if v.x < p.X.Min || v.x > p.X.Max {
		return
	}
	x := trX(v.x)
	lineTop := c.Max.Y
	if v.top != 0 {
		lineTop = min(c.Max.Y, trY(v.top))
	}
	c.StrokeLine2(v.style, x, c.Min.Y, x, lineTop)
	if v.label == "" {
		return
	}
	sty := text.Style{Color: v.style.Color, Font: sans(10), XAlign: text.XLeft, YAlign: text.YTop, Handler: p.TextHandler}
	below := vg.Length(0) // the labels go under a legend in the top corner
	if h := p.Legend.Rectangle(c).Size().Y; p.Legend.Top && h > 0 {
		below = h + 4
	}
	at := vg.Point{X: x + 3, Y: c.Max.Y - 2 - below - vg.Length(v.row)*sty.Height(v.label)*1.15}
	if x+sty.Width(v.label)+6 > c.Max.X { // near the right edge: label on the left
		sty.XAlign = text.XRight
		at.X = x - 3
	}
	c.FillText(sty, at, v.label)
}

// DataRange widens only the x range: ±Inf leaves the y range to the data.
func (v vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// hline marks a y value across the plot (a configured limit, a quota);
// its label is its legend entry (see addReference), never over the data.
type hline struct {
	y     float64
	label string
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	if h.y < p.Y.Min || h.y > p.Y.Max {
		return
	}
	y := trY(h.y)
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// Thumbnail draws the line in a legend entry.
func (h hline) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// DataRange widens only the y range, so the line is inside the frame.
func (h hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

// addReference draws reference lines on p with their labels in its
// legend, raising the top of the axis by a legend row for each.
func addReference(p *plot.Plot, hs ...hline) {
	for _, h := range hs {
		p.Add(h)
		p.Legend.Add(h.label, h)
	}
	addRows(p, len(hs))
}

// addRows raises the top of p's y axis by rows legend rows.
func addRows(p *plot.Plot, rows int) {
	if lo, hi := p.Y.Min, p.Y.Max; hi > lo && rows > 0 {
		p.Y.Max = hi + (hi-lo)*legendRowShare*float64(rows)
	}
}

// cappedTicks are humanTicks up to max: the room above it is for labels
// and the legend, not a range the data could reach (a share above 1, a
// saturation above 100%).
type cappedTicks struct{ max float64 }

// Ticks returns humanTicks' ticks between lo and the cap.
func (c cappedTicks) Ticks(lo, hi float64) []plot.Tick {
	return humanTicks{}.Ticks(lo, math.Min(hi, c.max))
}

// rangeBand fills between lo and hi over each run of finite columns.
type rangeBand struct {
	xs, lo, hi []float64
	fill       color.Color
}

// Plot draws the band.
func (b rangeBand) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	flush := func(from, to int) {
		if to-from < 1 {
			return
		}
		pts = pts[:0]
		for k := from; k < to; k++ {
			pts = append(pts, vg.Point{X: trX(b.xs[k]), Y: trY(b.hi[k])})
		}
		for k := to - 1; k >= from; k-- {
			pts = append(pts, vg.Point{X: trX(b.xs[k]), Y: trY(b.lo[k])})
		}
		c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
	}
	start := 0
	for k := range b.xs {
		if math.IsNaN(b.lo[k]) {
			flush(start, k)
			start = k + 1
		}
	}
	flush(start, len(b.xs))
}

// DataRange covers the band, so that peaks stay inside the frame.
func (b rangeBand) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k, x := range b.xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		if !math.IsNaN(b.lo[k]) {
			ymin, ymax = math.Min(ymin, b.lo[k]), math.Max(ymax, b.hi[k])
		}
	}
	return xmin, xmax, ymin, ymax
}

// logBars draws histogram bars whose right edges are the points' X and
// whose left edges are a tenth of a decade below, on a log x axis.
type logBars struct {
	pts  plotter.XYs
	fill color.Color
}

func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, pt := range b.pts {
		x0, x1 := trX(pt.X/math.Pow(10, 0.1)), trX(pt.X)
		y0, y1 := trY(math.Max(p.Y.Min, 0)), trY(pt.Y)
		c.FillPolygon(b.fill, c.ClipPolygonXY([]vg.Point{{X: x0 + 0.5, Y: y0}, {X: x1 - 0.5, Y: y0}, {X: x1 - 0.5, Y: y1}, {X: x0 + 0.5, Y: y1}}))
	}
}

func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymax = math.Inf(1), math.Inf(-1), 0
	for _, pt := range b.pts {
		xmin = math.Min(xmin, pt.X/math.Pow(10, 0.1))
		xmax = math.Max(xmax, pt.X)
		ymax = math.Max(ymax, pt.Y)
	}
	return xmin, xmax, 0, ymax
}

// logTicks mark a log axis at 1, 2 and 5 times each power of ten (every
// integer multiple when that labels fewer than three), labelled for
// people, so that a range inside one or two decades still reads: 5, 10,
// 20, 50 rather than a lone 10.
type logTicks struct{}

// decadesLabelled125 is the widest range, in decades, over which a log
// axis of a chart's width can label 1, 2 and 5 of each decade between lo
// and hi without two labels touching: 1 and 2 are 0.3 of a decade apart,
// and the longest label needs about 6 points a character (11-point sans).
func decadesLabelled125(lo, hi float64) float64 {
	longest := max(len(human(lo, 3)), len(human(hi, 3)), len(human(2*lo, 3)), len(human(5*lo, 3)))
	const axisWidth = 680.0 // points, of a chart chartW wide
	return math.Log10(2) * axisWidth / (6*float64(longest) + 6)
}

// Ticks returns the ticks between lo and hi (both positive).
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var out []plot.Tick
	labelSets := [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}
	if math.Log10(hi/lo) > decadesLabelled125(lo, hi) {
		labelSets = [][]int{{1}} // 1, 2, 5 of more decades run into each other
	}
	for _, labelled := range labelSets {
		out = out[:0]
		n := 0
		for k := first; k <= last; k++ {
			for m := 1; m <= 9; m++ {
				v := float64(m) * math.Pow(10, float64(k))
				if v < lo || v > hi {
					continue
				}
				t := plot.Tick{Value: v}
				if slices.Contains(labelled, m) {
					t.Label = human(v, 3)
					n++
				}
				out = append(out, t)
			}
		}
		if n >= 3 {
			return out
		}
	}
	if len(slices.DeleteFunc(slices.Clone(out), func(t plot.Tick) bool { return t.Label == "" })) < 2 {
		return humanTicks{}.Ticks(lo, hi) // inside one decade's step: evenly spaced
	}
	return out
}

// humanTicks are ticks for people: four to six labelled ones on round
// steps (1, 2, 2.5 or 5 times a power of ten), with an unlabelled one
// between each pair, labelled as the reports write numbers: 250, not
// 250.00; 2,500, not 2500.00.
type humanTicks struct{}

// maxLabelledTicks is the most labelled ticks an axis carries.
const maxLabelledTicks = 6

// Ticks returns the ticks between lo and hi.
func (humanTicks) Ticks(lo, hi float64) []plot.Tick {
	step := tickStep(lo, hi)
	if step == 0 {
		ticks := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = human(ticks[i].Value, 6)
			}
		}
		return ticks
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo/step*2 - 1e-9); k/2*step <= hi+step*1e-9; k++ {
		v := k / 2 * step
		if math.Abs(v) < step*1e-9 {
			v = 0 // no -0
		}
		t := plot.Tick{Value: v}
		if math.Mod(k, 2) == 0 {
			t.Label = human(v, 6)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// tickStep is the least round step (1, 2, 2.5 or 5 times a power of ten)
// that puts at most maxLabelledTicks labelled ticks in [lo, hi], or 0 for
// a range that has none (empty, not finite).
func tickStep(lo, hi float64) float64 {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return 0
	}
	base := math.Pow(10, math.Floor(math.Log10(span))-2)
	for k := 0; k < 5; k++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * base
			if n := math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1; n <= maxLabelledTicks {
				return step
			}
		}
		base *= 10
	}
	return 0
}

// legendRowShare is the room a legend row takes above the data, as a
// share of the data's range.
const legendRowShare = 0.08

// legendRoom raises the top of a linear y axis so that a legend of
// entries lines in the top corner sits above the data, not over it, and
// no peak touches the frame.
func legendRoom(p *plot.Plot, entries int) {
	lo, hi := min(0, p.Y.Min), p.Y.Max
	if math.IsNaN(hi) || math.IsInf(hi, 0) || hi <= lo {
		return
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*(0.08+legendRowShare*float64(entries))
}

// barRoom widens a bar chart's category axis by half a category on each
// side so that the first and last bars sit inside the frame, not cut by
// it, and lifts its top off the highest bar.
func barRoom(p *plot.Plot, categories int) {
	p.X.Min, p.X.Max = -0.6, float64(categories-1)+0.6
	if p.Y.Max > 0 && !math.IsInf(p.Y.Max, 0) {
		p.Y.Max = math.Max(p.Y.Max, 0) * 1.08
	}
}
