package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// sharedQuotaExhausted is quotaExhausted for a quota several hosts count
// together ([[quota]]): the hosts it counts are paused for its reset
// through much of the run (one paused is enough: the quota is out for
// all of them) because together they are offered more than it admits,
// though each host alone may be under its own quotas. The fix holds the
// client's global rate limiter to the shared quota when every request
// takes that limiter and the quota counts every host; otherwise it says
// what to do.
func sharedQuotaExhausted(a *analysis) {
	r := a.r
	if a.has("sustained_429") || a.has("token_limit_binds") {
		return
	}
	var attempts int64
	for _, u := range r.Upstreams {
		attempts += u.Attempts
	}
	for _, q := range r.Quotas {
		if q.QuotaRPS == nil || attempts == 0 {
			continue
		}
		var cols []string
		var its, pauses int64
		for _, h := range q.Upstreams {
			if u := hostStats(r, h); u != nil {
				cols, its, pauses = append(cols, h+".paused"), its+u.Attempts, pauses+u.Pauses
			}
		}
		if pauses == 0 || len(cols) == 0 {
			continue
		}
		n, p := 0, 0
		a.s.ScanNamed(a.from, cols, func(_ int, paused []float64) bool {
			n++
			for _, v := range paused {
				if v > 0 {
					p++
					break
				}
			}
			return true
		})
		quota := *q.QuotaRPS
		offered := r.Throughput.OfferedRPS * float64(its) / float64(attempts)
		if n == 0 || float64(p) < quotaExhaustedShare*float64(n) || offered <= quota {
			continue
		}
		a.add(sharedExhausted(r, q, 100*float64(p)/float64(n), offered, quota))
	}
}

// sharedExhausted is the diagnosis of shared quota q, exhausted with its
// hosts paused in pausedPct% of the steady state's intervals.
func sharedExhausted(r *metrics.Results, q metrics.SharedQuotaStats, pausedPct, offered, quota float64) metrics.Diagnosis {
	var throttled int64
	for _, h := range q.Upstreams {
		if u := hostStats(r, h); u != nil {
			throttled += u.Throttled
		}
	}
	d := metrics.Diagnosis{Code: "quota_exhausted", Severity: "warning", Title: "A quota shared by several hosts runs out before its reset",
		Evidence: fmt.Sprintf("quota %s, shared by %s: its hosts were paused for its reset in %.0f%% of the steady state's intervals: offered %s/s together against the quota's %s/s (%s per hour against %s); %s refused by it; %s requests timed out and %s were answered 429",
			q.Name, strings.Join(q.Upstreams, ", "), pausedPct, human(offered, 3), human(quota, 3), Grouped(int64(offered*3600)), Grouped(int64(quota*3600)),
			Grouped(q.Refused), Grouped(r.Requests.TimedOut), Grouped(throttled)),
		Cause: "demand above a quota that spans hosts, met by waiting for its reset: each host alone may fit its own quotas, but together they spend the shared one early and every host waits",
		Fix: metrics.Fix{Text: fmt.Sprintf("hold the requests to %s to the shared quota with one token bucket over them at the quota × 0.9 and an acquisition timeout, so the excess fails fast and the quota lasts the window; or lower the demand, or ask the provider for a higher quota",
			strings.Join(q.Upstreams, ", "))}}
	rl := rateLimiter(r)
	if rl == nil || rl.Scope != "global" || rl.Unit != "" || len(q.Upstreams) != len(r.Upstreams) {
		return d
	}
	for _, path := range r.Paths {
		if !slices.Contains(path.Limiters, rl.Name) {
			return d // not every request takes it
		}
	}
	target := quota * 0.9 / float64(max(1, r.Instances))
	split := ""
	if r.Instances > 1 {
		split = fmt.Sprintf(" ÷ %d instances", r.Instances)
	}
	d.Fix.Text = fmt.Sprintf("hold the client to the shared quota: set %s to %s/s (quota %s/s × 0.9%s) with an acquisition timeout, so the excess fails fast and the quota lasts the window; or lower the demand, or ask the provider for a higher quota",
		rl.Name, human(target, 3), human(quota, 3), split)
	d.Fix.Set = setRate(rl, target)
	return d
}
