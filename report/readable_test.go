package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// An adaptive limit's figures cover every object of it: one per scope and
// instance, one in all in a cluster store.
func TestLimiterObjects(t *testing.T) {
	r := &metrics.Results{Instances: 2}
	for _, c := range []struct {
		l    metrics.LimiterStats
		want float64
	}{
		{metrics.LimiterStats{Scope: "global"}, 2},
		{metrics.LimiterStats{Scope: "per_host", ScopesTotal: 3}, 6},
		{metrics.LimiterStats{Scope: "cluster"}, 1},
	} {
		if got := limiterObjects(r, c.l); got != c.want {
			t.Errorf("%s: %v objects, want %v", c.l.Scope, got, c.want)
		}
	}
}

// manyTenants is a run of n tenants with equal shares, each succeeding
// as often, except that tenant 0 gets starved when starve is set.
func manyTenants(n int, starve bool) *metrics.Results {
	r := &metrics.Results{}
	for i := range n {
		tn := metrics.TenantStats{Name: fmt.Sprintf("t%d", i), Arrived: 100, Succeeded: 100, ArrivalShare: 1 / float64(n), Share: 1 / float64(n), SuccessRate: 1}
		r.Tenants = append(r.Tenants, tn)
	}
	if starve {
		r.Tenants[0].Share, r.Tenants[0].SuccessRate = 0.2/float64(n), 0.2
	}
	return r
}

// With thousands of tenants all served alike the share chart does not
// call its twenty "the most under-served"; with one starved it does. Its
// bars, two to a tenant, fit side by side; the table gives a share of one
// in 10,000 as 0.01%, not 0.0%.
func TestTenantShareChartSaysWhatItShows(t *testing.T) {
	p, _ := tenantShareChart(manyTenants(10_000, false), nil)
	if strings.Contains(p.Title.Text, "under-served of") || !strings.Contains(p.Title.Text, "none under-served") {
		t.Errorf("all served alike: %q", p.Title.Text)
	}
	p, _ = tenantShareChart(manyTenants(10_000, true), nil)
	if !strings.Contains(p.Title.Text, "the 20 most under-served of 10,000 tenants") {
		t.Errorf("one starved: %q", p.Title.Text)
	}
	for _, n := range []int{1, 2, 5, 20, 100} {
		if w := float64(barWidth(n)); 2*w > 0.8*plotWidthPoints/float64(n)+1e-9 || w > 34 {
			t.Errorf("%d categories: bars %v wide, two to a category of %v", n, w, plotWidthPoints/float64(n))
		}
	}
	for x, want := range map[float64]string{0.0001: "0.01%", 0.000091: "0.0091%", 0.25: "25%", 0: "0%", 0.009989: "0.999%", 0.057: "5.7%"} {
		if got := share(x); got != want {
			t.Errorf("share(%v) = %q, want %q", x, got, want)
		}
	}
}

// A host table cut to the worst says by what: 429s when there were any,
// attempts when no host answered 429.
func TestShownHostsSayByWhat(t *testing.T) {
	r := &metrics.Results{}
	for i := range 30 {
		r.Upstreams = append(r.Upstreams, metrics.UpstreamStats{Host: fmt.Sprintf("h%d", i), Attempts: int64(i)})
	}
	if got := hostsNote(r); !strings.Contains(got, "most attempts (none answered 429)") {
		t.Errorf("no 429s: %q", got)
	}
	r.Upstreams[3].Throttled = 5
	if got := hostsNote(r); !strings.Contains(got, "with the most 429s") {
		t.Errorf("429s: %q", got)
	}
}

// With several replications a comparison's table gives means and each
// headline one run: the headline says which; with one, the name alone.
func TestHeadlineOfSaysWhichRun(t *testing.T) {
	r := &metrics.Results{Seed: 7}
	if got := HeadlineOf("fifo", r, 5); got != "fifo, its run on seed 7" {
		t.Errorf("5 replications: %q", got)
	}
	if got := HeadlineOf("fifo", r, 1); got != "fifo" {
		t.Errorf("1 replication: %q", got)
	}
}

// A quota's name keeps the scenario's numbers in metrics.json, where it is
// selected by; prose gives them as people read them.
func TestQuotaNameInProse(t *testing.T) {
	for in, want := range map[string]string{
		"token_bucket 2666.666667/s cost": "token_bucket 2,667/s cost",
		"token_bucket 8.333333/s":         "token_bucket 8.333/s",
		"fixed_window 5000/1h0m0s":        "fixed_window 5000/1h0m0s",
		"token_bucket 8/s":                "token_bucket 8/s",
	} {
		if got := quotaName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// The timeline's panels share one time range, whatever gaps a column has
// at its ends; an hourly quota's pauses without a 429 go on the top panel
// as a strip, with no panel of a flat zero.
func TestTimelinePanelsShareTheTimeAxis(t *testing.T) {
	r, s := simulateExample(t, "api-hourly-quota")
	if r.Requests.Responses429 != 0 {
		t.Fatalf("api-hourly-quota now meets 429s: the case is gone")
	}
	panels, _ := timelinePanels(r, s)
	if len(panels) != 2 {
		t.Fatalf("%d panels, want offered/goodput and the wait (no 429 panel)", len(panels))
	}
	for i, p := range panels[1:] {
		if p.X.Min != panels[0].X.Min || p.X.Max != panels[0].X.Max {
			t.Errorf("panel %d spans %v..%v, the top one %v..%v", i+1, p.X.Min, p.X.Max, panels[0].X.Min, panels[0].X.Max)
		}
	}
	if panels[0].X.Label.Text != "" || panels[1].X.Label.Text != "time (min)" {
		t.Errorf("time labels %q, %q: want one, in minutes, under the last panel", panels[0].X.Label.Text, panels[1].X.Label.Text)
	}
}
