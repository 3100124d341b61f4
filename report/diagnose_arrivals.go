package report

import "github.com/limitsim/limitsim/report/metrics"

// noArrivals: no request arrived in the run (or in one of its
// replications), so it measured nothing. The workload is the user's to
// choose: the fix says what would give it requests, and sets nothing, so
// no fix is verified for it.
func noArrivals(a *analysis) {
	for _, w := range a.r.Warnings {
		if !w.NoArrivals() {
			continue
		}
		a.add(metrics.Diagnosis{Code: "no_arrivals", Severity: "warning", Title: "No arrivals: the workload offered no request",
			Evidence: w.Text, Cause: "the workload's arrivals over the run's horizon come to less than one request",
			Fix: metrics.Fix{Text: "raise workload.rate, or lengthen run.duration, until the run sees requests"}})
		return
	}
}
