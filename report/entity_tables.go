package report

// The tables of client instances, tenants and hosts that every format of
// a run report shares, cut to the worst when there are many.

import (
	"cmp"
	"fmt"

	"github.com/limitsim/limitsim/report/metrics"
)

// instanceHeader and instanceRows are the per-instance table of every
// format: all instances up to maxTenantRows, otherwise those that waited
// longest on average.
func instanceHeader() []string {
	return []string{"instance", "share of work", "arrived", "succeeded", "final 429", "attempts", "mean wait"}
}

func instanceRows(r *metrics.Results) [][]string {
	shown := metrics.Worst(r.PerInstance, maxTenantRows, func(a, b metrics.InstanceStats) int { return cmp.Compare(b.MeanWaitS, a.MeanWaitS) })
	var rows [][]string
	for _, s := range shown {
		rows = append(rows, []string{fmt.Sprint(s.Instance), pct(s.Weight), Grouped(s.Arrived), Grouped(s.Succeeded),
			Grouped(s.Throttled429), Grouped(s.Attempts), secs(s.MeanWaitS)})
	}
	return rows
}

// tenantHeader and tenantRows are the tenants table of both reports.
func tenantHeader() []string {
	return []string{"tenant", "arrived", "succeeded", "arrival share", "admitted share", "success rate", "wait p50", "wait p99"}
}

func tenantRows(r *metrics.Results) [][]string {
	var rows [][]string
	shown, _ := worstTenants(r.Tenants, maxTenantRows, byWait)
	for _, t := range shown {
		rows = append(rows, []string{t.Name, Grouped(t.Arrived), Grouped(t.Succeeded), share(t.ArrivalShare),
			share(t.Share), pct(t.SuccessRate), secs(t.WaitS.P50), secs(t.WaitS.P99)})
	}
	return rows
}

// maxTenantRows is how many tenants the reports' tables and charts show; a
// run with more shows the worst of them and says how the rest spread.
const maxTenantRows = 20

// byWait ranks tenants by p99 wait, longest first (metrics.ByWait);
// byUnderServed ranks them by how far their share of the successes falls
// below their share of the arrivals.
var byWait = metrics.ByWait

func byUnderServed(a, b metrics.TenantStats) int {
	return cmp.Compare(b.ArrivalShare-b.Share, a.ArrivalShare-a.Share)
}

// worstTenants returns the tenants to show: all of them, in the scenario's
// order, when there are at most n; otherwise the n first by rank (ties in
// the scenario's order) and how many were left out.
func worstTenants(ts []metrics.TenantStats, n int, rank func(a, b metrics.TenantStats) int) (shown []metrics.TenantStats, omitted int) {
	shown = metrics.Worst(ts, n, rank)
	return shown, len(ts) - len(shown)
}

// hostsNote says, under an upstream table cut to the hosts with the most
// 429s, how many there are and where the others are.
func hostsNote(r *metrics.Results) string {
	shown := metrics.ShownHosts(r)
	if len(shown) == len(r.Upstreams) {
		return ""
	}
	return fmt.Sprintf("%s of %s; every host is in metrics.json (upstreams[]).", shownHostsWhich(r, shown), Grouped(int64(len(r.Upstreams))))
}

// shownHostsWhich says which hosts a table or chart cut to the worst
// shows: those with the most 429s, or, when none answered 429, those
// with the most attempts.
func shownHostsWhich(r *metrics.Results, shown []metrics.UpstreamStats) string {
	for _, u := range r.Upstreams {
		if u.Throttled > 0 {
			return fmt.Sprintf("The %d hosts with the most 429s", len(shown))
		}
	}
	return fmt.Sprintf("The %d hosts with the most attempts (none answered 429)", len(shown))
}

// tenantsNote says, under a table cut to the worst tenants, how many were
// left out and how all of them spread.
func tenantsNote(r *metrics.Results) string {
	_, omitted := worstTenants(r.Tenants, maxTenantRows, byWait)
	if omitted == 0 {
		return ""
	}
	lo, hi := r.Tenants[0], r.Tenants[0]
	minP99, maxP99 := r.Tenants[0].WaitS.P99, r.Tenants[0].WaitS.P99
	for _, t := range r.Tenants {
		if t.SuccessRate < lo.SuccessRate {
			lo = t
		}
		if t.SuccessRate > hi.SuccessRate {
			hi = t
		}
		minP99, maxP99 = min(minP99, t.WaitS.P99), max(maxP99, t.WaitS.P99)
	}
	return fmt.Sprintf("The %d tenants with the longest p99 wait of %s; the other %s are in tenants.csv. Over all tenants: success rate %s to %s, p99 wait %s to %s.",
		maxTenantRows, Grouped(int64(len(r.Tenants))), Grouped(int64(omitted)), pct(lo.SuccessRate), pct(hi.SuccessRate), secs(minP99), secs(maxP99))
}
