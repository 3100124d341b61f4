package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/limitsim/limitsim/report/metrics"
)

// Thresholds of the readings, after the article's diagnostic hook.
const (
	notBindingWait = 0.001 // s: a p99 wait below this is "near zero"
	pinned         = 0.95  // utilisation this high is "pinned at the limit"
	nearLimit      = 0.8   // utilisation from which a limiter is close to binding
	rate429Alert   = 0.01  // a 429 rate above 1% means the local limit is too high
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
)

// Verdicts reads every limiter from the article's three numbers: its wait,
// its utilisation (the share of its capacity used; the article's
// saturation for a semaphore) and the run's 429 rate.
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
	case !l.Releases && r.Rate429 > rate429Alert:
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
		v.Why = fmt.Sprintf("%.3g callers wait on average and the waits that ended were short: the line is not being served", l.MeanWaiting)
	case l.WaitS.P99 <= notBindingWait && used < nearLimit:
		v.Verdict = verdictNotBinding
		v.Why = fmt.Sprintf("p99 wait %s, %s", secs(l.WaitS.P99), usedText)
	case l.PWait > 0.5:
		v.Verdict = verdictBottleneck
		v.Why = fmt.Sprintf("%.0f%% of acquisitions wait (p99 %s); %s", 100*l.PWait, secs(l.WaitS.P99), usedText)
	default:
		v.Verdict = verdictBinding
		v.Why = fmt.Sprintf("waits at times: %.0f%% of acquisitions, p99 %s; %s", 100*l.PWait, secs(l.WaitS.P99), usedText)
	}
	return v
}

// steadyStart returns the index of the first row after the warm-up.
func steadyStart(r *metrics.Results, s *metrics.Series) int {
	t := s.Column("t_s")
	for i, v := range t {
		if v-r.IntervalS >= r.WarmupS-1e-9 {
			return i
		}
	}
	return len(t)
}

// Analyze fills in the verdicts and diagnoses of r.
func Analyze(r *metrics.Results, s *metrics.Series) {
	r.Verdicts = Verdicts(r)
	r.Diagnoses = Diagnose(r, s)
	if r.Diagnoses == nil {
		r.Diagnoses = []metrics.Diagnosis{}
	}
}

// analysis is what every failure-mode detector reads, and the diagnoses
// found so far.
type analysis struct {
	r       *metrics.Results
	s       *metrics.Series
	rate429 float64   // share of all attempts answered 429
	from    int       // first steady-state row of the series
	th      []float64 // 429s per interval
	out     []metrics.Diagnosis
}

func (a *analysis) add(d metrics.Diagnosis) { a.out = append(a.out, d) }

func (a *analysis) has(code string) bool { return hasCode(a.out, code) }

// Diagnose recognises the failure modes of the article's table in a run,
// critical ones first.
func Diagnose(r *metrics.Results, s *metrics.Series) []metrics.Diagnosis {
	a := &analysis{r: r, s: s, rate429: r.Rate429, from: steadyStart(r, s), th: s.Column("responses_429")}
	for _, detect := range []func(*analysis){
		deadlock, sustained429, serialised, memoryGrowth, tenantStarvation, burstAtStart, thunderingHerd, acquisitionOrder,
	} {
		detect(a)
	}
	out := a.out
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity == "critical" && out[j].Severity != "critical" })
	return out
}

// deadlock: work parked on limiters with nothing left to wake it, a wait-for cycle when there is one.
func deadlock(a *analysis) {
	r := a.r
	if k := r.Stop.Kind; k == metrics.Stalled || k == metrics.Deadlocked {
		d := metrics.Diagnosis{Code: "deadlock", Severity: "critical", Title: "Deadlock between limiters",
			Evidence: r.Stop.Detail(),
			Cause:    "two limiters acquired in different orders by different paths",
			Fix:      "acquire in one global order: rate, then broad, then narrow"}
		if k != metrics.Deadlocked {
			d.Title, d.Cause = "Waiters nobody will wake", "requests parked on limiters with nothing left to release them"
			d.Fix = "add an acquisition timeout; check what releases these limiters"
		}
		a.add(d)
	}
}

// sustained429: 429s in at least a quarter of the steady-state intervals.
func sustained429(a *analysis) {
	r := a.r
	if a.rate429 > rate429Alert && len(a.th) > a.from {
		busy := 0
		for _, v := range a.th[a.from:] {
			if v > 0 {
				busy++
			}
		}
		if share := float64(busy) / float64(len(a.th)-a.from); share >= 0.25 {
			cause := "local rate set above the real quota"
			fix := "lower the local rate below the quota (quota × 0.9); treat a rising 429 rate as a configuration bug, not something to retry harder"
			if r.Instances > 1 {
				cause = fmt.Sprintf("%d instances share one quota, each configured as if it were alone", r.Instances)
				fix = fmt.Sprintf("divide the quota by the instance count (%d) and add a safety margin, or coordinate through a shared store", r.Instances)
			}
			a.add(metrics.Diagnosis{Code: "sustained_429", Severity: "critical", Title: "Sustained 429s despite a limiter",
				Evidence: fmt.Sprintf("%.1f%% of attempts answered 429, in %.0f%% of the steady-state intervals (%.3g per minute)", 100*a.rate429, 100*share, r.Throughput.Rate429RPS*60),
				Cause:    cause, Fix: fix})
		}
	}
}

// serialised: callers wait on a rate limiter that is mostly unused (the lock-held bucket).
func serialised(a *analysis) {
	r := a.r
	for _, l := range r.Limiters {
		if !l.Releases && l.MeanWaiting >= 1 && l.Utilisation < 0.5 && l.PWait > 0.5 {
			a.add(metrics.Diagnosis{Code: "serialised", Severity: "critical", Title: "Limiter " + l.Name + " serialises everything",
				Evidence: fmt.Sprintf("%.3g callers wait on average while the limiter is only %.0f%% used; goodput %.4g/s", l.MeanWaiting, 100*l.Utilisation, r.Throughput.GoodputRPS),
				Cause:    "the limiter sleeps while holding its lock: callers pass one at a time",
				Fix:      "sleep outside the lock; only mutate state inside it"})
		}
	}
}

// memoryGrowth: the number of requests in the system climbs while goodput stays flat, or the live-request guard stopped the run.
func memoryGrowth(a *analysis) {
	r := a.r
	if a.has("deadlock") {
		return
	}
	var evidence, cause string
	if grow, at, n := growth(r, a.s, a.from); grow {
		evidence = fmt.Sprintf("requests in the system climb to %.0f by %s while goodput stays at %.4g/s", n, secs(at), r.Throughput.GoodputRPS)
		cause = "an unbounded waiting line at the limiter: memory grows with the arrival rate, not the service rate"
	} else if r.Stop.Kind == metrics.GuardTripped && r.Stop.Guard == "max_live_requests" {
		evidence, cause = r.Stop.Detail(), "an unbounded waiting line at the limiter"
	} else {
		return
	}
	a.add(metrics.Diagnosis{Code: "memory_growth", Severity: "critical", Title: "Memory growth under load",
		Evidence: evidence, Cause: cause, Fix: "bound the ingest queue; add an acquisition timeout"})
}

// tenantStarvation: a light tenant waits as long as the heavy ones.
func tenantStarvation(a *analysis) {
	r := a.r
	if len(r.Tenants) > 1 {
		var total int64
		var worst float64
		for _, t := range r.Tenants {
			total += t.Arrived
			worst = max(worst, t.WaitS.P99)
		}
		for _, t := range r.Tenants {
			share := metrics.Ratio(float64(t.Arrived), float64(total))
			if share < 0.5/float64(len(r.Tenants)) && t.WaitS.P99 > 1 && t.WaitS.P99 >= worst/2 {
				a.add(metrics.Diagnosis{Code: "tenant_starvation", Severity: "warning", Title: "Tenant " + t.Name + " starves behind heavier tenants",
					Evidence: fmt.Sprintf("%s brings %.1f%% of the requests yet waits p99 %s (the worst tenant: %s)", t.Name, 100*share, secs(t.WaitS.P99), secs(worst)),
					Cause:    "one shared limiter, one heavy tenant",
					Fix:      "per-tenant limiters with a shared burst pool"})
			}
		}
	}
}

// burstAtStart: 429s crowd into the first intervals after the start.
func burstAtStart(a *analysis) {
	r := a.r
	if len(a.th) >= 8 {
		head := max(2, len(a.th)/20)
		var early, late float64
		for i, v := range a.th {
			if i < head {
				early += v
			} else {
				late += v
			}
		}
		earlyRate, lateRate := early/float64(head), late/float64(len(a.th)-head)
		if early >= 10 && earlyRate > 5*lateRate {
			a.add(metrics.Diagnosis{Code: "burst_at_start", Severity: "warning", Title: "Burst at process start",
				Evidence: fmt.Sprintf("%.0f 429s in the first %s, %.3g per interval afterwards", early, secs(float64(head)*r.IntervalS), lateRate),
				Cause:    "full buckets and full queues on deploy",
				Fix:      "start the bucket partially filled (initial_fill); stagger instance start"})
		}
	}
}

// thunderingHerd: synchronised spikes of starts met by 429s after pauses.
func thunderingHerd(a *analysis) {
	r := a.r
	starts := a.s.Column("starts")
	if len(starts) > a.from+4 && a.rate429 > rate429Alert {
		var pauses int64
		for _, u := range r.Upstreams {
			pauses += u.Pauses
		}
		st := starts[a.from:]
		mean := 0.0
		for _, v := range st {
			mean += v / float64(len(st))
		}
		spikes, withThrottle := 0, 0
		for i, v := range st {
			if v > 5*mean && v >= 10 {
				spikes++
				if a.th[a.from+i] > 0 || (a.from+i+1 < len(a.th) && a.th[a.from+i+1] > 0) {
					withThrottle++
				}
			}
		}
		if pauses > 0 && spikes >= 2 && withThrottle*2 >= spikes {
			a.add(metrics.Diagnosis{Code: "thundering_herd", Severity: "critical", Title: "Thundering herd after a pause",
				Evidence: fmt.Sprintf("%d synchronised spikes of starts (over 5× the mean of %.3g per interval), %d of them met by 429s", spikes, mean, withThrottle),
				Cause:    "every waiter wakes at the same instant after a Retry-After",
				Fix:      "add jitter to the resume time per caller (resume_jitter)"})
		}
	}
}

// acquisitionOrder: the order warnings found when loading (lock-order cycles, concurrency before rate).
func acquisitionOrder(a *analysis) {
	r := a.r
	for _, w := range r.Warnings {
		switch w.Code {
		case metrics.LockOrder:
			if !a.has("deadlock") {
				a.add(metrics.Diagnosis{Code: "lock_order", Severity: "warning", Title: "Limiters acquired in opposite orders",
					Evidence: w.Text, Cause: "two limiters acquired in different orders by different paths: a deadlock waiting to happen",
					Fix: "acquire in one global order: rate, then broad, then narrow"})
			}
		case metrics.AcquireOrder:
			a.add(metrics.Diagnosis{Code: "acquire_order", Severity: "warning", Title: "Concurrency limiter taken before a rate limiter",
				Evidence: w.Text, Cause: "a scarce permit is held while merely waiting for a clock",
				Fix: "acquire rate limits before concurrency limits"})
		}
	}
}

func hasCode(ds []metrics.Diagnosis, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// growth reports whether the number of requests in the system climbs
// steadily through the steady state: the last quarter's mean at least
// three times the first quarter's and over 100.
func growth(r *metrics.Results, s *metrics.Series, from int) (bool, float64, float64) {
	in := s.Column("in_system")
	ts := s.Column("t_s")
	if len(in)-from < 8 {
		return false, 0, 0
	}
	// Up to the end of arrivals: after that the line drains.
	arr := s.Column("arrivals")
	end := len(in)
	for end > from && arr[end-1] == 0 {
		end--
	}
	if end-from < 8 {
		return false, 0, 0
	}
	q := (end - from) / 4
	mean := func(xs []float64) float64 {
		var m float64
		for _, x := range xs {
			m += x / float64(len(xs))
		}
		return m
	}
	first, last := mean(in[from:from+q]), mean(in[end-q:end])
	peak := 0.0
	for _, v := range in[from:end] {
		peak = math.Max(peak, v)
	}
	return last > 100 && last > 3*first, ts[end-1], peak
}
