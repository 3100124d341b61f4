package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// affine is a 2-D transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) apply(p vg.Point) (float64, float64) {
	x, y := float64(p.X), float64(p.Y)
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// then is m followed, in its local coordinates, by n.
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

// box is an axis-aligned rectangle in device points.
type box struct{ x0, y0, x1, y1 float64 }

func (b box) overlaps(o box, slack float64) bool {
	return b.x0+slack < o.x1 && o.x0+slack < b.x1 && b.y0+slack < o.y1 && o.y0+slack < b.y1
}

// crosses reports whether the segment from (x0, y0) to (x1, y1) passes
// through b shrunk by slack (Liang–Barsky clipping).
func (b box) crosses(x0, y0, x1, y1, slack float64) bool {
	lo, hi := 0.0, 1.0
	dx, dy := x1-x0, y1-y0
	for _, e := range [][2]float64{{-dx, x0 - (b.x0 + slack)}, {dx, (b.x1 - slack) - x0}, {-dy, y0 - (b.y0 + slack)}, {dy, (b.y1 - slack) - y0}} {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			lo = math.Max(lo, t)
		} else {
			hi = math.Min(hi, t)
		}
		if lo > hi {
			return false
		}
	}
	return true
}

// placedText is a string drawn, with its box.
type placedText struct {
	text string
	at   box
}

// segment is a stroked line of data, in device points.
type segment struct{ x0, y0, x1, y1 float64 }

// layoutCanvas records where a chart puts its text and its coloured
// lines (the data, and the markers drawn over it) instead of drawing.
type layoutCanvas struct {
	w, h    vg.Length
	stack   []canvasState
	state   canvasState
	texts   []placedText
	strokes []segment
}

type canvasState struct {
	m      affine
	colour color.Color
	dashed bool
}

func newLayoutCanvas(w, h vg.Length) *layoutCanvas {
	return &layoutCanvas{w: w, h: h, state: canvasState{m: affine{a: 1, d: 1}, colour: color.Black}}
}

func (c *layoutCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }
func (c *layoutCanvas) SetLineWidth(vg.Length)       {}
func (c *layoutCanvas) SetLineDash(pattern []vg.Length, _ vg.Length) {
	c.state.dashed = len(pattern) > 0
}
func (c *layoutCanvas) SetColor(col color.Color)            { c.state.colour = col }
func (c *layoutCanvas) Push()                               { c.stack = append(c.stack, c.state) }
func (c *layoutCanvas) Fill(vg.Path)                        {}
func (c *layoutCanvas) DrawImage(vg.Rectangle, image.Image) {}

func (c *layoutCanvas) Pop() {
	c.state = c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
}

func (c *layoutCanvas) Rotate(rad float64) {
	s, co := math.Sin(rad), math.Cos(rad)
	c.state.m = c.state.m.then(affine{a: co, b: s, c: -s, d: co})
}

func (c *layoutCanvas) Translate(p vg.Point) {
	c.state.m = c.state.m.then(affine{a: 1, d: 1, e: float64(p.X), f: float64(p.Y)})
}

func (c *layoutCanvas) Scale(x, y float64) { c.state.m = c.state.m.then(affine{a: x, d: y}) }

// Stroke records the straight parts of a path of data or a marker: one in
// colour, or dashed (a grey limit line); solid grey and black are the
// frame (axes, ticks, grid).
func (c *layoutCanvas) Stroke(p vg.Path) {
	r, g, b, a := c.state.colour.RGBA()
	if a == 0 || (r == g && g == b && !c.state.dashed) {
		return
	}
	var last vg.Point
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			last = comp.Pos
		case vg.LineComp:
			x0, y0 := c.state.m.apply(last)
			x1, y1 := c.state.m.apply(comp.Pos)
			c.strokes = append(c.strokes, segment{x0, y0, x1, y1})
			last = comp.Pos
		default:
			last = comp.Pos
		}
	}
}

// FillString records the box of a string: from its baseline's start,
// its width across and from its descent to its ascent, transformed.
func (c *layoutCanvas) FillString(f font.Face, at vg.Point, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	ext := f.Extents()
	corners := []vg.Point{
		{X: at.X, Y: at.Y - ext.Descent}, {X: at.X + f.Width(text), Y: at.Y - ext.Descent},
		{X: at.X, Y: at.Y + ext.Ascent}, {X: at.X + f.Width(text), Y: at.Y + ext.Ascent},
	}
	b := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range corners {
		x, y := c.state.m.apply(p)
		b = box{math.Min(b.x0, x), math.Min(b.y0, y), math.Max(b.x1, x), math.Max(b.y1, y)}
	}
	c.texts = append(c.texts, placedText{text, b})
}

// overlapSlack is how far two boxes may touch (points): glyph boxes
// include the line's ascent and descent, more than the ink.
const overlapSlack = 1.0

// layoutProblems lays out ps as the chart would be drawn and lists every
// text over another text and every text over a line of data.
func layoutProblems(ps []*plot.Plot) []string {
	c := newLayoutCanvas(chartW, panelsHeight(len(ps)))
	drawPanels(c, ps, "footer")
	return canvasProblems(c)
}

// canvasProblems lists every text over another text and every text over
// a line of data that c recorded.
func canvasProblems(c *layoutCanvas) []string {
	var out []string
	for i, a := range c.texts {
		for _, b := range c.texts[i+1:] {
			if a.at.overlaps(b.at, overlapSlack) {
				out = append(out, fmt.Sprintf("text %q over text %q", a.text, b.text))
			}
		}
		for _, s := range c.strokes {
			if a.at.crosses(s.x0, s.y0, s.x1, s.y1, overlapSlack) {
				out = append(out, fmt.Sprintf("text %q over a line of data", a.text))
				break
			}
		}
	}
	return out
}

// No label, legend or title of any chart of any bundled scenario lies
// over another label or over a line of data: the test measures the text
// boxes gonum/plot lays out against the lines drawn and each other.
func TestChartTextNeverOverlaps(t *testing.T) {
	exs, err := scenarios.Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		t.Run(ex.Name, func(t *testing.T) {
			t.Parallel()
			r, s := simulateExample(t, ex.Name)
			checkChartLayouts(t, r, s)
		})
	}
}

// simulateExample runs the bundled scenario name and analyses it; its
// series is closed when the test ends.
func simulateExample(t *testing.T, name string) (*metrics.Results, *metrics.Series) {
	t.Helper()
	sc, err := scenarios.Load("../scenarios/examples/" + name + ".toml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Series.Close() })
	Analyze(out.Results, out.Series)
	return out.Results, out.Series
}

// checkChartLayouts fails on every overlap in the run's charts.
func checkChartLayouts(t *testing.T, r *metrics.Results, s *metrics.Series) {
	t.Helper()
	charts, panels, _ := chartPlots(r, s)
	for i, c := range charts {
		for _, p := range layoutProblems(panels[i]) {
			t.Errorf("%s: %s", c.Name, p)
		}
	}
}

// The comparison's overlay charts keep their labels and legends off the
// data too, on comparisons of policies with and without 429s.
func TestComparisonChartTextNeverOverlaps(t *testing.T) {
	for _, names := range [][]string{{"token-bucket", "sliding-window"}, {"handling-429", "fail-sustained-429", "fail-thundering-herd"}} {
		var runs []ComparedRun
		for _, name := range names {
			r, s := simulateExample(t, name)
			runs = append(runs, ComparedRun{Name: name, Results: r, Series: s})
		}
		for _, spec := range comparisonCharts {
			p, _ := spec.draw(runs)
			if p == nil {
				continue
			}
			for _, problem := range layoutProblems([]*plot.Plot{p}) {
				t.Errorf("%v: %s: %s", names, spec.name, problem)
			}
			if spec.name == "compare-429-rate" {
				for _, r := range runs { // in %, and the axis holds it
					if 100*r.Results.Rate429 > p.Y.Max || p.Y.Max < 100 {
						t.Errorf("%s: a 429 rate of %.1f%% on an axis up to %v", r.Name, 100*r.Results.Rate429, p.Y.Max)
					}
				}
			}
		}
	}
}

// The layout canvas itself: a label drawn across a line is caught, one
// beside it is not, and a rotated label's box turns with it.
func TestLayoutCanvasMeasures(t *testing.T) {
	c := newLayoutCanvas(100, 100)
	b := box{10, 10, 30, 20}
	if !b.crosses(0, 15, 40, 15, 0) || b.crosses(0, 25, 40, 25, 0) || !b.crosses(20, 0, 20, 40, 0) {
		t.Error("segment against box")
	}
	if !(box{0, 0, 10, 10}).overlaps(box{9, 9, 20, 20}, 0) || (box{0, 0, 10, 10}).overlaps(box{9, 9, 20, 20}, 1) {
		t.Error("box against box, with and without slack")
	}
	face := font.DefaultCache.Lookup(sans(10), 10)
	c.FillString(face, vg.Point{X: 10, Y: 10}, "label")
	w := float64(face.Width("label"))
	if got := c.texts[0].at; math.Abs(got.x1-got.x0-w) > 1e-9 || got.y1-got.y0 < 9 {
		t.Errorf("a 10-point label's box: %+v (width %v)", got, w)
	}
	c.Translate(vg.Point{X: 50, Y: 0})
	c.Rotate(math.Pi / 2)
	x, y := c.state.m.apply(vg.Point{X: 10, Y: 0})
	if math.Abs(x-50) > 1e-9 || math.Abs(y-10) > 1e-9 {
		t.Errorf("rotated point at (%v, %v), want (50, 10)", x, y)
	}
	c.FillString(face, vg.Point{}, "label") // upright from (50, 0)
	if got := c.texts[1].at; math.Abs(got.y1-got.y0-w) > 1e-9 {
		t.Errorf("a rotated label's box is not upright: %+v", got)
	}
	c.SetColor(color.NRGBA{R: 200, A: 255})
	var path vg.Path
	path.Move(vg.Point{X: 0, Y: 0})
	path.Line(vg.Point{X: 10, Y: 0})
	c.Stroke(path)
	c.SetColor(color.Gray{128})
	c.Stroke(path)
	if len(c.strokes) != 1 {
		t.Errorf("%d strokes recorded, want the coloured one only", len(c.strokes))
	}
	c.SetLineDash([]vg.Length{2, 2}, 0)
	c.Stroke(path)
	if len(c.strokes) != 2 {
		t.Errorf("a dashed grey line (a limit) is not recorded as data")
	}
}

// A plan's one-key charts keep their labels and legend off the line, the
// dots, the constraint and the recommendation's ring.
func TestPlanChartTextNeverOverlaps(t *testing.T) {
	p := &Plan{Scenario: "tb", Keys: []string{"client.limiter.quota.rate"}, Objective: "max:goodput_rps", Recommended: 3,
		Constraints: []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01}},
		Params:      [][]float64{{60}, {70}, {80}, {90}, {100}, {110}},
		Metrics: []PlanMetric{{Path: "goodput_rps", Values: []float64{60, 70, 80, 89.9, 99, 99.5}},
			{Path: "rate_429", Values: []float64{0, 0, 0, 0.004, 0.05, 0.12}}},
		Feasible: []bool{true, true, true, true, false, false}}
	for _, m := range p.Metrics {
		pl, _, why := p.linePlot(m)
		if pl == nil {
			t.Fatalf("%s: %s", m.Path, why)
		}
		for _, problem := range layoutProblems([]*plot.Plot{pl}) {
			t.Errorf("%s: %s", m.Path, problem)
		}
	}
}

// A plan's heat maps keep the values written in their cells, their axes,
// their colour bar and its key apart: nothing over another label, and no
// label over a line (a cell's cross, the recommended cell's outline).
func TestPlanHeatMapTextNeverOverlaps(t *testing.T) {
	p := &Plan{Scenario: "tb", Keys: []string{"client.limiter.quota.rate", "client.limiter.quota.burst"}, Objective: "max:goodput_rps", Recommended: 4,
		Constraints: []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01}}}
	for _, rate := range []float64{60, 80, 100, 120} {
		for _, burst := range []float64{1, 5, 10, 20} {
			p.Params = append(p.Params, []float64{rate, burst})
		}
	}
	good, r429 := PlanMetric{Path: "goodput_rps"}, PlanMetric{Path: "rate_429"}
	for _, v := range p.Params {
		good.Values = append(good.Values, math.Min(v[0], 100)-0.01*v[1])
		r429.Values = append(r429.Values, math.Max(0, (v[0]-100)/v[0]))
		p.Feasible = append(p.Feasible, v[0] <= 100)
	}
	p.Metrics = []PlanMetric{good, r429}
	for _, m := range p.Metrics {
		h, why := p.heatPlot(m)
		if h == nil {
			t.Fatalf("%s: %s", m.Path, why)
		}
		c := newLayoutCanvas(chartW, chartH)
		drawHeat(c, h.heat, h.bar, "footer", h.crossed, h.outlined)
		for _, problem := range canvasProblems(c) {
			t.Errorf("%s: %s", m.Path, problem)
		}
	}
}
