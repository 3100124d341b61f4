package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/limitsim/limitsim/report/metrics"
)

// The timeline is the run's story on one time axis, the chart a reviewer
// pastes: offered load against goodput, the binding limiter's p99 wait,
// and the 429s with the Retry-After pauses, each in a panel of its own
// unit, all marked with the warm-up, the end of the arrivals, a stall or
// deadlock and the moment each finding set in; a verified fix's goodput is
// drawn beside the run's.

// timeUnit is the unit a time axis is read in: seconds for runs up to ten
// minutes, minutes up to ten hours, hours beyond.
type timeUnit struct {
	name    string  // "s", "min" or "h"
	seconds float64 // seconds in one unit
}

// timeUnitFor is the unit that suits a run of elapsed seconds.
func timeUnitFor(elapsed float64) timeUnit {
	switch {
	case elapsed > 10*3600:
		return timeUnit{"h", 3600}
	case elapsed > 600:
		return timeUnit{"min", 60}
	}
	return timeUnit{"s", 1}
}

// text writes an instant of at seconds in the unit, as the axis reads
// it: "33 min" on a minutes axis, not "1,980s".
func (u timeUnit) text(at float64) string {
	if u.seconds == 1 {
		return secs(at)
	}
	return human(at/u.seconds, 3) + " " + u.name
}

// label is the axis label of the unit.
func (u timeUnit) label() string { return "time (" + u.name + ")" }

// Ticks places humanTicks' round values of the unit on an axis whose
// data are seconds: 0, 30, 60 min on a three-hour run, not 0, 5000,
// 10,000 s.
func (u timeUnit) Ticks(lo, hi float64) []plot.Tick {
	ticks := humanTicks{}.Ticks(lo/u.seconds, hi/u.seconds)
	for i := range ticks {
		ticks[i].Value *= u.seconds
	}
	return ticks
}

// secondsAxis labels the y axis of p, whose data are seconds, in the unit
// that reads best: milliseconds when all it spans is under a second (20,
// not 0.02), seconds otherwise. The label is what with the unit in
// brackets, or the unit's name alone when what is "". Call it once the
// data are on p: it reads the axis's range.
func secondsAxis(p *plot.Plot, what string) {
	u, long := timeUnit{"s", 1}, "seconds"
	if p.Y.Max < 1 {
		u, long = timeUnit{"ms", 0.001}, "milliseconds"
	}
	p.Y.Tick.Marker = u
	p.Y.Label.Text = long
	if what != "" {
		p.Y.Label.Text = what + " (" + u.name + ")"
	}
}

// newTimePlot is newPlot with a time axis in the unit that suits the
// run's length; the data stay in seconds.
func newTimePlot(r *metrics.Results, title, ylabel string) *plot.Plot {
	return newTimePlotFor(r.ElapsedS, title, ylabel)
}

// newTimePlotFor is newPlot with a time axis for runs of up to elapsed
// seconds.
func newTimePlotFor(elapsed float64, title, ylabel string) *plot.Plot {
	unit := timeUnitFor(elapsed)
	p := newPlot(title, unit.label(), ylabel)
	p.X.Tick.Marker = unit
	if elapsed > 0 {
		// The whole run, whatever the lines cover: intervals where nothing
		// succeeded (an outage) are gaps in a percentile's line, and must
		// show as gaps rather than cut the axis short.
		p.X.Min, p.X.Max = 0, elapsed
	}
	return p
}

// marker is an instant the timeline marks on every panel.
type marker struct {
	atS   float64 // seconds
	label string  // on the top panel only
	style draw.LineStyle
}

var (
	findingColour = color.NRGBA{R: 190, G: 40, B: 40, A: 255}
	endColour     = color.NRGBA{R: 90, G: 90, B: 90, A: 255}
	fixColour     = color.NRGBA{R: 0, G: 130, B: 90, A: 255}
)

// timelinePanels draws the timeline's panels; a panel without data (no
// limiter waited, no 429) is left out rather than drawn flat.
func timelinePanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	markers := timelineMarkers(r, s)
	top := newTimePlot(r, "Timeline: offered load and goodput", "requests per second")
	lines := readLines(r, s, rate(r, "arrivals"), rate(r, "succeeded"))
	drawLine(top, lines.x, lines.line(0, "offered", true), hueOffered)
	drawLine(top, lines.x, lines.line(1, "goodput", false), hueGoodput)
	panels := []*plot.Plot{top}
	entries := []int{2 + addFixLines(top, r)} // each panel's legend rows
	if p, n := bindingWaitPanel(r, s); p != nil {
		panels, entries = append(panels, p), append(entries, n)
	}
	pauses := timelinePauses(r, s)
	if p, n := throttlePanel(r, s, pauses); p != nil {
		panels, entries = append(panels, p), append(entries, n)
	} else if len(pauses) > 0 {
		// Pauses without 429s (a quota's reset read from its headers):
		// their strip goes on the top panel, not over a flat panel of 0.
		entries[0] += addPauseStrip(top, pauses)
	}
	// One time range for every panel: a column with gaps at its ends
	// (no wait ended there) must not shift its panel's axis.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		xmin, xmax = math.Min(xmin, p.X.Min), math.Max(xmax, p.X.Max)
	}
	for i, p := range panels {
		p.X.Min, p.X.Max = xmin, xmax
		p.Add(warmupBand(r))
		rows := entries[i]
		if i == 0 {
			rows += len(markers) // their labels, under the legend
		}
		dataTop := p.Y.Max
		legendRoom(p, rows)
		for k, m := range markers {
			v := vline{x: m.atS, style: m.style, row: k, top: dataTop}
			if i == 0 {
				v.label = m.label
			}
			p.Add(v)
		}
		if i < len(panels)-1 {
			p.X.Label.Text = "" // one time label, under the last panel
		}
	}
	return panels, ""
}

// addFixLines draws a verified fix's goodput beside the run's: the run's
// steady-state goodput and the fixed run's, as lines in the legend; it
// returns how many it added.
func addFixLines(p *plot.Plot, r *metrics.Results) (entries int) {
	f := r.Fix
	if f == nil || !f.Verified || f.After == nil || len(f.Set) == 0 {
		return 0
	}
	before := draw.LineStyle{Color: endColour, Width: 1, Dashes: []vg.Length{2, 2}}
	after := draw.LineStyle{Color: fixColour, Width: 1.5, Dashes: []vg.Length{6, 3}}
	addReference(p, hline{y: f.Before.GoodputRPS, label: "goodput now " + rateText(f.Before.GoodputRPS), style: before},
		hline{y: f.After.GoodputRPS, label: "goodput with the verified fix " + rateText(f.After.GoodputRPS), style: after})
	return 2
}

// rateText is a rate in requests per second as a label reads it.
func rateText(rps float64) string {
	return human(rps, 3) + "/s"
}

// bindingWaitPanel draws the p99 wait of the limiter that sets the pace
// (the binding one, else the one whose waits are longest), with its
// legend's rows; nil when no limiter waited.
func bindingWaitPanel(r *metrics.Results, s *metrics.Series) (*plot.Plot, int) {
	name := ""
	if _, l, ok := bindingLimiter(r); ok {
		name = l.Name
	} else {
		longest := 0.0
		for _, l := range r.Limiters {
			if l.WaitS.P99 > longest {
				name, longest = l.Name, l.WaitS.P99
			}
		}
	}
	column := name + ".wait_p99_s"
	if name == "" || !anyValue(s, column, true) {
		return nil, 0
	}
	p := newTimePlot(r, "", "")
	lines := readLines(r, s, plain(column))
	drawLine(p, lines.x, lines.line(0, name+" wait p99", false), limiterHue(r, name))
	rows := 1
	if alert := alertWait(r); alert > 0 {
		addReference(p, hline{y: alert, label: "alert: a tenth of the request budget", style: draw.LineStyle{Color: findingColour, Width: 1, Dashes: []vg.Length{4, 3}}})
		rows = 2
	}
	secondsAxis(p, "wait p99")
	return p, rows
}

// timelinePauses are the stretches when any host was paused (by a 429's
// Retry-After, or by rate-limit headers at zero remaining).
func timelinePauses(r *metrics.Results, s *metrics.Series) [][2]float64 {
	var pauses [][2]float64
	for _, u := range r.Upstreams {
		pauses = append(pauses, pauseBands(r, s, u.Host)...)
	}
	return mergeRanges(pauses)
}

// addPauseStrip draws the pauses as a strip along the top of p, named in
// its legend (moved down below the strip); it returns the legend rows it
// takes.
func addPauseStrip(p *plot.Plot, pauses [][2]float64) int {
	strip := band{ranges: pauses, fill: color.NRGBA{R: 213, G: 94, B: 0, A: 150}, strip: stripH}
	p.Add(strip)
	p.Legend.Add("a host paused (Retry-After or rate-limit headers)", strip)
	p.Legend.YOffs = -stripH * 1.3
	return 2 // its entry, and the strip's own height
}

// throttlePanel draws the 429s per second over every host, with the
// pauses as a strip along the top, and its legend's rows; nil when no host
// answered 429 (pauses alone go on the top panel).
func throttlePanel(r *metrics.Results, s *metrics.Series, pauses [][2]float64) (*plot.Plot, int) {
	if !anyValue(s, "responses_429", false) || !nonZero(s, "responses_429") {
		return nil, 0
	}
	p := newTimePlot(r, "", "429s per second")
	lines := readLines(r, s, rate(r, "responses_429"))
	drawLine(p, lines.x, lines.line(0, "429 responses", false), hue429)
	if len(pauses) > 0 {
		return p, 1 + addPauseStrip(p, pauses)
	}
	return p, 1
}

// mergeRanges joins overlapping or touching ranges, in order.
func mergeRanges(rs [][2]float64) [][2]float64 {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b [2]float64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	var out [][2]float64
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1e-9 {
			out[n-1][1] = math.Max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// timelineMarkers are the instants the timeline marks: the end of the
// arrivals (when the run went on after it), the last completion of a run
// that stalled, and the onset of each finding that has one (a deadlock's
// is its last completion), in time order.
func timelineMarkers(r *metrics.Results, s *metrics.Series) []marker {
	var out []marker
	dashed := []vg.Length{5, 3}
	if end, ok := arrivalsEnd(r, s); ok && end < r.ElapsedS-r.IntervalS {
		out = append(out, marker{end, "arrivals end", draw.LineStyle{Color: endColour, Width: 1, Dashes: dashed}})
	}
	if r.Stop.Kind == metrics.Stalled { // no cycle: a stall the diagnoses do not name
		if at, ok := lastRow(r, s, "succeeded"); ok {
			out = append(out, marker{at, "stalled: last completion " + timeUnitFor(r.ElapsedS).text(at), draw.LineStyle{Color: findingColour, Width: 1.5, Dashes: dashed}})
		}
	}
	seen := map[string]bool{}
	for _, d := range r.Diagnoses {
		if seen[d.Code] {
			continue
		}
		seen[d.Code] = true
		if at, ok := findingOnset(d.Code, r, s); ok {
			label := strings.ReplaceAll(d.Code, "_", " ")
			if d.Severity == "critical" {
				label += " (critical)"
			}
			out = append(out, marker{at, label + " " + timeUnitFor(r.ElapsedS).text(at), draw.LineStyle{Color: findingColour, Width: 1.5, Dashes: dashed}})
		}
	}
	slices.SortStableFunc(out, func(a, b marker) int {
		switch {
		case a.atS < b.atS:
			return -1
		case a.atS > b.atS:
			return 1
		}
		return 0
	})
	return out
}

// arrivalsEnd is the end of the last interval with an arrival.
func arrivalsEnd(r *metrics.Results, s *metrics.Series) (float64, bool) {
	end, found := 0.0, false
	drawn := drawnRows(r, s)
	s.ScanNamed(0, []string{"arrivals", "t_s"}, func(i int, v []float64) bool {
		if i >= drawn {
			return false
		}
		if v[0] > 0 {
			end, found = v[1], true
		}
		return true
	})
	return end, found
}

// onsetShare429 is the share of an interval's attempts answered 429 from
// which a 429 finding counts as set in.
const onsetShare429 = 0.01

// findingOnset is when a finding set in, read from the series: the first
// interval after the warm-up whose 429s pass 1% of its attempts (for the
// 429 findings), with a timeout (for the timeout findings), where the
// requests in the system first reach half their peak (memory growth), the
// last completion (a deadlock), or the start (a burst at the start).
// Findings about the whole run (Little's Law, an acquisition order, a
// serialised limiter, starvation) have no onset.
func findingOnset(code string, r *metrics.Results, s *metrics.Series) (float64, bool) {
	switch code {
	case "sustained_429", "quota_exhausted", "thundering_herd", "token_limit_binds":
		return firstRow(r, s, []string{"responses_429", "starts"}, func(v []float64) bool {
			return v[0] > 0 && v[0] >= onsetShare429*v[1]
		})
	case "acquire_timeouts", "request_timeouts":
		return firstRow(r, s, []string{"timeouts"}, func(v []float64) bool { return v[0] > 0 })
	case "memory_growth":
		peak := 0.0
		for _, v := range s.Column("in_system") {
			peak = math.Max(peak, v)
		}
		return firstRow(r, s, []string{"in_system"}, func(v []float64) bool { return peak > 0 && v[0] >= peak/2 })
	case "unhandled_refusals":
		return firstRow(r, s, []string{"failed"}, func(v []float64) bool { return v[0] > 0 })
	case "retry_storm":
		if r.Storm == nil {
			return 0, false
		}
		return r.Storm.TriggerStartS, true // the trigger the storm outlives
	case "deadlock":
		return lastRow(r, s, "succeeded")
	case "burst_at_start":
		return 0, true
	}
	return 0, false
}

// firstRow is the start of the first drawn interval after the warm-up
// whose values of cols satisfy hit.
func firstRow(r *metrics.Results, s *metrics.Series, cols []string, hit func([]float64) bool) (float64, bool) {
	at, found := 0.0, false
	drawn := drawnRows(r, s)
	s.ScanNamed(0, append(slices.Clone(cols), "t_s"), func(i int, v []float64) bool {
		if i >= drawn {
			return false
		}
		start := v[len(cols)] - r.IntervalS
		if start+1e-9 >= r.WarmupS && hit(v[:len(cols)]) {
			at, found = start, true
			return false
		}
		return true
	})
	return at, found
}

// lastRow is the end of the last drawn interval in which col was above
// zero.
func lastRow(r *metrics.Results, s *metrics.Series, col string) (float64, bool) {
	at, found := 0.0, false
	drawn := drawnRows(r, s)
	s.ScanNamed(0, []string{col, "t_s"}, func(i int, v []float64) bool {
		if i >= drawn {
			return false
		}
		if v[0] > 0 {
			at, found = v[1], true
		}
		return true
	})
	return at, found
}

// timelineCaption says what the timeline shows for this run.
func timelineCaption(r *metrics.Results) string {
	b := strings.Builder{}
	b.WriteString("The run on one time axis: offered load (dashed) against goodput; ")
	b.WriteString("the p99 wait of the limiter that sets the pace; the 429s per second, with a strip along the top where a host was paused by Retry-After. ")
	b.WriteString("The warm-up is shaded; red dashed lines mark where each finding set in, grey the end of the arrivals.")
	if f := r.Fix; f != nil && f.Verified && f.After != nil && len(f.Set) > 0 {
		fmt.Fprintf(&b, " The green line is the goodput the verified fix reached on the same arrivals (%s, against %s now).", rateText(f.After.GoodputRPS), rateText(f.Before.GoodputRPS))
	}
	return b.String()
}

// FirstCriticalOnset is when the run's first critical finding set in (see
// findingOnset): its code and the simulated second; false when no critical
// finding has an onset. A trace that follows the requests from a little
// before it shows the finding forming: the herd, the deadlock's cycle.
func FirstCriticalOnset(r *metrics.Results, s *metrics.Series) (code string, atS float64, ok bool) {
	for _, d := range r.Diagnoses {
		if d.Severity != "critical" {
			continue
		}
		if at, found := findingOnset(d.Code, r, s); found && (!ok || at < atS) {
			code, atS, ok = d.Code, at, true
		}
	}
	return code, atS, ok
}
