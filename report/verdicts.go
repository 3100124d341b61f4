package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// alertWait is the article's alert line: a tenth of the request budget.
func alertWait(r *metrics.Results) float64 {
	if r.RequestTimeoutS > 0 {
		return r.RequestTimeoutS / 10
	}
	return 0
}

// Verdict words.
const (
	verdictNotBinding = "not binding"
	verdictBinding    = "binding"
	verdictBottleneck = "now the bottleneck"
	verdictOverQuota  = "demand exceeds quota"
	verdictOverPermit = "saturated: demand exceeds permits"
	verdictTooHigh    = "local limit set too high"
	verdictDeadlocked = "deadlocked"
	verdictUnmeasured = "unmeasured"
)

// Verdicts reads every limiter from the article's three numbers: its wait,
// its utilisation (the share of its capacity used; the article's
// saturation for a semaphore) and the run's 429 rate, read with r's
// diagnoses (429s only in a burst at the start do not make a limit too
// high).
func Verdicts(r *metrics.Results) []metrics.Verdict {
	out := []metrics.Verdict{}
	for _, l := range r.Limiters {
		out = append(out, verdict(r, l))
	}
	return out
}

func verdict(r *metrics.Results, l metrics.LimiterStats) metrics.Verdict {
	v := metrics.Verdict{Limiter: l.Name, WaitP99S: l.WaitS.P99, Saturation: l.Saturation,
		Utilisation: l.UtilisationMax, Rate429: r.Rate429}
	used := l.UtilisationMax // a scoped limiter binds where its busiest scope does
	usedText := fmt.Sprintf("utilisation %.0f%%", 100*used)
	if l.Scope != "global" {
		usedText = fmt.Sprintf("utilisation %.0f%% in its busiest %s (%.0f%% overall)", 100*used, l.Scope, 100*l.Utilisation)
	}
	alert := alertWait(r)
	switch {
	case slices.Contains(r.Stop.Cycle(), l.Name):
		v.Verdict = verdictDeadlocked
		v.Why = fmt.Sprintf("in the wait-for cycle %s: requests hold it while waiting for the next", strings.Join(r.Stop.Cycle(), " → "))
	case noSteadyWindow(r):
		v.Verdict = verdictUnmeasured
		v.Why = fmt.Sprintf("no steady state: the run ended at %s, at or before the end of its %s warm-up", secs(r.ElapsedS), secs(r.WarmupS))
	case !l.Releases && r.Rate429 > rate429Alert && !only429sAtStart(r):
		v.Verdict = verdictTooHigh
		v.Why = fmt.Sprintf("the upstream answers %.1f%% of attempts with 429: the real limit is below this one", 100*r.Rate429)
	case used >= pinned && l.Releases:
		v.Verdict = verdictOverPermit
		v.Why = fmt.Sprintf("%s: every permit is held nearly all the time", usedText)
	case used >= pinned:
		v.Verdict = verdictOverQuota
		v.Why = fmt.Sprintf("%s: pinned at the limit", usedText)
	case alert > 0 && l.WaitS.P99 > alert:
		v.Verdict = verdictBottleneck
		v.Why = fmt.Sprintf("p99 wait %s is over the alert line of %s (a tenth of the %s request budget)", secs(l.WaitS.P99), secs(alert), secs(r.RequestTimeoutS))
	case l.MeanWaiting >= 1 && l.WaitS.P99 <= notBindingWait:
		v.Verdict = verdictBottleneck
		v.Why = fmt.Sprintf("%s callers wait on average and the waits that ended were short: the line is not being served", human(l.MeanWaiting, 3))
	case refusedShare(l) >= refusedAlert && used < nearLimit:
		// Refusing rather than queueing, so far from its limit: what it
		// admits is far below what is asked (a bound of 0, a tiny rate).
		v.Verdict = verdictOverQuota
		if l.Releases {
			v.Verdict = verdictOverPermit
		}
		v.Why = fmt.Sprintf("it refused %s of %s acquisitions at once (its waiting line full): demand exceeds what it admits; %s",
			Grouped(l.Rejected), Grouped(l.Acquired+l.Rejected+l.Timeouts), usedText)
	case l.WaitS.P99 <= notBindingWait && used < nearLimit:
		v.Verdict = verdictNotBinding
		v.Why = fmt.Sprintf("p99 wait %s, %s", secs(l.WaitS.P99), usedText)
	case l.PWait > 0.5:
		v.Verdict = verdictBottleneck
		v.Why = fmt.Sprintf("%.0f%% of acquisitions wait (p99 %s); %s", 100*l.PWait, secs(l.WaitS.P99), usedText)
	case l.PWait == 0: // near its limit (see the case above) without a wait yet
		v.Verdict = verdictBinding
		more := "more load or a burst would wait"
		if l.Rejected+l.Timeouts > 0 { // it refuses rather than queues (max_waiting = 0, a deadline)
			more = fmt.Sprintf("it refused %s acquisitions at once, and would refuse more load", Grouped(l.Rejected+l.Timeouts))
		}
		v.Why = fmt.Sprintf("no acquisition waited, but %s is close to the limit (from %.0f%%): %s", usedText, 100*nearLimit, more)
	default:
		v.Verdict = verdictBinding
		v.Why = fmt.Sprintf("waits at times: %.0f%% of acquisitions, p99 %s; %s", 100*l.PWait, secs(l.WaitS.P99), usedText)
	}
	return v
}

// only429sAtStart reports whether r's 429s came in a burst at the start
// (burst_at_start) and not through the run (no sustained_429): then the
// rate limiter is not set too high, its full bucket spent at once is.
func only429sAtStart(r *metrics.Results) bool {
	return hasCode(r.Diagnoses, "burst_at_start") && !hasCode(r.Diagnoses, "sustained_429")
}

// refusedAlert is the share of a limiter's acquisitions refused at once
// from which it is read as binding, and the share of the requests refused
// at once from which the run is diagnosed with it (refusals).
const refusedAlert = 0.01

// refusedShare is the share of l's acquisitions it refused at once.
func refusedShare(l metrics.LimiterStats) float64 {
	return metrics.Ratio(float64(l.Rejected), float64(l.Acquired+l.Rejected+l.Timeouts))
}

// noSteadyWindow reports whether the run ended at or before the end of its
// warm-up, so that it has no steady state to read.
func noSteadyWindow(r *metrics.Results) bool { return r.WarmupS > 0 && r.ElapsedS <= r.WarmupS }
