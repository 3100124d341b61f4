package report

import (
	"fmt"

	"github.com/limitsim/limitsim/report/metrics"
)

// stormBudget is the retry budget the retry_storm fix sets: retries add
// at most a tenth to the load, the share Finagle's and Envoy's retry
// budgets default to.
const stormBudget = 0.1

// retryStorm: goodput stayed collapsed after the scenario's trigger
// ended, offered load unchanged, retries an elevated share of the
// attempts (metrics.Storm), in this run or in any of its replications.
// What sustains it is the retries: without a budget every refused or
// abandoned attempt comes back, and the attempts keep the upstream past
// its capacity once the trigger is gone. The fix caps the retries with a
// budget.
func retryStorm(a *analysis) {
	r := a.r
	st := r.Storm
	share, _ := metrics.StormShareOf(r)
	if st == nil || share == 0 {
		return
	}
	d := metrics.Diagnosis{Code: "retry_storm", Severity: "critical", Title: "Retry storm: the failure outlives its trigger (metastable)"}
	d.Evidence = fmt.Sprintf("goodput %s/s before the trigger (%ss–%ss), %s/s from %ss on with the offered load unchanged (%s/s against %s/s); %.0f%% of the attempts after it are retries",
		human(st.GoodputBefore, 3), human(st.TriggerStartS, 4), human(st.TriggerEndS, 4), human(st.GoodputAfter, 3),
		human(st.TriggerEndS+st.SettleS, 4), human(st.OfferedAfter, 3), human(st.OfferedBefore, 3), 100*st.RetryShareAfter)
	if rp := r.Replications; rp != nil {
		d.Evidence += fmt.Sprintf(", in %.0f of %d replications", share*float64(rp.N), rp.N)
		if !st.Detected {
			d.Evidence = fmt.Sprintf("in %.0f of %d replications goodput stayed below half its level after the trigger ended, offered load unchanged, retries elevated", share*float64(rp.N), rp.N)
		}
	}
	perArrival := metrics.Ratio(float64(r.Requests.Attempts), float64(r.Requests.Arrived))
	d.Cause = fmt.Sprintf("retries without a budget (client.retry.budget unset): %s attempts per request over the run; once the trigger overloaded the upstream, each refused or abandoned attempt came back, and the retries keep it past its capacity after the trigger is gone", human(perArrival, 3))
	if r.Requests.RetriesDenied > 0 {
		d.Cause = fmt.Sprintf("the retry policy lets retries through (%s attempts per request over the run, %d retries refused): once the trigger overloaded the upstream, the retries keep it past its capacity after the trigger is gone", human(perArrival, 3), r.Requests.RetriesDenied)
	}
	if r.RequestTimeoutS > 0 {
		d.Cause += fmt.Sprintf("; a request timeout of %ss abandons attempts the upstream still works on", human(r.RequestTimeoutS, 3))
	}
	d.Fix.Text = fmt.Sprintf("cap the retries with a retry budget (client.retry.budget = %g: retries add at most %.0f%% to the load), so that the attempts fall back below the upstream's capacity when the trigger ends", stormBudget, 100*stormBudget)
	d.Fix.Set = map[string]any{"client.retry.budget": stormBudget}
	a.add(d)
}
