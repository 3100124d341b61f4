package report

import (
	"fmt"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// refusals: requests refused at once by a full waiting line (the client's
// bound on waiting requests, a full ingest queue, a limiter's
// max_waiting). That is the excess of demand over what the limits admit,
// shed on purpose as a bound should, and worth knowing; a run in which
// next to nothing gets through admits nothing, which is critical.
func refusals(a *analysis) {
	r := a.r
	q := r.Requests
	share := metrics.Ratio(float64(q.Rejected), float64(q.Arrived))
	if q.Rejected < 10 || share < refusedAlert || r.Throughput.WindowS <= 0 {
		return // too few to matter, or no steady state to read goodput in
	}
	t := r.Throughput
	d := metrics.Diagnosis{Code: "refusals", Severity: "warning", Title: "Load shed: requests refused at once",
		Evidence: fmt.Sprintf("%s requests (%.0f%%) refused at once: %s; goodput %s/s of %s/s offered",
			Grouped(q.Rejected), 100*share, strings.Join(refusedWhere(r), ", "), human(t.GoodputRPS, 4), human(t.OfferedRPS, 4)),
		Cause: "demand exceeds what the limits admit: the full waiting lines refuse the excess at once, as a bound should; the cost of holding the limit, not a failure of it",
		Fix:   metrics.Fix{Text: fmt.Sprintf("lower the offered load (%s/s) or raise the binding limit if the upstream allows", human(t.OfferedRPS, 4))}}
	if t.GoodputRPS <= 0.01*t.OfferedRPS {
		d.Severity, d.Title = "critical", "Next to nothing gets through: the requests are refused"
		d.Cause = "the limits admit next to nothing: a rate, permit count or bound set far below the demand, or to nothing at all"
		d.Fix.Text = "check the limiters' rates, permits and bounds (max_waiting) against the offered load"
	}
	a.add(d)
}

// refusedWhere names where r's requests were refused, with how many:
// the ingest bound or queue, then each limiter that refused.
func refusedWhere(r *metrics.Results) []string {
	var out []string
	if n := r.Requests.RejectedIngest; n > 0 {
		where := "by the client's bound on waiting requests (client.max_waiting)"
		if r.Queue.Kind == "queue" {
			where = "by the full ingest queue"
		}
		out = append(out, Grouped(n)+" "+where)
	}
	for _, l := range r.Limiters {
		if l.Rejected > 0 {
			out = append(out, fmt.Sprintf("%s by %s's full waiting line", Grouped(l.Rejected), l.Name))
		}
	}
	return out
}
