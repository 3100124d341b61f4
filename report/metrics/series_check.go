package metrics

import (
	"fmt"
	"math"
)

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
		add("limiter "+l.Name, false, l.Name+limitColumnSuffix)
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
		for _, suffix := range tenantColumnSuffixes {
			add("tenant "+t.Name, false, t.Name+suffix)
		}
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

// CheckRows reports whether the rows of s, a timeseries.csv as read,
// span the run r (its metrics.json) describes. Row k ends interval k+1:
// at (k+1) × interval_s, with none missing from the start. The recorder
// closes an interval while the run goes on, and stops within one of its
// end: past elapsed_s by less than an interval for a run that ended, at
// most an interval short of it for one a signal stopped. A series cut
// short (head), begun late (tail), or of a run of another length or
// interval fails, naming the line or the row that is wrong.
func CheckRows(r *Results, s *Series) error {
	iv := r.IntervalS
	eps := 1e-6 * iv
	var err error
	last, rows := 0.0, 0
	s.ScanNamed(0, []string{"t_s"}, func(i int, t []float64) bool {
		if want := float64(i+1) * iv; math.Abs(t[0]-want) > eps {
			err = fmt.Errorf("line %d, column t_s: %g, where the run's row %d ends its interval at %g (interval_s %g in metrics.json): rows are missing, or the files are not of one run",
				i+2, t[0], i+1, want, iv)
			return false
		}
		last, rows = t[0], i+1
		return true
	})
	switch {
	case err != nil:
		return err
	case last < r.ElapsedS-iv-eps:
		return fmt.Errorf("the last row (line %d) ends at t=%gs, short by more than an interval (%gs) of the run's %gs (elapsed_s in metrics.json): the series is cut short, or the files are not of one run",
			rows+1, last, iv, r.ElapsedS)
	case last > r.ElapsedS+iv+eps:
		return fmt.Errorf("the last row (line %d) ends at t=%gs, past the run's %gs (elapsed_s in metrics.json) by more than an interval (%gs): the files are not of one run",
			rows+1, last, r.ElapsedS, iv)
	}
	return nil
}
