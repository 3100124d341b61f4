package report

import (
	"bytes"
	"fmt"
	"image/color"
	pngenc "image/png"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/limitsim/limitsim/report/metrics"
)

// greens are ColorBrewer's YlGn stops, light to dark, its near-white
// first stop left out so that no cell fades into the page.
var greens = []color.RGBA{
	{0xf7, 0xfc, 0xb9, 255}, {0xd9, 0xf0, 0xa3, 255}, {0xad, 0xdd, 0x8e, 255}, {0x78, 0xc6, 0x79, 255},
	{0x41, 0xab, 0x5d, 255}, {0x23, 0x84, 0x43, 255}, {0x00, 0x68, 0x37, 255}, {0x00, 0x45, 0x29, 255},
}

// green is the colour of goodness g in [0, 1]: pale yellow for the worst,
// dark green for the best.
func green(g float64) color.RGBA {
	g = math.Max(0, math.Min(1, g)) * float64(len(greens)-1)
	i := min(int(g), len(greens)-2)
	f := g - float64(i)
	a, b := greens[i], greens[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + f*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// dark reports whether text on c should be white.
func dark(c color.RGBA) bool { return 0.299*float64(c.R)+0.587*float64(c.G)+0.114*float64(c.B) < 128 }

// noRun is the colour of a cell whose point did not run or failed.
var noRun = color.RGBA{200, 200, 200, 255}

// heatScale maps a metric's values to colours, better darker.
type heatScale struct {
	lo, hi float64
	higher bool // a higher value is better
}

func (s heatScale) colour(v float64) color.RGBA {
	if math.IsNaN(v) {
		return noRun
	}
	g := 0.5
	if s.hi > s.lo {
		g = (v - s.lo) / (s.hi - s.lo)
	}
	if !s.higher {
		g = 1 - g
	}
	return green(g)
}

// heatCells draws a metric over a two-key grid: one equal cell per pair
// of swept values, at (column, row) indices, whatever the gaps between
// the values; infeasible cells crossed, the recommended one outlined, and
// each cell's value written in it when there is room.
type heatCells struct {
	values      [][]float64 // [column][row], NaN where no point ran
	infeasible  [][]bool
	recommended [2]int // column and row of the recommended point; -1 for none
	scale       heatScale
	unit        planUnit
	labelled    bool // set by Plot when the cells had room for their values
}

// Plot implements plot.Plotter.
func (h *heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	cols, rows := len(h.values), len(h.values[0])
	cellW, cellH := trX(1)-trX(0), trY(1)-trY(0)
	h.labelled = cellW >= 0.55*vg.Inch && cellH >= 0.22*vg.Inch
	edge := draw.LineStyle{Color: color.White, Width: 1}
	for ci := range cols {
		for r := range rows {
			x0, x1, y0, y1 := trX(float64(ci)-0.5), trX(float64(ci)+0.5), trY(float64(r)-0.5), trY(float64(r)+0.5)
			box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			col := h.scale.colour(h.values[ci][r])
			c.FillPolygon(col, box)
			c.StrokeLines(edge, append(box, box[0]))
			ink := color.Color(color.Black)
			if dark(col) {
				ink = color.White
			}
			if h.infeasible[ci][r] {
				in := 0.12 * min(x1-x0, y1-y0)
				cross := draw.LineStyle{Color: ink, Width: 1.2}
				c.StrokeLine2(cross, x0+in, y0+in, x1-in, y1-in)
				c.StrokeLine2(cross, x0+in, y1-in, x1-in, y0+in)
			}
			if h.labelled && !math.IsNaN(h.values[ci][r]) {
				sty := text.Style{Color: ink, Font: sans(10), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: p.TextHandler}
				lbl := h.unit.text(h.values[ci][r])
				w, ht := sty.Width(lbl), sty.Height(lbl)
				mid := vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}
				// The value sits on a patch of its cell's colour, over the cross.
				c.FillPolygon(col, []vg.Point{{X: mid.X - w/2 - 2, Y: mid.Y - ht/2}, {X: mid.X + w/2 + 2, Y: mid.Y - ht/2},
					{X: mid.X + w/2 + 2, Y: mid.Y + ht/2}, {X: mid.X - w/2 - 2, Y: mid.Y + ht/2}})
				c.FillText(sty, mid, lbl)
			}
		}
	}
	if ci, r := h.recommended[0], h.recommended[1]; ci >= 0 {
		x0, x1, y0, y1 := trX(float64(ci)-0.5), trX(float64(ci)+0.5), trY(float64(r)-0.5), trY(float64(r)+0.5)
		in := vg.Length(2)
		box := []vg.Point{{X: x0 + in, Y: y0 + in}, {X: x1 - in, Y: y0 + in}, {X: x1 - in, Y: y1 - in}, {X: x0 + in, Y: y1 - in}}
		c.StrokeLines(draw.LineStyle{Color: color.RGBA{0xd5, 0x5e, 0, 255}, Width: 3.5}, append(box, box[0], box[1]))
	}
}

// DataRange implements plot.DataRanger: a cell each side of every index.
func (h *heatCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(h.values)) - 0.5, -0.5, float64(len(h.values[0])) - 0.5
}

// colourBar draws the scale of a heat map: its colours from the lowest
// value to the highest, and each constraint's threshold across it.
type colourBar struct {
	scale      heatScale
	lo, hi     float64 // the bar's range: the scale's, or around its one value
	thresholds []float64
}

// Plot implements plot.Plotter.
func (b colourBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	const steps = 64
	for i := range steps {
		v0 := b.lo + (b.hi-b.lo)*float64(i)/steps
		v1 := b.lo + (b.hi-b.lo)*float64(i+1)/steps
		col := b.scale.colour((v0 + v1) / 2)
		// Each step reaches the top, the next painted over it: no seams.
		c.FillPolygon(col, []vg.Point{{X: trX(0), Y: trY(v0)}, {X: trX(1), Y: trY(v0)}, {X: trX(1), Y: trY(b.hi)}, {X: trX(0), Y: trY(b.hi)}})
	}
	for _, t := range b.thresholds {
		if t >= b.lo && t <= b.hi {
			c.StrokeLine2(draw.LineStyle{Color: color.Black, Width: 2, Dashes: []vg.Length{4, 2}}, trX(-0.25), trY(t), trX(1.25), trY(t))
		}
	}
}

// barRange is the range of the scale's colour bar: the scale's, or one
// around its single value.
func (s heatScale) barRange() (lo, hi float64) {
	if s.hi > s.lo {
		return s.lo, s.hi
	}
	return s.lo - 0.5*math.Max(math.Abs(s.lo), 1e-9), s.hi + 0.5*math.Max(math.Abs(s.hi), 1e-9)
}

// DataRange implements plot.DataRanger.
func (b colourBar) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, 1, b.lo, b.hi }

// heatChart is a heat map of a metric over a two-key grid, with its colour
// bar and a caption that says what is drawn.
func (p *Plan) heatChart(m PlanMetric, footer string) (*Chart, string, error) {
	h, why := p.heatPlot(m)
	if h == nil {
		return nil, why, nil
	}
	png, svg, err := renderHeat(h.heat, h.bar, footer, h.crossed, h.outlined)
	if err != nil {
		return nil, "", err
	}
	return &Chart{Caption: h.caption, PNG: png, SVG: svg}, "", nil
}

// heatLayout is a heat map laid out, not yet drawn: the map, its colour
// bar, whether its key shows crossed (infeasible) and outlined
// (recommended) cells, and its caption.
type heatLayout struct {
	heat, bar         *plot.Plot
	crossed, outlined bool
	caption           string
}

// heatPlot lays out the heat map of m over a two-key grid; nil and why
// when it has nothing to draw.
func (p *Plan) heatPlot(m PlanMetric) (*heatLayout, string) {
	xs, ys := make([]float64, len(p.Params)), make([]float64, len(p.Params))
	for i, v := range p.Params {
		xs[i], ys[i] = v[0], v[1]
	}
	xv, yv := distinct(xs), distinct(ys)
	if len(xv) < 2 || len(yv) < 2 {
		return nil, "a heat map needs two values of each key"
	}
	lo, hi := minMax(m.Values)
	if math.IsInf(lo, 0) {
		return nil, "no point measured " + m.Path
	}
	u := unitOf(m.Path)
	cells := &heatCells{recommended: [2]int{-1, -1}, scale: heatScale{lo: lo, hi: hi, higher: p.higherBetter(m)}, unit: u}
	cells.values, cells.infeasible = make([][]float64, len(xv)), make([][]bool, len(xv))
	for c := range cells.values {
		cells.values[c] = slices.Repeat([]float64{math.NaN()}, len(yv))
		cells.infeasible[c] = make([]bool, len(yv))
	}
	crossed := 0
	for i, v := range p.Params {
		c, r := index(xv, v[0]), index(yv, v[1])
		cells.values[c][r] = m.Values[i]
		if cells.infeasible[c][r] = !p.Feasible[i]; cells.infeasible[c][r] {
			crossed++
		}
		if i == p.Recommended {
			cells.recommended = [2]int{c, r}
		}
	}
	pl := newPlot(fmt.Sprintf("%s over %s × %s", m.Path, lastField(p.Keys[0]), lastField(p.Keys[1])), p.Keys[0], p.Keys[1])
	pl.Add(cells)
	pl.X.Tick.Marker = sweptTicks(xv, func(i int) float64 { return float64(i) }, 16)
	pl.Y.Tick.Marker = sweptTicks(yv, func(i int) float64 { return float64(i) }, 16)
	bar := barPlot(cells.scale, m.Path, u, p.constraintsOn(m.Path))
	return &heatLayout{heat: pl, bar: bar, crossed: crossed > 0, outlined: cells.recommended[0] >= 0,
		caption: heatCaption(p, m, cells, xv, yv, crossed)}, ""
}

// index is the position of v in the sorted distinct values vs.
func index(vs []float64, v float64) int {
	i, _ := slices.BinarySearch(vs, v)
	return i
}

// lastField is a key's last dotted field, for a short title.
func lastField(key string) string { return key[strings.LastIndex(key, ".")+1:] }

// evenlySpaced reports whether vs (sorted, at least two) step evenly.
func evenlySpaced(vs []float64) bool {
	step := vs[1] - vs[0]
	for i := 2; i < len(vs); i++ {
		if math.Abs(vs[i]-vs[i-1]-step) > 1e-9*math.Max(math.Abs(step), 1) {
			return false
		}
	}
	return true
}

// barPlot is the colour bar of a heat map, its axis the metric's.
func barPlot(s heatScale, path string, u planUnit, cons []metrics.Assertion) *plot.Plot {
	bar := plot.New()
	bar.Title.Text = "darker = better"
	bar.Title.TextStyle.Font = sans(10)
	bar.Y.Label.Text = path + u.suffix()
	bar.Y.Label.TextStyle.Font = sans(12)
	bar.Y.Tick.Label.Font = sans(11)
	colours := s
	if s.lo, s.hi = s.barRange(); !(colours.hi > colours.lo) {
		bar.Y.Tick.Marker = plot.ConstantTicks{{Value: (s.lo + s.hi) / 2, Label: u.tick((s.lo + s.hi) / 2)}}
	} else {
		bar.Y.Tick.Marker = unitTicks{u}
	}
	var ts []float64
	for _, c := range cons {
		ts = append(ts, c.Value)
	}
	bar.Add(colourBar{scale: colours, lo: s.lo, hi: s.hi, thresholds: ts})
	bar.HideX()
	bar.X.Label.Text = ""
	bar.X.Min, bar.X.Max = -0.3, 1.3
	bar.Y.Min, bar.Y.Max = s.lo, s.hi
	return bar
}

// barW is the width the colour bar and the key take beside a heat map.
const barW = 1.7 * vg.Inch

// drawHeat draws a heat map, its colour bar and its key (the crossed and
// outlined cells' marks, when there are such cells) and the footer on cv.
func drawHeat(cv vg.CanvasSizer, heat, bar *plot.Plot, footer string, crossed, outlined bool) {
	dc := draw.New(cv)
	area := draw.Crop(dc, 0, 0, footH, 0)
	heat.Draw(draw.Crop(area, 0, -barW, 0, 0))
	data := heat.DataCanvas(draw.Crop(area, 0, -barW, 0, 0))
	keyH := 0.75 * vg.Inch
	strip := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: area.Max.X - barW + 0.1*vg.Inch, Y: data.Min.Y + keyH},
		Max: vg.Point{X: area.Max.X - 0.25*vg.Inch, Y: data.Max.Y}}}
	bar.Draw(strip)
	sty := text.Style{Color: color.Black, Font: sans(11), YAlign: draw.YCenter, Handler: heat.TextHandler}
	at := vg.Point{X: area.Max.X - barW + 0.3*vg.Inch, Y: data.Min.Y + keyH - 0.3*vg.Inch}
	if crossed {
		s := 0.09 * vg.Inch
		ln := draw.LineStyle{Color: color.Black, Width: 1.2}
		dc.StrokeLine2(ln, at.X-s, at.Y-s, at.X+s, at.Y+s)
		dc.StrokeLine2(ln, at.X-s, at.Y+s, at.X+s, at.Y-s)
		dc.FillText(sty, vg.Point{X: at.X + 0.2*vg.Inch, Y: at.Y}, "not feasible")
		at.Y -= 0.28 * vg.Inch
	}
	if outlined {
		s := 0.1 * vg.Inch
		box := []vg.Point{{X: at.X - s, Y: at.Y - s}, {X: at.X + s, Y: at.Y - s}, {X: at.X + s, Y: at.Y + s}, {X: at.X - s, Y: at.Y + s}}
		dc.StrokeLines(draw.LineStyle{Color: color.RGBA{0xd5, 0x5e, 0, 255}, Width: 3}, append(box, box[0], box[1]))
		dc.FillText(sty, vg.Point{X: at.X + 0.2*vg.Inch, Y: at.Y}, "recommended")
	}
	foot := text.Style{Color: color.Gray{90}, Font: sans(10), Handler: heat.TextHandler}
	dc.FillText(foot, vg.Point{X: dc.Min.X + 0.12*vg.Inch, Y: dc.Min.Y + 0.1*vg.Inch}, footer)
}

// renderHeat draws a heat map with its colour bar on the right and, under
// the bar, a key to the crossed and outlined cells, with the footer; as
// PNG and SVG.
func renderHeat(heat, bar *plot.Plot, footer string, crossed, outlined bool) (png, svg []byte, err error) {
	draw1 := func(cv vg.CanvasSizer) { drawHeat(cv, heat, bar, footer, crossed, outlined) }
	img := vgimg.NewWith(vgimg.UseWH(chartW, chartH), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	draw1(img)
	var b bytes.Buffer
	if err := (&pngenc.Encoder{CompressionLevel: pngenc.BestSpeed}).Encode(&b, img.Image()); err != nil {
		return nil, nil, err
	}
	sv := vgsvg.New(chartW, chartH)
	draw1(sv)
	var s bytes.Buffer
	if _, err := sv.WriteTo(&s); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), s.Bytes(), nil
}

// heatCaption says what a heat map draws, and only that.
func heatCaption(p *Plan, m PlanMetric, cells *heatCells, xv, yv []float64, crossed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at each point of the grid: one cell per pair of swept values of %s (across) and %s (up), all cells the same size", m.Path, p.Keys[0], p.Keys[1])
	var uneven []string
	for k, vs := range [][]float64{xv, yv} {
		if !evenlySpaced(vs) {
			uneven = append(uneven, p.Keys[k])
		}
	}
	if len(uneven) > 0 {
		fmt.Fprintf(&b, " although the values of %s are not evenly spaced (the ticks are the swept values, in order)", strings.Join(uneven, " and "))
	}
	better := "higher"
	if !cells.scale.higher {
		better = "lower"
	}
	if cells.scale.hi > cells.scale.lo {
		fmt.Fprintf(&b, ". The colour bar on the right gives the scale from %s to %s", cells.unit.text(cells.scale.lo), cells.unit.text(cells.scale.hi))
	} else {
		fmt.Fprintf(&b, ". Every point measured %s, so every cell has one colour, the one on the bar on the right", cells.unit.text(cells.scale.lo))
	}
	fmt.Fprintf(&b, ": %s is better here, so darker green is better and pale yellow worse", better)
	lo, hi := cells.scale.barRange()
	for _, c := range p.constraintsOn(m.Path) {
		if c.Value >= lo && c.Value <= hi {
			fmt.Fprintf(&b, "; the dashed line across the bar is the constraint %s", constraintText(c))
		}
	}
	b.WriteString(".")
	if cells.labelled {
		b.WriteString(" Each cell is labelled with its value.")
	}
	if crossed > 0 {
		fmt.Fprintf(&b, " %s not feasible.", plural(crossed, "The crossed cell is a point that is", "The %d crossed cells are points that are"))
	}
	if cells.recommended[0] >= 0 {
		b.WriteString(" The cell outlined in orange is the recommended point.")
	}
	missing := 0
	for _, col := range cells.values {
		for _, v := range col {
			if math.IsNaN(v) {
				missing++
			}
		}
	}
	if missing > 0 {
		fmt.Fprintf(&b, " %s no figure: %s.", plural(missing, "The grey cell has", "The %d grey cells have"),
			plural(missing, "its point did not run or its run failed", "their points did not run or their runs failed"))
	}
	return b.String()
}

// plural is one when n is 1, else many with n in it.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	if strings.Contains(many, "%d") {
		return fmt.Sprintf(many, n)
	}
	return many
}
