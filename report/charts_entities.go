package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// pairedBars draws two series of bars side by side per category, with room
// above them for the legend.
func pairedBars(p *plot.Plot, names []string, a, b plotter.Values, la, lb string, ca, cb int) string {
	w := barWidth(len(names))
	top := 0.0
	for i := range a {
		top = math.Max(top, math.Max(a[i], b[i]))
	}
	ba, err := plotter.NewBarChart(a, w)
	if err != nil {
		return err.Error()
	}
	bb, err := plotter.NewBarChart(b, w)
	if err != nil {
		return err.Error()
	}
	ba.Color, bb.Color = colour(ca), colour(cb)
	ba.LineStyle.Width, bb.LineStyle.Width = 0, 0
	ba.Offset, bb.Offset = -w/2, w/2
	p.Add(ba, bb)
	p.Legend.Add(la, ba)
	p.Legend.Add(lb, bb)
	if top > 0 {
		p.Y.Max = 1.25 * top // room for the legend
	}
	p.NominalX(names...)
	barRoom(p, len(names))
	return ""
}

func tenantWaitChart(r *metrics.Results, _ *metrics.Series) (*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	p := newPlot("Wait p99 by tenant", "", "")
	shown, omitted := worstTenants(r.Tenants, maxTenantRows, byWait)
	if omitted > 0 {
		p.Title.Text = fmt.Sprintf("Wait p99: the %d longest of %s tenants", len(shown), Grouped(int64(len(r.Tenants))))
	}
	var v plotter.Values
	var names []string
	for _, t := range shown {
		v = append(v, t.WaitS.P99)
		names = append(names, t.Name)
	}
	if allZero(v) {
		return nil, "no tenant waited"
	}
	bc, err := plotter.NewBarChart(v, vg.Points(28))
	if err != nil {
		return nil, err.Error()
	}
	bc.Color = colour(0)
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalX(names...)
	barRoom(p, len(names))
	secondsAxis(p, "p99 wait on limiters")
	return p, ""
}

func tenantShareChart(r *metrics.Results, _ *metrics.Series) (*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	var total int64
	for _, t := range r.Tenants {
		total += t.Arrived
	}
	p := newPlot("Share by tenant: offered against admitted", "tenant", "share (%)")
	shown, omitted := worstTenants(r.Tenants, maxTenantRows, byUnderServed)
	switch {
	case omitted > 0 && underServed(shown[0]):
		p.Title.Text = fmt.Sprintf("Share: the %d most under-served of %s tenants", len(shown), Grouped(int64(len(r.Tenants))))
	case omitted > 0:
		p.Title.Text = fmt.Sprintf("Share: %d of %s tenants (none under-served: each gets its share)", len(shown), Grouped(int64(len(r.Tenants))))
	}
	var off, adm plotter.Values
	var names []string
	for _, t := range shown {
		off = append(off, 100*metrics.Ratio(float64(t.Arrived), float64(total)))
		adm = append(adm, 100*t.Share)
		names = append(names, t.Name)
	}
	if reason := pairedBars(p, names, off, adm, "share of arrivals", "share of successes", 4, 0); reason != "" {
		return nil, reason
	}
	return p, ""
}

// plotWidthPoints is about the width of a chart's data area, in points.
const plotWidthPoints = 680

// barWidth is the width of each of two bars to a category among
// categories: two in at most 80% of a category's width, so that 20
// tenants' bars stand side by side, never over each other.
func barWidth(categories int) vg.Length {
	return vg.Points(math.Min(34, 0.4*plotWidthPoints/float64(max(1, categories))))
}

// underServed reports whether a tenant's share of the successes falls
// more than 1% (relative) below its share of the arrivals.
func underServed(t metrics.TenantStats) bool {
	return t.ArrivalShare-t.Share > 0.01*t.ArrivalShare
}

// maxEntityLines is how many tenants or hosts a per-entity time chart
// draws one by one; the others are drawn together as one line.
const maxEntityLines = 7

// entitySeries is a rate per entity over time from the columns
// NAME+suffix (counts per interval): the maxEntityLines entities with the
// largest totals of NAME+rankBy (the figure that matters: a tenant's
// arrivals, so that a starved one is not folded away), largest first, then
// the others summed as one line. Entities without the column are skipped;
// nil with fewer than two.
func entitySeries(r *metrics.Results, s *metrics.Series, names []string, suffix, rankBy string) []named {
	type entity struct {
		name  string
		total float64
	}
	var es []entity
	var ranks []int // the rankBy columns of es, in es's order; -1 for none
	for _, n := range names {
		if s.Index(n+suffix) < 0 {
			continue
		}
		es = append(es, entity{name: n})
		ranks = append(ranks, s.Index(n+rankBy))
	}
	var cols []int
	for _, c := range ranks {
		if c >= 0 {
			cols = append(cols, c)
		}
	}
	if len(cols) > 0 {
		s.Scan(0, cols, func(_ int, v []float64) bool { // every total in one pass
			k := 0
			for j, c := range ranks {
				if c >= 0 {
					es[j].total += v[k]
					k++
				}
			}
			return true
		})
	}
	if len(es) < 2 {
		return nil
	}
	slices.SortStableFunc(es, func(a, b entity) int { return cmp.Compare(b.total, a.total) })
	var ls []named
	for k, e := range es[:min(len(es), maxEntityLines+1)] {
		ls = append(ls, named{rate(r, e.name+suffix), e.name, false, k})
	}
	if len(es) > maxEntityLines+1 {
		var cols []string
		for _, e := range es[maxEntityLines:] {
			cols = append(cols, e.name+suffix)
		}
		rest := column{cols, func(v []float64) float64 {
			var sum float64
			for _, c := range v {
				sum += c / r.IntervalS
			}
			return sum
		}}
		ls = append(ls[:maxEntityLines], named{rest, fmt.Sprintf("the other %d", len(es)-maxEntityLines), false, maxEntityLines})
	}
	return ls
}

// entityPanels draws entitySeries as time panels; nil when there are
// fewer than two entities with columns.
func entityPanels(r *metrics.Results, s *metrics.Series, names []string, suffix, rankBy, title, ylabel string) []*plot.Plot {
	ls := entitySeries(r, s, names, suffix, rankBy)
	if ls == nil {
		return nil
	}
	ps, _ := panels(r, s, title, ylabel, ls)
	return ps
}

func tenantThroughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	names := make([]string, len(r.Tenants))
	for i, t := range r.Tenants {
		names[i] = t.Name
	}
	ps := entityPanels(r, s, names, ".succeeded", ".arrivals", "Successful requests per second, by tenant", "requests per second")
	if ps == nil {
		return nil, fmt.Sprintf("over %d tenants: each one's totals are in tenants.csv", metrics.MaxListed)
	}
	return ps, ""
}

func hostThroughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if len(r.Upstreams) < 2 {
		return nil, "" // does not apply
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	var names []string
	for _, u := range r.Upstreams {
		names = append(names, u.Host)
	}
	ps := entityPanels(r, s, names, ".starts", ".starts", "Attempts started per second, by host", "attempts per second")
	if ps == nil {
		return nil, "no host has its own columns in the series"
	}
	return ps, ""
}
