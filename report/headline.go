package report

import (
	"fmt"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// Headline is what a reader needs first, in two lines: the run's state and
// findings, then the few numbers that matter — goodput against offered,
// the 429 rate, and the limiter that binds hardest. The text summary and
// both reports open with it.
func Headline(r *metrics.Results) [2]string {
	state := "healthy: no failure mode recognised"
	if n := len(r.Diagnoses); n > 0 {
		titles := make([]string, n)
		for i, d := range r.Diagnoses {
			titles[i] = d.Title
		}
		word := "findings"
		if n == 1 {
			word = "finding"
		}
		state = fmt.Sprintf("%d %s: %s", n, word, strings.Join(titles, "; "))
	}
	if !r.Complete {
		state = "INCOMPLETE (" + stopWords(r.Stop) + "); " + state
	}
	if noSteadyWindow(r) {
		return [2]string{state, fmt.Sprintf("no steady state: the run ended at %s, at or before the end of its %s warm-up", secs(r.ElapsedS), secs(r.WarmupS))}
	}
	t := r.Throughput
	nums := fmt.Sprintf("goodput %s/s of %s/s offered (%s), 429 rate %s", human(t.GoodputRPS, 4), human(t.OfferedRPS, 4),
		pct(metrics.Ratio(t.GoodputRPS, t.OfferedRPS)), pct(r.Rate429))
	if w, none := r.NoSteadyState(); none && w.NoArrivals() && !strings.HasPrefix(w.Text, "replication ") {
		return [2]string{state, fmt.Sprintf("no arrivals: no request arrived in the run's %s", secs(r.ElapsedS))}
	}
	if w, none := r.NoSteadyState(); none && !strings.HasPrefix(w.Text, "replication ") {
		// Arrivals ended by the warm-up's end: what follows is a backlog
		// draining, over a steady state that may be very short.
		nums = fmt.Sprintf("no arrivals in the steady state: goodput %s/s as the backlog drains over %s, 429 rate %s",
			human(t.GoodputRPS, 4), secs(t.WindowS), pct(r.Rate429))
	}
	return [2]string{state, nums + bindingText(r)}
}

// bindingText names the limiter that binds hardest, as its verdict reads
// it; without one, the limiters the verdicts call binding are named as
// they are: waited on at times, or near their limit with no wait yet, so
// the headline never says no limiter binds beside a verdict that says one
// does.
func bindingText(r *metrics.Results) string {
	if v, l, ok := bindingLimiter(r); ok {
		return fmt.Sprintf(", binding: %s (%s, utilisation %s%s)", l.Name, v.Verdict, pct(l.UtilisationMax), overFull(l.UtilisationMax))
	}
	var waits, near []string
	for _, l := range r.Limiters {
		if v := verdictFor(r, l.Name); v.Verdict == verdictBinding {
			named := fmt.Sprintf("%s (utilisation %s)", l.Name, pct(l.UtilisationMax))
			if l.PWait > 0 {
				waits = append(waits, named)
			} else {
				near = append(near, named)
			}
		}
	}
	switch {
	case len(waits) > 0 && len(near) > 0:
		return fmt.Sprintf(", binding at times: %s; near its limit, no wait yet: %s", strings.Join(waits, ", "), strings.Join(near, ", "))
	case len(waits) > 0:
		return fmt.Sprintf(", binding at times, none near its limit: %s", strings.Join(waits, ", "))
	case len(near) > 0:
		return fmt.Sprintf(", near its limit, no wait yet: %s", strings.Join(near, ", "))
	case len(r.Limiters) > 0:
		return ", no limiter binds"
	}
	return ""
}

// bindingRank orders the verdicts that bind, the hardest highest: a limiter
// in a deadlock, then a limit
// above the real one (the upstream binds through it), then one pinned at
// its limit, then the bottleneck, then plain binding.
var bindingRank = map[string]int{verdictDeadlocked: 5, verdictTooHigh: 4, verdictOverQuota: 3, verdictOverPermit: 3, verdictBottleneck: 2, verdictBinding: 1}

// bindingLimiter is the limiter that binds hardest: the highest
// bindingRank, then the most used (by its busiest scope). A plain
// "binding" counts only used at least 80% and waited on (a limiter waited
// on only in bursts, or not yet at all, does not set the pace).
func bindingLimiter(r *metrics.Results) (metrics.Verdict, metrics.LimiterStats, bool) {
	var bv metrics.Verdict
	var bl metrics.LimiterStats
	found := false
	for _, l := range r.Limiters {
		v := verdictFor(r, l.Name)
		rank := bindingRank[v.Verdict]
		if rank == 0 || (v.Verdict == verdictBinding && (l.UtilisationMax < nearLimit || l.PWait == 0)) {
			continue
		}
		if best := bindingRank[bv.Verdict]; !found || rank > best || (rank == best && l.UtilisationMax > bl.UtilisationMax) {
			bv, bl, found = v, l, true
		}
	}
	return bv, bl, found
}

// overFull explains a utilisation over 100%, empty otherwise: a bucket
// or window admits its burst on top of its rate, so over the steady state
// it can grant more than its rate × the window (a bucket full at the
// warm-up's end spends it).
func overFull(u float64) string {
	if u < 1.0005 { // prints as 100.0% or less
		return ""
	}
	return ": over 100% because a bucket or window admits its burst on top of its rate"
}

// stopWords names why a run stopped early.
func stopWords(s metrics.Stop) string {
	switch s.Kind {
	case metrics.Deadlocked:
		return "deadlocked"
	case metrics.Stalled:
		return "stalled"
	case metrics.GuardTripped:
		return "stopped by guard " + s.Guard
	case metrics.Interrupted:
		return "interrupted"
	}
	return s.Text
}
