package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/limitsim/limitsim/report/metrics"
)

// PlanMetric is one figure of a plan across its points: the objective's
// metric, a constraint's, or one of a point's health figures.
type PlanMetric struct {
	Path   string
	Values []float64 // one per point; NaN where the point's run failed
	// CI95, with replications, is each value's 95% confidence half-width.
	CI95 []float64
}

// Plan is what `limitsim plan -o DIR` draws and writes: every point of the
// grid, which are feasible and on the Pareto frontier, and the one
// recommended.
type Plan struct {
	Scenario    string
	Keys        []string    // the swept keys
	Params      [][]float64 // per point, the keys' values in Keys order
	Objective   string      // max:PATH or min:PATH
	Constraints []metrics.Assertion
	// Metrics are the objective's figure (unless it is a swept key) and
	// each constraint's, one per path: the table's columns and the charts.
	Metrics []PlanMetric
	// Health are the figures that say whether a point serves its
	// requests: success_ratio, timeouts (acquire timeouts and requests
	// timed out) and rejected.
	Health   []PlanMetric
	Feasible []bool
	Pareto   []bool
	// Errors, per point, is why its run stopped early ("" if it did not).
	Errors []string
	// Why, per point, says why it is not feasible beyond its constraints'
	// figures, which the report checks itself: critical findings, a
	// horizon refused, the run as given failing.
	Why []string
	// Longer, per point, says its counts (timeouts, rejected) are over the
	// longer run the plan gave it, not comparable with the other rows'.
	Longer      []bool
	Recommended int // index of the recommended point, -1 for none
	// Flags are the recommended point as --set flags, its swept keys then
	// the plan's own overrides, as the terminal prints them; empty, the
	// swept keys' values alone are given.
	Flags string
	// Runs, per point, is how many runs its figures are over: fewer than
	// Replications for a point decided early, more for one run again
	// over a longer horizon.
	Runs         []int
	Replications int
	// Closest names the constraint nearest to holding when no point is
	// feasible.
	Closest string
	// Incomplete: the plan was stopped before every point ran.
	Incomplete bool
	// Warnings are the plan's notes on its recommendation (the horizon,
	// the edge of a swept range, robustness).
	Warnings []string
	// Robustness says how the recommendation held at more load, on fresh
	// seeds and on a longer run.
	Robustness string
	// Refined, for a refined plan, says how many of the grid's points it
	// ran.
	Refined string
	// Uncertain, for a plan over draws of the scenario's ranges, says
	// how to read its figures, its feasibility and its regrets.
	Uncertain string
	// Cost says what the plan spent: its runs against a full grid's, the
	// requests simulated and the wall time.
	Cost    string
	Charts  []Chart
	Omitted []Omitted
}

// DrawPlan draws a plan's charts: each metric against a one-key sweep with
// its constraints' thresholds and the recommendation marked, or a heat
// map of each metric over a two-key grid.
func DrawPlan(p *Plan) error {
	footer := fmt.Sprintf("limitsim · plan of %s · %s points", p.Scenario, Grouped(int64(len(p.Params))))
	for _, m := range p.Metrics {
		name := "plan-" + safeStem(m.Path)
		var (
			ch  *Chart
			why string
			err error
		)
		switch len(p.Keys) {
		case 1:
			ch, why, err = p.lineChart(m, footer)
		case 2:
			ch, why, err = p.heatChart(m, footer)
		default:
			why = "charts are drawn for sweeps of one or two keys"
		}
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		if ch == nil {
			if why == "" {
				why = "nothing to draw"
			}
			p.Omitted = append(p.Omitted, Omitted{Name: name, Title: m.Path, Reason: why})
			continue
		}
		ch.Name, ch.Title = name, m.Path
		p.Charts = append(p.Charts, *ch)
	}
	return nil
}

// higherBetter reports whether a higher value of m is the better: the
// objective's direction, or the side of its constraint's threshold that
// holds.
func (p *Plan) higherBetter(m PlanMetric) bool {
	if dir, path, _ := strings.Cut(p.Objective, ":"); path == m.Path {
		return dir == "max"
	}
	for _, c := range p.Constraints {
		if c.Path == m.Path {
			return c.Op == ">" || c.Op == ">="
		}
	}
	return true
}

// constraintsOn are the plan's constraints on path.
func (p *Plan) constraintsOn(path string) []metrics.Assertion {
	var out []metrics.Assertion
	for _, c := range p.Constraints {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// constraintText is a constraint with its threshold in its unit.
func constraintText(c metrics.Assertion) string {
	return fmt.Sprintf("%s %s %s", c.Path, c.Op, unitOf(c.Path).tick(c.Value))
}

// sweptTicks mark an axis at the swept values only, at pos(i) for the
// i-th; with more than max values every k-th is labelled.
func sweptTicks(values []float64, pos func(i int) float64, most int) plot.ConstantTicks {
	step := max(1, (len(values)+most-1)/most)
	ticks := make(plot.ConstantTicks, len(values))
	for i, v := range values {
		ticks[i].Value = pos(i)
		if i%step == 0 {
			ticks[i].Label = human(v, 6)
		}
	}
	return ticks
}

// tickDigitPoints is about the width of a tick label's character, and
// tickGapPoints the least blank between two labels, in points.
const (
	tickDigitPoints = 5.6
	tickGapPoints   = 6
)

// spacedTicks mark an axis at the swept values (distinct, in order), each
// at its value, labelling the first, the last and those of must, then
// every other whose label clears those already labelled: values close
// together (a search's probes, 16 17 18 19) would print over each other.
func spacedTicks(values, must []float64) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(values))
	if len(values) == 0 {
		return ticks
	}
	span := values[len(values)-1] - values[0]
	clears := func(i int) bool {
		for k := range ticks {
			if ticks[k].Label == "" {
				continue
			}
			width := float64(len(human(values[i], 6))+len(ticks[k].Label))/2*tickDigitPoints + tickGapPoints
			if math.Abs(values[i]-values[k]) < width/plotWidthPoints*span {
				return false
			}
		}
		return true
	}
	for i, v := range values {
		ticks[i].Value = v
		if i == 0 || i == len(values)-1 || slices.Contains(must, v) {
			ticks[i].Label = human(v, 6)
		}
	}
	for i, v := range values {
		if ticks[i].Label == "" && clears(i) {
			ticks[i].Label = human(v, 6)
		}
	}
	return ticks
}

// lineChart is a metric against a one-key sweep.
func (p *Plan) lineChart(m PlanMetric, footer string) (*Chart, string, error) {
	pl, caption, why := p.linePlot(m)
	if pl == nil {
		return nil, why, nil
	}
	png, svg, err := render(pl, footer)
	if err != nil {
		return nil, "", err
	}
	return &Chart{Caption: caption, PNG: png, SVG: svg}, "", nil
}

// linePlot lays out a one-key chart of m and says what it draws; nil and
// why when it has nothing to draw.
func (p *Plan) linePlot(m PlanMetric) (pl *plot.Plot, caption, why string) {
	u := unitOf(m.Path)
	key := p.Keys[0]
	pl = newPlot(fmt.Sprintf("%s against %s", m.Path, key), key, m.Path+u.suffix())
	pl.Y.Tick.Marker = unitTicks{u}
	xs := make([]float64, len(p.Params))
	for i, v := range p.Params {
		xs[i] = v[0]
	}
	if xv := distinct(xs); len(xv) <= 15 {
		var must []float64 // the recommended point's value is labelled
		if r := p.Recommended; r >= 0 {
			must = append(must, xs[r])
		}
		pl.X.Tick.Marker = spacedTicks(xv, must)
	}
	// The line joins the points in the key's order, whatever the sweep's.
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	lx, ly := make([]float64, len(xs)), make([]float64, len(xs))
	for k, i := range order {
		lx[k], ly[k] = xs[i], m.Values[i]
	}
	if err := line(pl, lx, ly, m.Path, 0, false); err != nil {
		return nil, "", err.Error()
	}
	parts := []string{fmt.Sprintf("%s at each swept value of %s, joined by a line", m.Path, key)}
	var feas, infeas plotter.XYs
	for i := range xs {
		if math.IsNaN(m.Values[i]) {
			continue
		}
		pt := plotter.XY{X: xs[i], Y: m.Values[i]}
		if p.Feasible[i] {
			feas = append(feas, pt)
		} else {
			infeas = append(infeas, pt)
		}
	}
	if len(feas) > 0 {
		addDots(pl, feas, "feasible", colour(2), true)
		parts = append(parts, "filled green dots are feasible points")
	}
	if len(infeas) > 0 {
		addDots(pl, infeas, "not feasible", colour(5), false)
		parts = append(parts, "open orange rings are points that are not feasible")
	}
	for _, c := range p.constraintsOn(m.Path) {
		lo, hi := minMax(xs)
		if err := line(pl, []float64{lo, hi}, []float64{c.Value, c.Value}, constraintText(c), 5, true); err != nil {
			return nil, "", err.Error()
		}
		parts = append(parts, "the dashed line is the constraint "+constraintText(c))
	}
	if r := p.Recommended; r >= 0 && !math.IsNaN(m.Values[r]) {
		ring(pl, plotter.XY{X: xs[r], Y: m.Values[r]})
		parts = append(parts, "the large black ring marks the recommended point")
	}
	if !finiteAxes(pl) {
		return nil, "", "nothing to draw"
	}
	legendRoom(pl, len(parts)+1)
	return pl, strings.Join(parts, "; ") + ".", ""
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

// minMax is the range of xs, NaN left out.
func minMax(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return lo, hi
}

// distinct is the sorted distinct values of vs.
func distinct(vs []float64) []float64 {
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}
