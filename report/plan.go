package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// PlanMetric is one figure of a plan across its points: the objective's
// metric or a constraint's.
type PlanMetric struct {
	Path   string
	Values []float64 // one per point
	// CI95, with replications, is each value's 95% confidence half-width.
	CI95 []float64
	// Op and Threshold are set for a constraint ("<", "<=", ">", ">=").
	Op        string
	Threshold float64
}

// Plan is what `limitsim plan -o DIR` draws and writes: every point of the
// grid, which are feasible and on the Pareto frontier, and the one
// recommended.
type Plan struct {
	Scenario    string
	Keys        []string    // the swept keys
	Params      [][]float64 // per point, the keys' values in Keys order
	Objective   string      // max:PATH or min:PATH
	Metrics     []PlanMetric
	Feasible    []bool
	Pareto      []bool
	Recommended int // index of the recommended point, -1 for none
	// Incomplete: the plan was stopped before every point ran.
	Incomplete bool
	// Warnings are the plan's notes on its recommendation (the horizon,
	// the edge of a swept range, robustness).
	Warnings []string
	// Robustness says how the recommendation held at more load, on fresh
	// seeds and on a longer run.
	Robustness string
	Charts     []Chart
	Omitted    []Omitted
}

// DrawPlan draws a plan's charts: each metric against a one-key sweep with
// its threshold and the recommendation marked, or a heat map of each
// metric over a two-key grid.
func DrawPlan(p *Plan) error {
	footer := fmt.Sprintf("limitsim · plan of %s · %d points", p.Scenario, len(p.Params))
	for _, m := range p.Metrics {
		var pl *plot.Plot
		why := ""
		switch len(p.Keys) {
		case 1:
			pl, why = planLine(p, m)
		case 2:
			pl, why = planHeat(p, m)
		default:
			why = "charts are drawn for sweeps of one or two keys"
		}
		name := "plan-" + safeStem(m.Path)
		if pl == nil || !finiteAxes(pl) {
			if why == "" {
				why = "nothing to draw"
			}
			p.Omitted = append(p.Omitted, Omitted{Name: name, Title: m.Path, Reason: why})
			continue
		}
		png, svg, err := render(pl, footer)
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		caption := fmt.Sprintf("%s at every point; feasible points filled, the recommended one ringed.", m.Path)
		if m.Op != "" {
			caption += fmt.Sprintf(" The dashed line is the constraint %s %s %g.", m.Path, m.Op, m.Threshold)
		}
		p.Charts = append(p.Charts, Chart{Name: name, Title: m.Path, Caption: caption, PNG: png, SVG: svg})
	}
	return nil
}

func planLine(p *Plan, m PlanMetric) (*plot.Plot, string) {
	pl := newPlot(fmt.Sprintf("%s against %s", m.Path, p.Keys[0]), p.Keys[0], m.Path)
	xs := make([]float64, len(p.Params))
	for i, v := range p.Params {
		xs[i] = v[0]
	}
	if err := line(pl, xs, m.Values, m.Path, 0, false); err != nil {
		return nil, err.Error()
	}
	var feas, infeas plotter.XYs
	for i := range xs {
		pt := plotter.XY{X: xs[i], Y: m.Values[i]}
		if p.Feasible[i] {
			feas = append(feas, pt)
		} else {
			infeas = append(infeas, pt)
		}
	}
	addDots(pl, feas, "feasible", colour(2), true)
	addDots(pl, infeas, "not feasible", colour(5), false)
	if m.Op != "" {
		lo, hi := minMax(xs)
		if err := line(pl, []float64{lo, hi}, []float64{m.Threshold, m.Threshold}, "constraint", 5, true); err != nil {
			return nil, err.Error()
		}
	}
	if r := p.Recommended; r >= 0 {
		ring(pl, plotter.XY{X: xs[r], Y: m.Values[r]})
	}
	return pl, ""
}

func addDots(pl *plot.Plot, pts plotter.XYs, name string, c color.Color, filled bool) {
	if len(pts) == 0 {
		return
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Radius = 4
	s.GlyphStyle.Shape = draw.RingGlyph{}
	if filled {
		s.GlyphStyle.Shape = draw.CircleGlyph{}
	}
	pl.Add(s)
	pl.Legend.Add(name, s)
}

func ring(pl *plot.Plot, at plotter.XY) {
	s, err := plotter.NewScatter(plotter.XYs{at})
	if err != nil {
		return
	}
	s.GlyphStyle.Color = color.Black
	s.GlyphStyle.Radius = 9
	s.GlyphStyle.Shape = draw.RingGlyph{}
	pl.Add(s)
	pl.Legend.Add("recommended", s)
}

func minMax(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// planGrid is a metric over a two-key grid, for a heat map.
type planGrid struct {
	xs, ys []float64 // distinct values of each key, sorted
	z      [][]float64
}

func (g planGrid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g planGrid) Z(c, r int) float64 { return g.z[c][r] }
func (g planGrid) X(c int) float64    { return g.xs[c] }
func (g planGrid) Y(r int) float64    { return g.ys[r] }

func distinct(vs []float64) []float64 {
	out := append([]float64(nil), vs...)
	sort.Float64s(out)
	k := 0
	for i, v := range out {
		if i == 0 || v != out[k-1] {
			out[k] = v
			k++
		}
	}
	return out[:k]
}

func planHeat(p *Plan, m PlanMetric) (*plot.Plot, string) {
	var a, b []float64
	for _, v := range p.Params {
		a, b = append(a, v[0]), append(b, v[1])
	}
	g := planGrid{xs: distinct(a), ys: distinct(b)}
	if len(g.xs) < 2 || len(g.ys) < 2 {
		return nil, "a heat map needs two values of each key"
	}
	g.z = make([][]float64, len(g.xs))
	for c := range g.z {
		g.z[c] = make([]float64, len(g.ys))
		for r := range g.z[c] {
			g.z[c][r] = math.NaN()
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range p.Params {
		c, r := sort.SearchFloat64s(g.xs, v[0]), sort.SearchFloat64s(g.ys, v[1])
		g.z[c][r] = m.Values[i]
		lo, hi = math.Min(lo, m.Values[i]), math.Max(hi, m.Values[i])
	}
	title := fmt.Sprintf("%s over the grid (blue %.4g … red %.4g)", m.Path, lo, hi)
	if !(hi > lo) {
		title = fmt.Sprintf("%s over the grid (%.4g at every point)", m.Path, lo)
		hi = lo + 1
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(lo)
	pal.SetMax(hi)
	h := plotter.NewHeatMap(g, pal.Palette(64))
	// The map's own range is the data's: with every value the same it is
	// empty, and no cell is drawn. The palette's range is never empty.
	h.Min, h.Max = lo, hi
	h.NaN = color.Gray{Y: 230}
	pl := newPlot(title, p.Keys[0], p.Keys[1])
	pl.Add(h)
	var infeas plotter.XYs
	for i, v := range p.Params {
		if !p.Feasible[i] {
			infeas = append(infeas, plotter.XY{X: v[0], Y: v[1]})
		}
	}
	if len(infeas) > 0 {
		if s, err := plotter.NewScatter(infeas); err == nil {
			s.GlyphStyle.Shape = draw.CrossGlyph{}
			s.GlyphStyle.Color = color.Black
			s.GlyphStyle.Radius = 4
			pl.Add(s)
			pl.Legend.Add("not feasible", s)
		}
	}
	if r := p.Recommended; r >= 0 {
		ring(pl, plotter.XY{X: p.Params[r][0], Y: p.Params[r][1]})
	}
	return pl, ""
}

// WriteMarkdown writes plan.md: the recommendation, every point (feasible
// and Pareto-optimal ones marked) and the charts.
func (p *Plan) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# limitsim plan: %s\n\nObjective %s over %d points.\n\n", p.Scenario, p.Objective, len(p.Params))
	if p.Incomplete {
		b.WriteString("**Incomplete:** the plan was stopped before every point ran; it recommends nothing.\n\n")
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", w)
	}
	if r := p.Recommended; r >= 0 {
		b.WriteString("**Recommended:**")
		for k, key := range p.Keys {
			fmt.Fprintf(&b, " `--set %s=%s`", key, strconv.FormatFloat(p.Params[r][k], 'g', -1, 64))
		}
		b.WriteString(" (the scenario as configured there is `recommended.toml`).\n\n")
		if p.Robustness != "" {
			fmt.Fprintf(&b, "**Robustness:** %s.\n\n", p.Robustness)
		}
	} else if !p.Incomplete {
		b.WriteString("**No point meets every constraint.**\n\n")
	}
	if len(p.Metrics) > 0 && p.Metrics[0].CI95 != nil {
		b.WriteString("Figures are means over the replications ± the 95% confidence half-width; a constraint holds on the far bound.\n\n")
	}
	head := append([]string{}, p.Keys...)
	for _, m := range p.Metrics {
		head = append(head, m.Path)
	}
	head = append(head, "feasible", "Pareto")
	b.WriteString("| " + strings.Join(escapeAll(head), " | ") + " |\n|" + strings.Repeat("---:|", len(head)) + "\n")
	for i, v := range p.Params {
		var row []string
		for _, x := range v {
			row = append(row, strconv.FormatFloat(x, 'g', -1, 64))
		}
		for _, m := range p.Metrics {
			if m.CI95 != nil {
				row = append(row, fmt.Sprintf("%.4g ± %.2g", m.Values[i], m.CI95[i]))
			} else {
				row = append(row, fmt.Sprintf("%.4g", m.Values[i]))
			}
		}
		row = append(row, yesNo(p.Feasible[i]), yesNo(p.Pareto[i]))
		if i == p.Recommended {
			row[0] = "**" + row[0] + "**"
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	for _, ch := range p.Charts {
		fmt.Fprintf(&b, "\n## %s\n\n![%s](%s.png)\n\n%s\n", ch.Title, ch.Title, ch.Name, ch.Caption)
	}
	for _, o := range p.Omitted {
		fmt.Fprintf(&b, "\n_%s left out: %s._\n", o.Title, o.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// WriteFiles writes the charts and plan.md into dir.
func (p *Plan) WriteFiles(dir string) error { return p.WriteFilesNoting(dir, nil) }

// WriteFilesNoting is WriteFiles, calling wrote (if not nil) with the name
// of each file once it is in place.
func (p *Plan) WriteFilesNoting(dir string, wrote func(name string)) error {
	w := noting(dir, wrote)
	for _, ch := range p.Charts {
		if err := w(ch.Name+".png", bytes.NewReader(ch.PNG).WriteTo); err != nil {
			return err
		}
		if err := w(ch.Name+".svg", bytes.NewReader(ch.SVG).WriteTo); err != nil {
			return err
		}
	}
	return w("plan.md", func(w io.Writer) (int64, error) { return 0, p.WriteMarkdown(w) })
}

// Files lists the files WriteFiles writes.
func (p *Plan) Files() []string {
	out := make([]string, 0, 2*len(p.Charts)+1)
	for _, ch := range p.Charts {
		out = append(out, ch.Name+".png", ch.Name+".svg")
	}
	return append(out, "plan.md")
}
