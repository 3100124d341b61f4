package metrics

import "fmt"

// limiterColumnSuffixes are the suffixes of a limiter's columns in
// timeseries.csv (see limiterSet.appendColumns); an adaptive one has
// NAME.limit too.
var limiterColumnSuffixes = []string{".waiting", ".usage", ".acquired", ".utilisation", ".wait_p50_s", ".wait_p95_s", ".wait_p99_s"}

// seriesColumn is a column a run's timeseries.csv may hold: whose it is
// ("" for a run-wide one) and whether every such file holds it.
type seriesColumn struct {
	name, owner string
	required    bool
}

// columnsOf are the columns of the timeseries.csv of r, in order: the
// run-wide ones, each limiter's, each host's (required for those
// ListedColumns keeps, but quota_utilisation, which only a host with a
// quota has) and each tenant's (held with 2 to MaxListed tenants).
func columnsOf(r *Results) []seriesColumn {
	var out []seriesColumn
	add := func(owner string, required bool, names ...string) {
		for _, n := range names {
			out = append(out, seriesColumn{n, owner, required})
		}
	}
	add("", true, "t_s")
	add("", true, requestCountColumns...)
	add("", true, requestStageColumns...)
	add("", true, requestTimeColumns...)
	for _, l := range r.Limiters {
		for _, suffix := range limiterColumnSuffixes {
			add("limiter "+l.Name, true, l.Name+suffix)
		}
		add("limiter "+l.Name, false, l.Name+".limit")
	}
	listed := map[string]bool{}
	for _, u := range ShownHosts(r) {
		listed[u.Host] = true
	}
	for _, u := range r.Upstreams {
		for _, suffix := range hostColumnSuffixes {
			required := suffix != ".quota_utilisation" && (listed[u.Host] || len(r.Upstreams) <= MaxListed)
			add("host "+u.Host, required, u.Host+suffix)
		}
	}
	for _, t := range r.Tenants {
		add("tenant "+t.Name, false, t.Name+".arrivals", t.Name+".succeeded")
	}
	return out
}

// CheckColumns reports whether columns, the header of a timeseries.csv,
// are those of the run r (its metrics.json) describes: every column of
// the run's and of its limiters' and hosts', and none of a limiter, host
// or tenant r does not have. A series of another run (another scenario,
// or a metrics.json edited) fails, naming the first column missing or
// unknown.
func CheckColumns(r *Results, columns []string) error {
	want := columnsOf(r)
	held := make(map[string]bool, len(columns))
	for _, n := range columns {
		held[n] = true
	}
	known := make(map[string]bool, len(want))
	for _, c := range want {
		known[c.name] = true
		if !c.required || held[c.name] {
			continue
		}
		if c.owner == "" {
			return fmt.Errorf("no column %s: not a limitsim timeseries.csv", c.name)
		}
		return fmt.Errorf("no column %s, which the %s of metrics.json has: the two files are not of one run", c.name, c.owner)
	}
	for _, n := range columns {
		if !known[n] {
			return fmt.Errorf("column %s is of no limiter, host or tenant of metrics.json: the two files are not of one run", n)
		}
	}
	return nil
}
