package report

import (
	"fmt"
	"math"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
)

// scaleGap is the ratio of two series' peaks beyond which the smaller is
// drawn in a panel of its own, where it is not flattened to the axis.
const scaleGap = 10

// timePanels draws series against x in one panel, or in two when some
// peak more than scaleGap times below the largest: the large series on
// top, the small ones below, each panel with the same title, the warm-up
// band and room for its legend. Colours follow the series' order. The
// reference lines refs (limits, quotas) go on the top panel when they are
// on its scale.
func timePanels(r *metrics.Results, s *metrics.Series, x []float64, title, ylabel string, all []series, refs ...hline) []*plot.Plot {
	top := 0.0
	for _, s := range all {
		top = math.Max(top, s.peak())
	}
	var big, small []int
	for i, s := range all {
		if s.peak()*scaleGap < top {
			small = append(small, i)
		} else {
			big = append(big, i)
		}
	}
	groups := [][]int{big}
	if len(small) > 0 {
		groups = append(groups, small)
	}
	var ps []*plot.Plot
	for g, idx := range groups {
		t := title
		if len(groups) > 1 {
			t = title + [2]string{" (large)", " (small: own scale)"}[g]
		}
		p := newTimePlot(r, t, ylabel)
		addTimeBands(p, r, s)
		top := 0.0
		for _, i := range idx {
			top = math.Max(top, all[i].peak())
		}
		shown := unhide(all, top)
		for _, i := range idx {
			drawLine(p, x, shown[i], shown[i].hue)
		}
		var onScale []hline
		if g == 0 {
			onScale = referencesOnScale(refs, top)
			for _, h := range onScale {
				p.Add(h)
				p.Legend.Add(h.label, h)
			}
		}
		legendRoom(p, len(idx)+len(onScale))
		ps = append(ps, p)
	}
	return ps
}

// named is a chart line to read: its column and its legend.
type named struct {
	column
	name   string
	dashed bool
	hue    int // its palette index (see colour)
}

// referencesOnScale is the reference lines of refs on the scale of a
// panel whose data peak at top: not more than scaleGap times above it.
func referencesOnScale(refs []hline, top float64) []hline {
	var out []hline
	for _, h := range refs {
		if h.y <= scaleGap*top {
			out = append(out, h)
		}
	}
	return out
}

// panels reads the lines ls from s and draws them as timePanels, with the
// reference lines refs.
func panels(r *metrics.Results, s *metrics.Series, title, ylabel string, ls []named, refs ...hline) ([]*plot.Plot, []series) {
	cs := make([]column, len(ls))
	for k, l := range ls {
		cs[k] = l.column
	}
	lines := readLines(r, s, cs...)
	all := make([]series, len(ls))
	for k, l := range ls {
		all[k] = lines.line(k, l.name, l.dashed)
		all[k].hue = l.hue
	}
	return timePanels(r, s, lines.x, title, ylabel, all, refs...), all
}

func waitingPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	var ls []named
	for _, l := range r.Limiters {
		if anyValue(s, l.Name+".waiting", false) {
			ls = append(ls, named{plain(l.Name + ".waiting"), l.Name, false, limiterHue(r, l.Name)})
		}
	}
	if r.Queue.Kind == "queue" {
		if anyValue(s, "queue_depth", false) {
			ls = append(ls, named{plain("queue_depth"), "ingest queue", true, hueIngest})
		}
		if anyValue(s, "blocked_producers", false) {
			ls = append(ls, named{plain("blocked_producers"), "blocked producers", true, hue429})
		}
	}
	if len(ls) == 0 {
		return nil, "nothing ever waited"
	}
	ps, _ := panels(r, s, "Waiting lines", "requests waiting (time average)", ls)
	return ps, ""
}

func inFlightPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if !anyValue(s, "in_flight", false) {
		return nil, "no request reached an upstream"
	}
	ps, _ := panels(r, s, "Requests in flight and in the system", "requests (time average)",
		[]named{{plain("in_flight"), "in flight (upstream)", false, hueOffered}, {plain("in_system"), "in the system", true, hueStarted}})
	return ps, ""
}

// adaptivePanels draws each adaptive limiter's limit over time, summed
// over its objects (every instance's and scope's), in its own unit: a rate
// limit against the attempts started (and the 429s, when there were any)
// per second; a concurrency limit against the requests in flight.
func adaptivePanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	var rates, concurrencies []named
	for _, l := range r.Limiters {
		if s.Index(l.Name+".limit") < 0 {
			continue
		}
		objects := limiterObjects(r, l)
		name := l.Name + " limit"
		if objects > 1 {
			name += fmt.Sprintf(" (%s objects together)", Grouped(int64(objects)))
		}
		limit := named{column{[]string{l.Name + ".limit"}, func(v []float64) float64 { return v[0] * objects }}, name, false, limiterHue(r, l.Name)}
		if l.Family == kindname.ConcurrencyFamily {
			concurrencies = append(concurrencies, limit)
		} else {
			rates = append(rates, limit)
		}
	}
	if len(rates)+len(concurrencies) == 0 {
		return nil, "" // does not apply: not listed as left out
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	var out []*plot.Plot
	if len(rates) > 0 {
		rates = append(rates, named{rate(r, "starts"), "started", true, hueStarted})
		if anyValue(s, "responses_429", false) && nonZero(s, "responses_429") {
			rates = append(rates, named{rate(r, "responses_429"), "429s", true, hue429})
		}
		ps, _ := panels(r, s, "Adaptive rate limits over time", "requests per second", rates)
		out = append(out, ps...)
	}
	if len(concurrencies) > 0 {
		concurrencies = append(concurrencies, named{plain("in_flight"), "in flight (upstream)", true, hueOffered})
		ps, _ := panels(r, s, "Adaptive concurrency limits over time", "requests in flight", concurrencies)
		out = append(out, ps...)
	}
	return out, ""
}

// nonZero reports whether the column name has a value other than 0.
func nonZero(s *metrics.Series, name string) bool {
	found := false
	s.ScanNamed(0, []string{name}, func(_ int, v []float64) bool {
		found = v[0] != 0 && !math.IsNaN(v[0])
		return !found
	})
	return found
}

// limiterObjects is how many limiter objects a limiter's figures cover:
// one per scope and instance, one in all for a limiter kept in a cluster
// store.
func limiterObjects(r *metrics.Results, l metrics.LimiterStats) float64 {
	if l.Scope == "cluster" {
		return 1
	}
	return float64(max(1, l.ScopesTotal) * max(1, r.Instances))
}

func percentilePanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	var ls []named
	for k, q := range []string{"p50", "p95", "p99"} {
		if c := "request_" + q + "_s"; anyValue(s, c, true) {
			ls = append(ls, named{plain(c), "request " + q, false, hueRequest + k})
		}
	}
	for _, l := range r.Limiters {
		if c := l.Name + ".wait_p99_s"; anyValue(s, c, true) {
			ls = append(ls, named{plain(c), l.Name + " wait p99", true, limiterHue(r, l.Name)})
		}
	}
	if len(ls) == 0 {
		return nil, "no request succeeded and nothing waited"
	}
	ps, _ := panels(r, s, "Request time and waits over time", "", ls)
	for _, p := range ps {
		secondsAxis(p, "")
	}
	return ps, ""
}

func throughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	refs := rateLines(r)
	ps, all := panels(r, s, "Throughput", "requests per second", []named{
		{rate(r, "arrivals"), "offered", true, hueOffered}, {rate(r, "starts"), "started", false, hueStarted},
		{rate(r, "succeeded"), "succeeded", false, hueGoodput}}, refs...)
	// The configured limits and the quota are on the panel of the large
	// series when on its scale (not ten times above its peak).
	top := 0.0
	for _, sr := range all {
		top = math.Max(top, sr.peak())
	}
	dataTop := top
	for _, h := range referencesOnScale(refs, top) {
		dataTop = math.Max(dataTop, h.y)
	}
	markDeadlock(ps[0], r, s, dataTop)
	return ps, ""
}
