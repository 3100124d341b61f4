package report

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func saturationChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	if len(r.Limiters) == 0 {
		return nil, "the client has no limiters"
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	p := newTimePlot(r, "Saturation per limiter", "saturation (%)")
	addTimeBands(p, r, s)
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = cappedTicks{max: 100} // the room above 100% is for the legend
	var cs []column
	for _, l := range r.Limiters {
		cs = append(cs, column{[]string{l.Name + ".usage"}, func(v []float64) float64 { return 100 * v[0] }})
	}
	lines := readLines(r, s, cs...)
	var all []series
	for k, l := range r.Limiters {
		all = append(all, lines.line(k, l.Name, false))
	}
	for i, sr := range unhide(all, 115) {
		drawLine(p, lines.x, sr, limiterHue(r, r.Limiters[i].Name))
	}
	legendRoom(p, len(all))
	markDeadlock(p, r, s, 100)
	return p, ""
}

// markDeadlock marks, on a time chart of a deadlocked run, the end of the
// last interval in which a request still completed: when the cycle closed.
// The line stops at top, the top of the data; its label goes in a row of
// its own above it.
func markDeadlock(p *plot.Plot, r *metrics.Results, s *metrics.Series, top float64) {
	if r.Stop.Kind != metrics.Deadlocked {
		return
	}
	last, found := 0.0, false
	s.ScanNamed(0, []string{"succeeded", "t_s"}, func(_ int, v []float64) bool {
		if v[0] > 0 {
			last, found = v[1], true
		}
		return true
	})
	if found {
		st := draw.LineStyle{Color: color.NRGBA{R: 190, G: 40, B: 40, A: 255}, Width: 1.5, Dashes: []vg.Length{5, 3}}
		p.Add(vline{x: last, label: "deadlock: last completion " + secs(last), style: st, top: top})
		addRows(p, 1)
	}
}

func pauseBands(r *metrics.Results, s *metrics.Series, host string) [][2]float64 {
	drawn := drawnRows(r, s)
	var out [][2]float64
	s.ScanNamed(0, []string{host + ".paused", "t_s"}, func(i int, v []float64) bool {
		if i >= drawn {
			return false
		}
		if x := v[1] - r.IntervalS; v[0] > 0 {
			end := x + r.IntervalS
			if n := len(out); n > 0 && math.Abs(out[n-1][1]-x) < 1e-9 {
				out[n-1][1] = end
			} else {
				out = append(out, [2]float64{x, end})
			}
		}
		return true
	})
	return out
}

func rejectionsChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	any := false
	for _, u := range r.Upstreams {
		any = any || u.Throttled > 0
	}
	if !any {
		return nil, "no upstream answered 429"
	}
	// The unit follows the interval: a per-minute rate read off 250 ms
	// intervals exaggerates every burst sixty-fold.
	unit, scale := "second", 1/r.IntervalS
	if r.IntervalS >= 60 {
		unit, scale = "minute", 60/r.IntervalS
	}
	p := newTimePlot(r, "Upstream 429s per "+unit+", by send time", "429 responses per "+unit)
	addTimeBands(p, r, s)
	rows := 0
	hosts := metrics.ShownHosts(r)
	if len(hosts) < len(r.Upstreams) {
		p.Title.Text += fmt.Sprintf(" (the %d hosts with the most, of %s)", len(hosts), Grouped(int64(len(r.Upstreams))))
	}
	cs := make([]column, len(hosts))
	for i, u := range hosts {
		cs[i] = column{[]string{u.Host + ".responses_429"}, func(v []float64) float64 { return v[0] * scale }}
	}
	lines := readLines(r, s, cs...)
	for i, u := range hosts {
		drawLine(p, lines.x, lines.line(i, u.Host, false), i)
		// Pauses: a strip along the top in the host's colour.
		if b := pauseBands(r, s, u.Host); len(b) > 0 {
			c := palette[i%len(palette)]
			st := band{ranges: b, fill: color.NRGBA{R: c.R, G: c.G, B: c.B, A: 150}, strip: stripH, row: rows}
			p.Add(st)
			p.Legend.Add(u.Host+" paused (Retry-After)", st)
			rows++
		}
	}
	// The legend goes below the strips; the axis leaves room for both.
	p.Legend.YOffs = -vg.Length(rows) * stripH * 1.3
	legendRoom(p, len(hosts)+2*rows)
	return p, ""
}

func rejectionRateChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	if !anyValue(s, "responses_429", false) {
		return nil, "no upstream answered 429"
	}
	p := newTimePlot(r, "Share of attempts answered 429, per host", "429 rate (%)")
	addTimeBands(p, r, s)
	p.Y.Min, p.Y.Max = 0, 115
	hosts := metrics.ShownHosts(r)
	if len(hosts) < len(r.Upstreams) {
		p.Title.Text += fmt.Sprintf(" (%s, of %s)", strings.Replace(shownHostsWhich(r, hosts), "The ", "the ", 1), Grouped(int64(len(r.Upstreams))))
	}
	var cs []column
	var drawn []int // the hosts' places in hosts (their colours)
	names := make([]string, len(hosts))
	for i, u := range hosts {
		names[i] = u.Host + ".responses_429"
	}
	some := anyValues(s, names, false)
	for i, u := range hosts {
		if !some[i] {
			continue
		}
		cs = append(cs, column{[]string{u.Host + ".responses_429", u.Host + ".starts"}, share429})
		drawn = append(drawn, i)
	}
	lines := readLines(r, s, cs...)
	for k, i := range drawn {
		drawLine(p, lines.x, lines.line(k, hosts[i].Host, false), i)
	}
	return p, ""
}

// share429 is the percentage of an interval's attempts (v[1]) answered
// 429 (v[0]); NaN, no rate, in an interval without attempts.
func share429(v []float64) float64 {
	if v[1] > 0 {
		return 100 * v[0] / v[1]
	}
	return math.NaN()
}
