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
	d.Cause = stormCause(r)
	d.Fix.Text = fmt.Sprintf("cap the retries with a retry budget (client.retry.budget = %g: retries add at most %.0f%% to the load), so that the attempts fall back below the upstream's capacity when the trigger ends", stormBudget, 100*stormBudget)
	d.Fix.Set = map[string]any{"client.retry.budget": stormBudget}
	a.add(d)
}

// stormCause names the retry settings that sustain r's storm: retries
// without a budget (or a policy that lets them through), and a timeout
// shorter than the trigger's latency that abandons attempts the upstream
// still works on.
func stormCause(r *metrics.Results) string {
	q, st := r.Requests, r.Storm
	perArrival := metrics.Ratio(float64(q.Attempts), float64(q.Arrived))
	cause := fmt.Sprintf("retries without a budget (client.retry.budget unset): %s attempts per request over the run", human(perArrival, 3))
	if q.RetriesDenied > 0 {
		cause = fmt.Sprintf("the retry policy lets retries through: %s attempts per request over the run, %s retries refused", human(perArrival, 3), Grouped(q.RetriesDenied))
	}
	spike := ""
	if st.TriggerLatencyS > 0 {
		spike = fmt.Sprintf(", shorter than the slowdown's mean latency of %ss,", human(st.TriggerLatencyS, 3))
	}
	switch {
	case r.AttemptTimeoutS > 0 && q.AttemptsTimedOut > 0:
		cause += fmt.Sprintf("; an attempt timeout of %ss (client.retry.attempt_timeout)%s abandoned %s attempts the upstream still worked on, and retried them", human(r.AttemptTimeoutS, 3), spike, Grouped(q.AttemptsTimedOut))
	case r.RequestTimeoutS > 0 && r.RequestTimeoutS < st.TriggerLatencyS:
		cause += fmt.Sprintf("; a request timeout of %ss%s abandons attempts the upstream still works on", human(r.RequestTimeoutS, 3), spike)
	}
	return cause + ": once the trigger overloaded the upstream, the retries keep it past its capacity after the trigger is gone, so new requests fail too"
}

// stormInRun reports whether r itself is in a retry storm (not only some
// of its replications): its timeouts and its growing line are the storm's
// doing, and retry_storm names their cause and fix.
func stormInRun(r *metrics.Results) bool { return r.Storm != nil && r.Storm.Detected }
