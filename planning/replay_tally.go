package planning

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// tally counts a replay per minute (of the arrival's logged time), per
// tenant and over the whole log: production's figures from the records,
// the replay's from the client's requests. Its memory grows with the
// log's span in minutes and its tenants, never with its records: each
// row holds two sketches of a few kilobytes.
type tally struct {
	origin  int64 // Unix ns of the run's instant 0
	minutes map[int64]*tallyRow
	tenants []*tallyRow
	names   []string
	named   bool // the log names tenants: the comparison has a row each
	total   tallyRow
}

// tallyRow is one row's counts.
type tallyRow struct {
	requests, throttled     int64
	remainingMin            int64              // the least remaining header logged; -1: none
	latency                 *metrics.CountHist // production's, µs
	sent, delayed           int64
	delay                   *metrics.CountHist // the replay's, µs
	delaySum, delayMax      time.Duration
	rejected, refusals      int64
	succeeded, throttledEnd int64
	otherFailures           int64
}

var _ client.Observer = (*tally)(nil)

func newTally(origin int64, tenants []client.Tenant) *tally {
	t := &tally{origin: origin, minutes: map[int64]*tallyRow{}, total: tallyRow{remainingMin: -1}}
	for _, tn := range tenants {
		t.names = append(t.names, tn.Name)
	}
	t.tenants = make([]*tallyRow, len(tenants))
	return t
}

// rows calls fn with the rows an event of minute (Unix minutes) and
// tenant counts in.
func (t *tally) rows(minute int64, tenant int, fn func(*tallyRow)) {
	m := t.minutes[minute]
	if m == nil {
		m = &tallyRow{remainingMin: -1}
		t.minutes[minute] = m
	}
	fn(m)
	if tenant < len(t.tenants) {
		if t.tenants[tenant] == nil {
			t.tenants[tenant] = &tallyRow{remainingMin: -1}
		}
		fn(t.tenants[tenant])
	}
	fn(&t.total)
}

// minuteOf is the Unix minute of the run's instant at.
func (t *tally) minuteOf(at time.Duration) int64 { return (t.origin + int64(at)) / int64(time.Minute) }

// production counts a record as production saw it.
func (t *tally) production(rec *logs.Record, tenant int) {
	t.rows(rec.Time/int64(time.Minute), tenant, func(r *tallyRow) {
		r.requests++
		if rec.Throttled() {
			r.throttled++
		}
		if rec.Remaining >= 0 && (r.remainingMin < 0 || rec.Remaining < r.remainingMin) {
			r.remainingMin = rec.Remaining
		}
		if rec.HasLatency {
			if r.latency == nil {
				r.latency = metrics.NewCountHist()
			}
			r.latency.Add(rec.Latency.Microseconds())
		}
	})
}

// Sent counts a request's first send and its delay.
func (t *tally) Sent(now, arrived time.Duration, tenant int) {
	d := now - arrived
	t.rows(t.minuteOf(arrived), tenant, func(r *tallyRow) {
		r.sent++
		if d > 0 {
			r.delayed++
		}
		if r.delay == nil {
			r.delay = metrics.NewCountHist()
		}
		r.delay.Add(d.Microseconds())
		r.delaySum += d
		r.delayMax = max(r.delayMax, d)
	})
}

// Refused counts an upstream refusal.
func (t *tally) Refused(arrived time.Duration, tenant, _ int) {
	t.rows(t.minuteOf(arrived), tenant, func(r *tallyRow) { r.refusals++ })
}

// Ended counts how a request ended.
func (t *tally) Ended(_, arrived time.Duration, tenant int, o metrics.RequestEnd) {
	t.rows(t.minuteOf(arrived), tenant, func(r *tallyRow) {
		switch o {
		case metrics.Succeeded:
			r.succeeded++
		case metrics.Throttled:
			r.throttledEnd++
		case metrics.RejectedIngest, metrics.RejectedLimiter, metrics.AcquireTimeout:
			r.rejected++
		default:
			r.otherFailures++
		}
	})
}

// mostDifferent is how many minutes a comparison calls out.
const mostDifferent = 5

// comparison is the tally as a report: every minute in order, the
// tenants by requests (most first, then by name), and the minutes that
// differ most.
func (t *tally) comparison() *report.ReplayComparison {
	c := &report.ReplayComparison{Total: t.total.row()}
	for _, m := range slices.Sorted(maps.Keys(t.minutes)) {
		r := t.minutes[m].row()
		r.Minute = time.Unix(m*60, 0).UTC().Format(time.RFC3339)
		c.Minutes = append(c.Minutes, r)
	}
	for i, tr := range t.tenants {
		if tr != nil && t.named {
			r := tr.row()
			r.Tenant = t.names[i]
			c.Tenants = append(c.Tenants, r)
		}
	}
	slices.SortStableFunc(c.Tenants, func(a, b report.ReplayRow) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Tenant, b.Tenant))
	})
	order := slices.Clone(c.Minutes)
	slices.SortStableFunc(order, func(a, b report.ReplayRow) int {
		return cmp.Or(cmp.Compare(b.Difference, a.Difference), cmp.Compare(b.DelayP99S, a.DelayP99S))
	})
	for _, r := range order[:min(mostDifferent, len(order))] {
		if r.Difference > 0 || r.DelayP99S > 0 {
			c.MostDifferent = append(c.MostDifferent, r.Minute)
		}
	}
	return c
}

// row is the counts as a report row.
func (r *tallyRow) row() report.ReplayRow {
	us := func(h *metrics.CountHist, q float64) float64 {
		if h == nil {
			return 0
		}
		return float64(h.Quantile(q)) / 1e6
	}
	out := report.ReplayRow{Requests: r.requests, ProductionThrottled: r.throttled,
		ProductionLatencyP50S: us(r.latency, 0.5), ProductionLatencyP99S: us(r.latency, 0.99),
		Sent: r.sent, Delayed: r.delayed, DelayP50S: us(r.delay, 0.5), DelayP99S: us(r.delay, 0.99),
		DelayMaxS: r.delayMax.Seconds(), Rejected: r.rejected, Refusals: r.refusals,
		Succeeded: r.succeeded, Throttled: r.throttledEnd, OtherFailure: r.otherFailures}
	if r.remainingMin >= 0 {
		out.ProductionRemainingMin = &r.remainingMin
	}
	if r.sent > 0 {
		out.DelayMeanS = r.delaySum.Seconds() / float64(r.sent)
	}
	out.Avoided = r.throttled - (r.rejected + r.throttledEnd + r.otherFailures)
	out.Difference = max(out.Avoided, -out.Avoided)
	return out
}
