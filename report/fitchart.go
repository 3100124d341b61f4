package report

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Curve is a fitted cumulative distribution to draw over data.
type Curve struct {
	Name string
	CDF  func(seconds float64) float64
}

// FitCDFChart draws measured latencies against fitted distributions as
// cumulative shares on a log time axis: samples (seconds, any order) as
// the empirical CDF, or, when ps is not nil, the table of percentiles ps
// at latencies samples as points. The data is drawn in black, each curve
// in its own colour, dashed.
func FitCDFChart(source string, samples, ps []float64, curves []Curve) (Chart, error) {
	if len(samples) == 0 || (ps != nil && len(ps) != len(samples)) {
		return Chart{}, errors.New("report: no data to chart")
	}
	xs := slices.Clone(samples)
	slices.Sort(xs)
	if xs[0] <= 0 {
		return Chart{}, errors.New("report: latencies must be positive on a log axis")
	}
	title := "Latency: measured against fitted (percentile, tail stretched)"
	p := newPlot(title, "latency (s, log scale)", "percentile")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	// The y axis counts nines, −log10(1 − share), so p90, p99 and p99.9
	// are as far apart as p0 and p90.
	top := 3.0
	if ps != nil {
		top = max(top, math.Ceil(nines(ps[len(ps)-1])+0.5))
	} else {
		top = max(top, math.Ceil(math.Log10(float64(len(xs)))))
	}
	ninesAxis(p, top)
	lo, hi := xs[0]/1.25, xs[len(xs)-1]*1.25
	const points = 240
	grid := make([]float64, points)
	for i := range grid {
		grid[i] = lo * math.Pow(hi/lo, float64(i)/(points-1))
	}
	for i, c := range curves {
		ys := make([]float64, points)
		for j, x := range grid {
			// Past the top the curve stops (a NaN breaks the line).
			if ys[j] = nines(c.CDF(x)); ys[j] > top {
				ys[j] = math.NaN()
			}
		}
		if err := line(p, grid, ys, c.Name, i, true); err != nil {
			return Chart{}, err
		}
	}
	if err := addMeasured(p, xs, ps, top, points); err != nil {
		return Chart{}, err
	}
	p.Legend.Left, p.Legend.Top = true, true
	png, svg, err := render(p, "limitsim fit latency "+source)
	if err != nil {
		return Chart{}, err
	}
	return Chart{Name: "fit-latency", Title: title,
		Caption: "The measured latencies (black) against each fitted family (dashed), as the percentile each latency reaches, on an axis that stretches the tail (p90, p99 and p99.9 are evenly spaced); where a curve leaves the black line, that family misplaces those percentiles.",
		PNG:     png, SVG: svg}, nil
}

// ninesAxis sets p's y axis to count nines from 0 to top, with a tick at
// each of p0, p50, p90, p99 … up to top.
func ninesAxis(p *plot.Plot, top float64) {
	p.Y.Min, p.Y.Max = 0, top
	var ticks []plot.Tick
	for _, t := range []struct {
		share float64
		label string
	}{{0, "p0"}, {0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}, {0.9999, "p99.99"}, {0.99999, "p99.999"}} {
		if y := nines(t.share); y <= top+1e-9 {
			ticks = append(ticks, plot.Tick{Value: y, Label: t.label})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
}

// addMeasured draws the measured latencies xs (sorted) on p: at their
// percentiles ps as points, or with ps nil as the empirical CDF at up to
// 2·points ranks, as a line.
func addMeasured(p *plot.Plot, xs, ps []float64, top float64, points int) error {
	data := make(plotter.XYs, 0, min(len(xs), 2*points))
	if ps != nil {
		for i, x := range xs {
			data = append(data, plotter.XY{X: x, Y: nines(ps[i])})
		}
		s, err := plotter.NewScatter(data)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Radius = colour(7), 3.5
		p.Add(s)
		p.Legend.Add("measured percentiles", s)
	} else {
		// The empirical CDF at up to 480 ranks, evenly spaced in nines so
		// that the tail keeps its detail; the share at rank i is i/(n+1).
		n := float64(len(xs))
		last := -1
		for k := range 2 * points {
			i := min(int(n*(1-math.Pow(10, -top*float64(k)/float64(2*points-1)))), len(xs)-1)
			if i > last {
				data = append(data, plotter.XY{X: xs[i], Y: nines(float64(i+1) / (n + 1))})
				last = i
			}
		}
		l, err := plotter.NewLine(data)
		if err != nil {
			return err
		}
		l.Color, l.Width = colour(7), 2.4
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("measured (%d samples)", len(xs)), l)
	}
	return nil
}

// nines is −log10(1 − share): 1 at p90, 2 at p99, 3 at p99.9.
func nines(share float64) float64 {
	if share >= 1 {
		return math.Inf(1)
	}
	return -math.Log10(1 - share)
}

// RateChart draws a recorded arrival rate per bin (bin seconds wide, from
// the first arrival) against the rate the fitted process gives in each
// bin (fitted may be nil: a replayed trace has no model to draw).
func RateChart(source string, bin float64, rates, fitted []float64, fittedName string) (Chart, error) {
	if len(rates) == 0 || !(bin > 0) || (fitted != nil && len(fitted) != len(rates)) {
		return Chart{}, errors.New("report: no rates to chart")
	}
	title := "Arrivals: recorded rate against the fitted process"
	p := newPlot(title, "time since the first arrival (s)", "arrivals per second")
	// Head room above the data keeps the legend off it.
	p.Y.Min, p.Y.Max = 0, 1.3*max(slices.Max(rates), maxOr0(fitted))
	xs := make([]float64, len(rates))
	for i := range xs {
		xs[i] = (float64(i) + 0.5) * bin
	}
	if err := line(p, xs, rates, fmt.Sprintf("recorded (per %.3g s)", bin), 7, false); err != nil {
		return Chart{}, err
	}
	if fitted != nil {
		if err := line(p, xs, fitted, fittedName, 0, true); err != nil {
			return Chart{}, err
		}
	}
	png, svg, err := render(p, "limitsim fit arrivals "+source)
	if err != nil {
		return Chart{}, err
	}
	return Chart{Name: "fit-arrivals", Title: title,
		Caption: "The recorded arrivals per second in each bin (black) against the rate the chosen process gives there (dashed): Poisson scatter around the dashed line is expected; a pattern the line misses is not.",
		PNG:     png, SVG: svg}, nil
}

func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}
