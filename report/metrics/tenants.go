package metrics

import (
	"time"

	"github.com/limitsim/limitsim/internal/prefetch"
)

// tenantSet is what the tenants keep, for fairness: each tenant's
// arrivals, successes and waits, and its counts in the interval when the
// tenants are in the time series. It fills the tenants of metrics.json and
// each tenant's columns of timeseries.csv.
type tenantSet struct {
	names     []string
	warmup    time.Duration
	sketches  *sketchMapping // sharedSketchMapping(): the mapping of the tenants' sketches
	records   []tenantRecord
	intervals []tenantInterval // by tenant, when the tenants are in the time series; nil otherwise
}

// tenantRecord is what a tenant keeps, in one cache line: ten thousand
// tenants are each reached at random, on arrival and at the end.
type tenantRecord struct {
	arrived, succeeded int64
	wait               sketch
}

// tenantInterval is a tenant's counts in the interval Tick closes next.
type tenantInterval struct{ arrived, succeeded int64 }

// tenantsInSeries reports whether a run's rows carry per-tenant columns:
// with 2 to MaxListed tenants (beyond, tenants.csv has each one's totals).
func tenantsInSeries(layout Layout) bool {
	return len(layout.Tenants) >= 2 && len(layout.Tenants) <= MaxListed
}

func newTenantSet(layout Layout, sketches *sketchMapping) tenantSet {
	s := tenantSet{names: layout.Tenants, warmup: layout.Warmup, sketches: sketches,
		records: make([]tenantRecord, len(layout.Tenants))}
	if tenantsInSeries(layout) {
		s.intervals = make([]tenantInterval, len(layout.Tenants))
	}
	return s
}

// PrefetchTenant asks for the record of tenant, ahead of its next
// arrival, when there are several.
func (r *Recorder) PrefetchTenant(tenant int) { r.tenants.prefetch(tenant) }

// prefetch asks for tenant's record when there are several.
func (s *tenantSet) prefetch(tenant int) {
	if len(s.records) > 1 {
		prefetch.Of(&s.records[tenant])
	}
}

// arrived counts an arrival of tenant.
func (s *tenantSet) arrived(tenant int) {
	s.records[tenant].arrived++
	if s.intervals != nil {
		s.intervals[tenant].arrived++
	}
}

// succeeded counts a success of tenant.
func (s *tenantSet) succeeded(tenant int) {
	s.records[tenant].succeeded++
	if s.intervals != nil {
		s.intervals[tenant].succeeded++
	}
}

// ended records the time a request of tenant that arrived at since and
// ended as o spent waiting on limiters: for a request that passed ingest
// and arrived in the steady state, when there are several tenants (only
// then are they reported).
func (s *tenantSet) ended(since time.Duration, tenant int, o RequestEnd, waited time.Duration) {
	if len(s.records) > 1 && o != RejectedIngest && since >= s.warmup {
		s.records[tenant].wait.add(waited, s.sketches)
	}
}

// appendColumns appends the names of each tenant's columns, when the
// tenants are in the time series.
func (s *tenantSet) appendColumns(columns []string) []string {
	if s.intervals == nil {
		return columns
	}
	for _, tenant := range s.names {
		for _, suffix := range tenantColumnSuffixes {
			columns = append(columns, tenant+suffix)
		}
	}
	return columns
}

// tenantColumnSuffixes are the suffixes of a tenant's columns in
// timeseries.csv, in order.
var tenantColumnSuffixes = []string{".arrivals", ".succeeded"}

// appendInterval appends each tenant's counts in the interval to row and
// starts the next interval at zero.
func (s *tenantSet) appendInterval(row []float64) []float64 {
	for i := range s.intervals {
		counts := &s.intervals[i]
		row = append(row, float64(counts.arrived), float64(counts.succeeded))
		*counts = tenantInterval{}
	}
	return row
}

// results adds the tenants' figures to out, when there are several.
func (s *tenantSet) results(out *Results) {
	if len(s.names) > 1 {
		out.Tenants, out.TenantJain = s.stats()
		out.TenantsTotal = len(out.Tenants)
	}
}

// stats returns each tenant's figures and Jain's index over their
// success rates.
func (s *tenantSet) stats() ([]TenantStats, *float64) {
	var arrived, succeeded int64
	for _, t := range s.records {
		arrived += t.arrived
		succeeded += t.succeeded
	}
	out := make([]TenantStats, 0, len(s.names))
	waits := dists(len(s.names), func(i int) Dist { return s.records[i].wait.dist(s.sketches) })
	var sum, sumOfSquares float64
	for i, name := range s.names {
		t := &s.records[i]
		rate := Ratio(float64(t.succeeded), float64(t.arrived))
		sum += rate
		sumOfSquares += rate * rate
		out = append(out, TenantStats{Name: name, Arrived: t.arrived, Succeeded: t.succeeded,
			ArrivalShare: Ratio(float64(t.arrived), float64(arrived)), Share: Ratio(float64(t.succeeded), float64(succeeded)),
			SuccessRate: rate, WaitS: waits[i]})
	}
	jain := Ratio(sum*sum, float64(len(out))*sumOfSquares)
	return out, &jain
}
