package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

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
	verdictDeadlocked = "deadlocked"
	verdictUnmeasured = "unmeasured"
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
	case slices.Contains(r.Stop.Cycle(), l.Name):
		v.Verdict = verdictDeadlocked
		v.Why = fmt.Sprintf("in the wait-for cycle %s: requests hold it while waiting for the next", strings.Join(r.Stop.Cycle(), " → "))
	case noSteadyWindow(r):
		v.Verdict = verdictUnmeasured
		v.Why = fmt.Sprintf("no steady state: the run ended at %s, at or before the end of its %s warm-up", secs(r.ElapsedS), secs(r.WarmupS))
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
		v.Why = fmt.Sprintf("%s callers wait on average and the waits that ended were short: the line is not being served", human(l.MeanWaiting, 3))
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

// noSteadyWindow reports whether the run ended at or before the end of its
// warm-up, so that it has no steady state to read.
func noSteadyWindow(r *metrics.Results) bool { return r.WarmupS > 0 && r.ElapsedS <= r.WarmupS }

// steadyStart returns the index of the first row after the warm-up.
func steadyStart(r *metrics.Results, s *metrics.Series) int {
	from := rowsOf(s, "t_s")
	s.ScanNamed(0, []string{"t_s"}, func(i int, t []float64) bool {
		if t[0]-r.IntervalS >= r.WarmupS-1e-9 {
			from = i
			return false
		}
		return true
	})
	return from
}

// rowsOf returns the number of rows of column name: the series' length,
// or 0 if it has no such column.
func rowsOf(s *metrics.Series, name string) int {
	if s.Index(name) < 0 {
		return 0
	}
	return s.Len()
}

// Analyze fills in the verdicts and diagnoses of r.
func Analyze(r *metrics.Results, s *metrics.Series) {
	r.Verdicts = Verdicts(r)
	r.Diagnoses = Diagnose(r, s)
	if r.Diagnoses == nil {
		r.Diagnoses = []metrics.Diagnosis{}
	}
	AttributeFix(r)
}

// analysis is what every failure-mode detector reads, and the diagnoses
// found so far.
type analysis struct {
	r       *metrics.Results
	s       *metrics.Series
	rate429 float64 // share of all attempts answered 429
	from    int     // first steady-state row of the series
	rows    int     // rows of its responses_429 column (429s per interval), read by scans
	out     []metrics.Diagnosis
}

func (a *analysis) add(d metrics.Diagnosis) { a.out = append(a.out, d) }

func (a *analysis) has(code string) bool { return hasCode(a.out, code) }

// Diagnose recognises the failure modes of the article's table in a run,
// critical ones first.
func Diagnose(r *metrics.Results, s *metrics.Series) []metrics.Diagnosis {
	a := &analysis{r: r, s: s, rate429: r.Rate429, from: steadyStart(r, s), rows: rowsOf(s, "responses_429")}
	for _, detect := range []func(*analysis){
		deadlock, costLimitBinds, sustained429, quotaExhausted, serialised, memoryGrowth, tenantStarvation, staticSplit, acquireTimeouts, requestTimeouts, burstAtStart, thunderingHerd, acquisitionOrder, noSteadyState, littlesLaw,
	} {
		detect(a)
	}
	out := a.out
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity == "critical" && out[j].Severity != "critical" })
	return out
}

// littleTolerance is the relative gap between L and λ × W beyond which a
// drained run's bookkeeping disagrees with itself (rounding gives ~1e-12).
const littleTolerance = 0.01

// littlesLaw: in a run that drained, every stage's time-average count L
// equals its entry rate × mean time inside (λ × W) over the whole run. A
// gap means requests were counted in and out differently: the numbers of
// that stage cannot be trusted, whatever the scenario.
func littlesLaw(a *analysis) {
	r := a.r
	if !r.Complete || r.Requests.InProgress > 0 {
		return // requests still inside: L and λ × W rightly differ
	}
	for _, l := range r.Little {
		if l.RelError <= littleTolerance {
			continue
		}
		a.add(metrics.Diagnosis{Code: "littles_law", Severity: "critical", Title: "The run's bookkeeping disagrees with itself (Little's Law)",
			Evidence: fmt.Sprintf("stage %s: L = %s on average inside, but λ × W = %s/s × %s = %s (%.1f%% apart)",
				l.Stage, human(l.L, 4), human(l.Lambda, 4), secs(l.W), human(l.Lambda*l.W, 4), 100*l.RelError),
			Cause: "the stage counted requests in and out differently; its waits and counts cannot be trusted",
			Fix:   metrics.Fix{Text: "report this with the scenario file and seed: it is a fault in limitsim, not in the scenario"}})
		return
	}
}

// requestTimeouts: a large share of requests ran out their request
// deadline. Under overload a FIFO line hands its grants to the requests
// that have waited longest, which then run out of budget in flight: the
// work is done and wasted, and goodput collapses.
func requestTimeouts(a *analysis) {
	r := a.r
	q := r.Requests
	if q.TimedOut < 10 || float64(q.TimedOut) < 0.01*float64(q.Arrived) || r.RequestTimeoutS <= 0 || a.has("quota_exhausted") {
		return
	}
	share := metrics.Ratio(float64(q.TimedOut), float64(q.Arrived))
	d := metrics.Diagnosis{Code: "request_timeouts", Severity: "warning", Title: "Requests run out their request budget",
		Evidence: fmt.Sprintf("%s requests (%.0f%%) hit the %s request timeout; goodput %s/s of %s/s offered",
			Grouped(q.TimedOut), 100*share, secs(r.RequestTimeoutS), human(r.Throughput.GoodputRPS, 4), human(r.Throughput.OfferedRPS, 4)),
		Cause: "requests wait most of their budget for a limiter, then time out later (often in flight, after the upstream did the work)",
		Fix: metrics.Fix{Text: fmt.Sprintf("fail fast: an acquisition timeout of a tenth of the budget (acquire_timeout = %q) turns the excess into quick, visible refusals; then lower the offered load or raise the limit", timeoutFix(r)),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}}
	if share > 0.1 {
		d.Severity = "critical"
	}
	a.add(d)
}

// deadlock: work parked on limiters with nothing left to wake it, a
// wait-for cycle when there is one; says when progress stopped and how
// many requests are stuck.
func deadlock(a *analysis) {
	r := a.r
	k := r.Stop.Kind
	if k != metrics.Stalled && k != metrics.Deadlocked {
		return
	}
	d := metrics.Diagnosis{Code: "deadlock", Severity: "critical", Title: "Deadlock between limiters",
		Evidence: fmt.Sprintf("%s requests stuck; the last request completed by %s", Grouped(r.Requests.InProgress), secs(lastProgress(a))) + ": " + r.Stop.Detail(),
		Cause:    "two limiters acquired in different orders by different paths",
		Fix:      metrics.Fix{Text: "acquire in one global order: rate, then broad, then narrow"}}
	if cyc := r.Stop.Cycle(); len(cyc) > 1 {
		d.Cause = fmt.Sprintf("limiters %s acquired in different orders by different paths", strings.Join(cyc[:len(cyc)-1], " and "))
	}
	if k != metrics.Deadlocked {
		d.Title, d.Cause = "Waiters nobody will wake", "requests parked on limiters with nothing left to release them"
		d.Fix.Text = "add an acquisition timeout; check what releases these limiters"
	} else if set, order := orderFix(r); set != nil {
		d.Fix.Text = fmt.Sprintf("acquire in one global order on every path (rate, then broad, then narrow): %s", strings.Join(order, " → "))
		d.Fix.Set = set
	}
	a.add(d)
}

// lastProgress is the end of the last interval in which a request
// succeeded (0 if none did).
func lastProgress(a *analysis) float64 {
	last := 0.0
	a.s.ScanNamed(0, []string{"succeeded", "t_s"}, func(_ int, v []float64) bool {
		if v[0] > 0 {
			last = v[1]
		}
		return true
	})
	return last
}

// sustained429: 429s in at least a quarter of the steady-state intervals.
// The fix names the rate to set: the hosts' quota × 0.9 ÷ instances.
func sustained429(a *analysis) {
	r := a.r
	if a.rate429 <= rate429Alert || a.rows <= a.from || a.has("token_limit_binds") {
		return
	}
	busy := 0
	a.s.ScanNamed(a.from, []string{"responses_429"}, func(_ int, th []float64) bool {
		if th[0] > 0 {
			busy++
		}
		return true
	})
	share := float64(busy) / float64(a.rows-a.from)
	if share < 0.25 {
		return
	}
	d := metrics.Diagnosis{Code: "sustained_429", Severity: "critical", Title: "Sustained 429s despite a limiter",
		Evidence: fmt.Sprintf("%.1f%% of attempts answered 429, in %.0f%% of the steady-state intervals (%s per minute)",
			100*a.rate429, 100*share, human(r.Throughput.Rate429RPS*60, 3))}
	quota, known := quotaRPS(r)
	inst := float64(max(1, r.Instances))
	target := quota * 0.9 / inst
	rl := rateLimiter(r)
	switch {
	case rl == nil:
		d.Title = "429s do the limiting: no client-side rate limiter"
		d.Cause = "nothing on the client counts starts per second: the upstream's 429s do the limiting, and each costs a round trip"
		d.Fix.Text = "add a token bucket below the quota (quota × 0.9 ÷ instances)"
		if known {
			d.Fix.Text = fmt.Sprintf("add a token bucket at %s/s = quota %s/s × 0.9 ÷ %d instance(s), burst %s (one second); no change of existing keys adds a limiter", human(target, 3), human(quota, 3), r.Instances, human(math.Ceil(target), 3))
		}
	case r.Instances > 1:
		d.Cause = fmt.Sprintf("%d instances share one quota, each configured as if it were alone (%s at %s/s each, %s/s together)",
			r.Instances, rl.Name, human(rl.Capacity, 3), human(rl.Capacity*inst, 3))
		d.Fix.Text = fmt.Sprintf("divide the quota by the instance count (%d) and add a safety margin, or coordinate through a shared store", r.Instances)
		if known {
			d.Fix.Text = fmt.Sprintf("set %s to %s/s = quota %s/s × 0.9 ÷ %d instances, or coordinate through a shared store", rl.Name, human(target, 3), human(quota, 3), r.Instances)
			d.Fix.Set = setRate(rl, target)
		}
	default:
		d.Cause = "local rate set above the real quota"
		d.Fix.Text = "lower the local rate below the quota (quota × 0.9); treat a rising 429 rate as a configuration bug, not something to retry harder"
		if known {
			d.Cause = fmt.Sprintf("local rate set above the real quota (%s at %s/s against %s/s)", rl.Name, human(rl.Capacity, 3), human(quota, 3))
			d.Fix.Text = fmt.Sprintf("set %s to %s/s = quota %s/s × 0.9; treat a rising 429 rate as a configuration bug, not something to retry harder", rl.Name, human(target, 3), human(quota, 3))
			d.Fix.Set = setRate(rl, target)
		}
	}
	a.add(d)
}

// serialisedFix: sleep outside the lock. A locked_bucket becomes a
// token_bucket: no lock held while waiting, and a FIFO line whose head
// alone holds a timer, fair to every waiter. The article's own polling
// bucket also sleeps outside its lock, but every waiter polls: it is not
// fair, and under load it wakes thousands of waiters a tick.
func serialisedFix(l metrics.LimiterStats) metrics.Fix {
	f := metrics.Fix{Text: "sleep outside the lock; only mutate state inside it"}
	if l.Kind == "locked_bucket" {
		f.Text += fmt.Sprintf(": kind = \"token_bucket\" for %s (the same rate and burst with no lock held while waiting, and a FIFO line that wakes one waiter at a time; the article's polling bucket sleeps outside its lock too, but wakes every waiter on every poll and serves them in no order)", l.Name)
		f.Set = map[string]any{limiterKey(&l, "kind"): "token_bucket", limiterKey(&l, "handoff"): nil, limiterKey(&l, "lag"): nil}
	}
	return f
}

// burstFix: start the buckets partially filled (a tenth of their burst).
func burstFix(r *metrics.Results) metrics.Fix {
	f := metrics.Fix{Text: "start the bucket partially filled (initial_fill); stagger instance start"}
	var names []string
	set := map[string]any{}
	for i := range r.Limiters {
		l := &r.Limiters[i]
		if l.Kind == "token_bucket" || l.Kind == "polling_bucket" || l.Kind == "locked_bucket" {
			set[limiterKey(l, "initial_fill")] = 0.1
			names = append(names, l.Name)
		}
	}
	if len(names) > 0 {
		f.Text = fmt.Sprintf("start %s a tenth full (initial_fill = 0.1); stagger instance start", strings.Join(names, ", "))
		f.Set = set
	}
	return f
}

// limiterKey is the --set key of limiter l's field: the name in brackets
// when it holds a dot, which would otherwise split it.
func limiterKey(l *metrics.LimiterStats, field string) string {
	if strings.Contains(l.Name, ".") {
		return "client.limiter[" + l.Name + "]." + field
	}
	return "client.limiter." + l.Name + "." + field
}

// setRate is the override that sets rate limiter l to rate per second
// with one second of burst; nil for a limiter that is not a rate limiter.
func setRate(l *metrics.LimiterStats, rate float64) map[string]any {
	if l.Family != "rate" {
		return nil
	}
	rate = math.Round(rate*1000) / 1000
	return map[string]any{limiterKey(l, "rate"): rate, limiterKey(l, "burst"): math.Max(1, math.Ceil(rate))}
}

// timeoutFix is the acquisition timeout a diagnosis proposes: the alert
// line (a tenth of the request budget), or the article's 2 s.
func timeoutFix(r *metrics.Results) string {
	if a := alertWait(r); a > 0 {
		return fmt.Sprintf("%gs", a)
	}
	return "2s"
}

// quotaRPS is the requests per second the hosts' rate quotas admit
// together, and whether any host has one.
func quotaRPS(r *metrics.Results) (float64, bool) {
	var sum float64
	known := false
	for _, u := range r.Upstreams {
		if u.QuotaRPS != nil {
			sum += *u.QuotaRPS
			known = true
		}
	}
	return sum, known
}

// rateLimiter is the global rate or window limiter with the most capacity
// used (the one to set below the quota), or any rate limiter, or nil.
func rateLimiter(r *metrics.Results) *metrics.LimiterStats {
	var best *metrics.LimiterStats
	for i := range r.Limiters {
		l := &r.Limiters[i]
		if l.Releases {
			continue
		}
		if best == nil || (l.Scope == "global" && (best.Scope != "global" || l.Utilisation > best.Utilisation)) {
			best = l
		}
	}
	return best
}

// serialised: callers wait on a rate limiter that is mostly unused (the lock-held bucket).
func serialised(a *analysis) {
	r := a.r
	for _, l := range r.Limiters {
		if !l.Releases && l.MeanWaiting >= 1 && l.Utilisation < 0.5 && l.PWait > 0.5 {
			a.add(metrics.Diagnosis{Code: "serialised", Severity: "critical", Title: "Limiter " + l.Name + " serialises everything",
				Evidence: fmt.Sprintf("%s callers wait on average while the limiter is only %.0f%% used; goodput %s/s", human(l.MeanWaiting, 3), 100*l.Utilisation, human(r.Throughput.GoodputRPS, 4)),
				Cause:    "the limiter sleeps while holding its lock: callers pass one at a time",
				Fix:      serialisedFix(l)})
		}
	}
}

// memoryGrowth: the number of requests in the system climbs while goodput stays flat, or the live-request guard stopped the run.
func memoryGrowth(a *analysis) {
	r := a.r
	if a.has("deadlock") || a.has("quota_exhausted") { // requests pile up waiting for the quota's reset
		return
	}
	var evidence, cause string
	fix := "bound the ingest queue"
	if grow, at, n := growth(r, a.s, a.from); grow {
		evidence = fmt.Sprintf("requests in the system climb to %.0f by %s while goodput stays at %s/s", n, secs(at), human(r.Throughput.GoodputRPS, 4))
		cause = lineCause(r, n)
		if r.Requests.Rejected > 0 {
			fix = "bound the line at what the service rate clears within the acquisition timeout"
		}
	} else if r.Stop.Kind == metrics.GuardTripped && r.Stop.Guard == "max_live_requests" {
		evidence, cause = r.Stop.Detail(), "a waiting line at the limiter that no bound cut before the live-request guard"
	} else {
		return
	}
	a.add(metrics.Diagnosis{Code: "memory_growth", Severity: "critical", Title: "Memory growth under load",
		Evidence: evidence, Cause: cause, Fix: metrics.Fix{Text: fmt.Sprintf("%s; add an acquisition timeout (acquire_timeout = %q: a full limiter then fails fast and visibly)", fix, timeoutFix(r)),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}})
}

// lineCause names what let the line grow to peak requests: a bound that
// refused requests yet sits too high for the service rate (a long wait at
// the bound), or no bound that refused any, whether none is set or one
// above the peak.
func lineCause(r *metrics.Results, peak float64) string {
	served := r.Throughput.GoodputRPS
	if q := r.Requests; q.Rejected > 0 {
		wait := ""
		if served > 0 {
			wait = fmt.Sprintf(", a wait of %s at the bound", secs(peak/served))
		}
		return fmt.Sprintf("a waiting line that is bounded but long: %s requests were refused when it was full, yet up to %.0f were inside at once while %s/s were served%s; the bound is too large for the service rate, so memory grows with the arrival rate until the bound is reached",
			Grouped(q.Rejected), peak, human(served, 4), wait)
	}
	return fmt.Sprintf("a waiting line at the limiter that no bound cut (none is set, or it is above the %.0f reached): memory grows with the arrival rate, not the service rate", peak)
}

// tenantStarvation: a light tenant waits about as long as the heaviest,
// although its demand is far below its share (the article: p99 wait
// skewed by tenant, one shared limiter, one heavy tenant).
func tenantStarvation(a *analysis) {
	r := a.r
	if len(r.Tenants) < 2 {
		return
	}
	heavy := r.Tenants[0]
	for _, t := range r.Tenants {
		if t.ArrivalShare > heavy.ArrivalShare {
			heavy = t
		}
	}
	jain := 1.0
	if r.TenantJain != nil {
		jain = *r.TenantJain
	}
	for _, t := range r.Tenants {
		light := t.ArrivalShare < 0.5/float64(len(r.Tenants))
		if !light || t.WaitS.P50 < 1 || t.WaitS.P50 < heavy.WaitS.P50/2 {
			continue
		}
		d := metrics.Diagnosis{Code: "tenant_starvation", Severity: "warning", Title: "Tenant " + t.Name + " starves behind " + heavy.Name,
			Evidence: fmt.Sprintf("%s brings %.1f%% of the requests yet waits p50 %s, p99 %s, as long as %s (%.1f%% of the requests, p50 %s, p99 %s); success rate %.0f%% against %.0f%%; Jain's index over the tenants' success rates %.3f",
				t.Name, 100*t.ArrivalShare, secs(t.WaitS.P50), secs(t.WaitS.P99), heavy.Name, 100*heavy.ArrivalShare,
				secs(heavy.WaitS.P50), secs(heavy.WaitS.P99), 100*t.SuccessRate, 100*heavy.SuccessRate, jain),
			Cause: "one shared limiter, one heavy tenant: the light tenant queues behind every burst of the heavy one",
			Fix:   metrics.Fix{Text: "per-tenant limiters with a shared burst pool"}}
		if l := sharedLimiter(r); l != nil {
			each, light := tenantShare(r, l.Capacity)
			d.Fix.Text = fmt.Sprintf("give each tenant its own limiter and line: scope = \"tenant\" on %s at %s/s each (%s/s less the %s/s the %d light tenant(s) ask, shared by the others: what a light tenant leaves unused goes to the heavy ones, a shared burst pool)",
				l.Name, human(each, 3), human(l.Capacity, 3), human(light.demand, 3), light.count)
			if set := setRate(l, each); set != nil {
				set[limiterKey(l, "scope")] = "tenant"
				d.Fix.Set = set
			}
		}
		a.add(d)
	}
}

// sharedLimiter is the global limiter used most: the one tenants share.
func sharedLimiter(r *metrics.Results) *metrics.LimiterStats {
	var best *metrics.LimiterStats
	for i := range r.Limiters {
		if l := &r.Limiters[i]; l.Scope == "global" && (best == nil || l.Utilisation > best.Utilisation) {
			best = l
		}
	}
	return best
}

// costLimitShare is the share of a host's 429s a quota counting cost must
// have refused for it, not the request limit, to be what binds.
const costLimitShare = 0.5

// costLimitBinds: a quota that counts cost (a language model's tokens per
// minute) refuses most of a host's 429s while the client counts requests:
// at the requests' sizes the cost limit binds long before the request
// limit, and the response's share of the cost is known only when it
// completes. The fix counts cost on the client and reserves an estimate of
// the response's.
func costLimitBinds(a *analysis) {
	r := a.r
	if a.rate429 <= rate429Alert {
		return
	}
	var attempts int64
	for _, u := range r.Upstreams {
		attempts += u.Attempts
	}
	for _, u := range r.Upstreams {
		c := u.Cost
		if c == nil || c.QuotaPerS <= 0 || u.Throttled == 0 || attempts == 0 || c.Request.Count == 0 {
			continue
		}
		costRej, reqRej := u.Throttled, int64(0) // one quota, which counts cost
		var costName string
		if len(u.RejectedBy) > 0 {
			costRej = 0
			for _, q := range u.RejectedBy {
				if q.Unit == "cost" {
					costRej += q.Count
					if costName == "" {
						costName = q.Quota
					}
				} else {
					reqRej += q.Count
				}
			}
		}
		share := math.Min(1, float64(costRej)/float64(u.Throttled))
		if share < costLimitShare {
			continue
		}
		perReq := c.Request.Mean + c.Response.Mean
		fits := c.QuotaPerS / math.Max(1, perReq)
		offered := r.Throughput.OfferedRPS * float64(u.Attempts) / float64(attempts)
		inst := float64(max(1, r.Instances))
		limit := "its cost limit"
		if costName != "" {
			limit = "its cost limit " + costName
		}
		others := ""
		if len(u.RejectedBy) > 0 {
			others = fmt.Sprintf(", its request limit %s", Grouped(reqRej))
		}
		respText := ""
		if c.Response.Count > 0 {
			respText = fmt.Sprintf(" plus a response of %s (p90 %s) charged when it completes", human(c.Response.Mean, 3), human(c.Response.P90, 3))
		}
		d := metrics.Diagnosis{Code: "token_limit_binds", Severity: "critical", Title: "The token limit binds before the request limit",
			Evidence: fmt.Sprintf("host %s: %.0f%% of its 429s are cost-limited (%s refused %s%s; %.1f%% of attempts answered 429); a request costs %s on average (p50 %s, p90 %s)%s: offered %s/s asks for %s/s against the limit's %s/s, which fits %s requests a second",
				u.Host, 100*share, limit, Grouped(costRej), others, 100*u.Rate429, human(c.Request.Mean, 3), human(c.Request.P50, 3), human(c.Request.P90, 3), respText,
				human(offered, 3), human(offered*perReq, 3), human(c.QuotaPerS, 4), human(fits, 3)),
			Cause: "the client counts requests, not what they cost: at these request sizes the cost limit runs out first, and the response's cost, known only when it completes, takes from the next requests' share"}
		rate := math.Round(c.QuotaPerS*0.9/inst*1000) / 1000
		burst := math.Ceil(math.Max(c.QuotaBurst*0.9/inst, c.Request.Max+c.Response.P90))
		est := int64(math.Ceil(c.Response.P90))
		conc := ""
		if u.LatencyS.Count > 0 {
			conc = fmt.Sprintf("; or cap concurrency at %d (%s requests/s × the mean latency %s, Little's Law)", int64(math.Ceil(fits*0.9/inst*u.LatencyS.Mean)), human(fits*0.9/inst, 3), secs(u.LatencyS.Mean))
		}
		split := ""
		if r.Instances > 1 {
			split = fmt.Sprintf(" ÷ %d instances", r.Instances)
		}
		reserve := ""
		if c.Response.Count > 0 {
			reserve = fmt.Sprintf(", reserving the p90 of the responses' cost ([client.reserve] estimate = \"p90\", %d until the first responses) and charged the difference when each completes", est)
		}
		d.Fix.Text = fmt.Sprintf("count cost on the client: a token bucket with unit = \"cost\" at %s/s (the limit × 0.9%s), burst %s%s%s",
			human(rate, 4), split, human(burst, 4), reserve, conc)
		if rl := rateLimiter(r); rl != nil && rl.Scope == "global" && rl.Kind == "token_bucket" {
			d.Fix.Text = fmt.Sprintf("count cost on the client: make %s a token bucket with unit = \"cost\" at %s/s (the limit × 0.9%s), burst %s%s; keep a request limiter beside it if the request limit binds too%s",
				rl.Name, human(rate, 4), split, human(burst, 4), reserve, conc)
			d.Fix.Set = map[string]any{limiterKey(rl, "unit"): "cost", limiterKey(rl, "rate"): rate, limiterKey(rl, "burst"): burst}
			if c.Response.Count > 0 {
				d.Fix.Set["client.reserve.estimate"], d.Fix.Set["client.reserve.fixed"] = "p90", est
			}
		}
		a.add(d)
	}
}

// quotaExhaustedShare is the share of the steady state's intervals a host
// must spend paused for its quota's reset for the quota to count as
// exhausted rather than briefly met.
const quotaExhaustedShare = 0.2

// quotaExhausted: a host's quota is used up and the client waits out its
// reset (paused on the rate-limit headers or on a 429's Retry-After)
// through much of the run, because it asks for more than the quota
// admits: an hourly quota spent in forty minutes. The pile-up and the
// timeouts it causes are this, not a limiter's line: memory growth and
// request timeouts defer to it, as it defers to sustained 429s.
func quotaExhausted(a *analysis) {
	r := a.r
	if a.has("sustained_429") || a.has("token_limit_binds") { // a local rate above the quota: those diagnoses say it
		return
	}
	var attempts int64
	for _, u := range r.Upstreams {
		attempts += u.Attempts
	}
	for _, u := range r.Upstreams {
		if u.QuotaRPS == nil || u.Pauses == 0 || attempts == 0 {
			continue
		}
		n, p := 0, 0
		a.s.ScanNamed(a.from, []string{u.Host + ".paused"}, func(_ int, paused []float64) bool {
			n++
			if paused[0] > 0 {
				p++
			}
			return true
		})
		quota := *u.QuotaRPS
		offered := r.Throughput.OfferedRPS * float64(u.Attempts) / float64(attempts)
		if n == 0 || float64(p) < quotaExhaustedShare*float64(n) || offered <= quota {
			continue
		}
		d := metrics.Diagnosis{Code: "quota_exhausted", Severity: "warning", Title: "The upstream's quota runs out before its reset",
			Evidence: fmt.Sprintf("host %s was paused for its quota's reset in %.0f%% of the steady state's intervals: offered %s/s against the quota's %s/s (%s per hour against %s); %s requests timed out and %s were answered 429",
				u.Host, 100*float64(p)/float64(n), human(offered, 3), human(quota, 3), Grouped(int64(offered*3600)), Grouped(int64(quota*3600)), Grouped(r.Requests.TimedOut), Grouped(u.Throttled)),
			Cause: "demand above the quota, met by waiting for the reset: requests pile up behind the pause and run out their budget, in bursts at each reset",
			Fix:   metrics.Fix{Text: "hold the client to the quota with a token bucket at the quota × 0.9 and an acquisition timeout, so the excess fails fast and the quota lasts the window; or lower the demand, or ask the provider for a higher quota"}}
		if rl := rateLimiter(r); rl != nil && rl.Scope == "global" {
			target := quota * 0.9 / float64(max(1, r.Instances))
			split := ""
			if r.Instances > 1 {
				split = fmt.Sprintf(" ÷ %d instances", r.Instances)
			}
			d.Fix.Text = fmt.Sprintf("hold the client to the quota: set %s to %s/s (quota %s/s × 0.9%s) with an acquisition timeout, so the excess fails fast and the quota lasts the window; or lower the demand, or ask the provider for a higher quota", rl.Name, human(target, 3), human(quota, 3), split)
			d.Fix.Set = setRate(rl, target)
		}
		a.add(d)
	}
}

// staticSplit: a rate limit divided statically between client instances
// (one per instance, scope "global") whose traffic is uneven: the busy
// instances wait on their share while the quiet ones leave theirs unused.
// One limit shared through a store would give the busy ones what the quiet
// ones leave.
func staticSplit(a *analysis) {
	r := a.r
	n := len(r.PerInstance)
	if n < 2 {
		return
	}
	for i := range r.Limiters {
		l := &r.Limiters[i]
		if l.Scope != "global" || l.Family != "rate" || l.Adaptation != nil || l.Capacity <= 0 {
			continue
		}
		// Every request must pass this limiter for the instances' offered
		// loads to be its demand (not so on one path of several).
		if asked := l.Acquired + l.Rejected + l.Timeouts; float64(asked) < 0.95*float64(r.Requests.Arrived) {
			continue
		}
		var over, unused float64
		var busy, quiet []string
		for _, in := range r.PerInstance {
			offered := in.Weight * r.Throughput.OfferedRPS
			switch {
			case offered > l.Capacity:
				over += offered - l.Capacity
				busy = append(busy, fmt.Sprintf("instance %d (offered %s/s)", in.Instance, human(offered, 3)))
			case offered < l.Capacity:
				unused += l.Capacity - offered
				quiet = append(quiet, fmt.Sprint(in.Instance))
			}
		}
		total := l.Capacity * float64(n)
		wasted := math.Min(over, unused) // what a shared limit would have let the busy instances use
		if len(busy) == 0 || wasted < 0.05*total {
			continue
		}
		set := map[string]any{limiterKey(l, "scope"): "cluster", limiterKey(l, "rate"): math.Round(total*1000) / 1000,
			limiterKey(l, "burst"): math.Max(1, math.Ceil(total))}
		if l.Kind != "gcra" { // a store keeps a GCRA: drop the bucket's own keys
			set[limiterKey(l, "kind")] = "gcra"
			for _, k := range []string{"initial_fill", "lag", "handoff"} {
				set[limiterKey(l, k)] = nil
			}
		}
		verb := "waits"
		if len(busy) > 1 {
			verb = "wait"
		}
		d := metrics.Diagnosis{Code: "static_split_wastes_quota", Severity: "warning",
			Title: "A static split of the limit wastes quota",
			Evidence: fmt.Sprintf("limiter %s gives each of %d instances %s/s (%s/s together): %s %s on its share while instances %s leave %s/s of theirs unused; a shared limit would put %s/s (%.0f%% of the limit) to use; goodput %s/s",
				l.Name, n, human(l.Capacity, 3), human(total, 3), strings.Join(busy, ", "), verb, strings.Join(quiet, ", "), human(unused, 3), human(wasted, 3), 100*wasted/total, human(r.Throughput.GoodputRPS, 4)),
			Cause: "a limit divided statically gives every instance the same share whatever its traffic: the busy instances wait on theirs while the quiet ones leave theirs unused",
			Fix: metrics.Fix{Text: fmt.Sprintf("share one limit of %s/s across the instances: scope = \"cluster\" on %s (a GCRA kept in a shared store such as Redis; each acquisition adds a store round trip, or set sync_interval to settle once per interval), or divide the quota in proportion to each instance's traffic", human(total, 3), l.Name),
				Set: set}}
		a.add(d)
	}
}

// acquireTimeouts: a large share of requests gave up waiting for a
// limiter: demand exceeds the limit and the acquisition timeout turns the
// excess into failures after the full wait.
func acquireTimeouts(a *analysis) {
	r := a.r
	q := r.Requests
	if q.AcquireTimeouts < 10 || float64(q.AcquireTimeouts) < 0.01*float64(q.Arrived) {
		return
	}
	var worst *metrics.LimiterStats
	for i := range r.Limiters {
		if l := &r.Limiters[i]; worst == nil || l.Timeouts > worst.Timeouts {
			worst = l
		}
	}
	share := metrics.Ratio(float64(q.AcquireTimeouts), float64(q.Arrived))
	d := metrics.Diagnosis{Code: "acquire_timeouts", Severity: "warning", Title: "Requests give up waiting for a limiter",
		Evidence: fmt.Sprintf("%s requests (%.0f%%) ran out their %s acquisition timeout", Grouped(q.AcquireTimeouts), 100*share, secs(r.AcquireTimeoutS)),
		Cause:    "demand exceeds the limit: the waiting line fills and the acquisition timeout turns the excess into failures after the full wait",
		Fix:      metrics.Fix{Text: "lower the offered load or raise the limit if the upstream allows; bound the waiting line (max_waiting) so the excess fails at once"}}
	fast := r.AcquireTimeoutS <= fastShedS(r)
	if share > 0.1 && !fast {
		d.Severity = "critical"
	}
	if fast {
		// The article's remedy at work: a full limiter fails fast and
		// visibly. The excess is shed, the cost of holding the limit.
		d.Title = loadShedTitle
		d.Cause = fmt.Sprintf("demand exceeds the limit; the %s acquisition timeout (at most %s, the article's fail-fast bound) sheds the excess quickly and visibly, as it should: the cost of holding the limit, not a failure of it", secs(r.AcquireTimeoutS), secs(fastShedS(r)))
	}
	if worst != nil && worst.Timeouts > 0 {
		d.Evidence += fmt.Sprintf(", %s of them at limiter %s (%s callers waiting on average, utilisation %.0f%%; offered %s/s)",
			Grouped(worst.Timeouts), worst.Name, human(worst.MeanWaiting, 3), 100*worst.UtilisationMax, human(r.Throughput.OfferedRPS, 4))
		d.Fix.Text = fmt.Sprintf("lower the offered load (%s/s) or raise %s if the upstream allows; bound its waiting line (max_waiting) so the excess fails at once instead of after %s", human(r.Throughput.OfferedRPS, 4), worst.Name, secs(r.AcquireTimeoutS))
	}
	if d.Severity == "critical" {
		d.Fix = lineBoundFix(r, worst)
	}
	a.add(d)
}

// burstAtStart: 429s crowd into the first intervals after the start.
func burstAtStart(a *analysis) {
	r := a.r
	if a.rows >= 8 {
		head := max(2, a.rows/20)
		var early, late float64
		a.s.ScanNamed(0, []string{"responses_429"}, func(i int, th []float64) bool {
			if i < head {
				early += th[0]
			} else {
				late += th[0]
			}
			return true
		})
		earlyRate, lateRate := early/float64(head), late/float64(a.rows-head)
		if early >= 10 && earlyRate > 5*lateRate {
			a.add(metrics.Diagnosis{Code: "burst_at_start", Severity: "warning", Title: "Burst at process start",
				Evidence: fmt.Sprintf("%.0f 429s in the first %s, %s per interval afterwards", early, secs(float64(head)*r.IntervalS), human(lateRate, 3)),
				Cause:    "full buckets and full queues on deploy",
				Fix:      burstFix(r)})
		}
	}
}

// thunderingHerd: synchronised spikes of starts met by 429s after pauses.
func thunderingHerd(a *analysis) {
	r := a.r
	if rows := rowsOf(a.s, "starts"); rows > a.from+4 && a.rate429 > rate429Alert {
		var pauses int64
		for _, u := range r.Upstreams {
			pauses += u.Pauses
		}
		mean := 0.0
		a.s.ScanNamed(a.from, []string{"starts"}, func(_ int, st []float64) bool {
			mean += st[0] / float64(rows-a.from)
			return true
		})
		// A spike is met by 429s in its own interval or the next.
		spikes, withThrottle, next := 0, 0, false
		a.s.ScanNamed(a.from, []string{"starts", "responses_429"}, func(_ int, v []float64) bool {
			if next && v[1] > 0 {
				withThrottle++
			}
			next = false
			if v[0] > 5*mean && v[0] >= 10 {
				spikes++
				if v[1] > 0 {
					withThrottle++
				} else {
					next = true
				}
			}
			return true
		})
		if pauses > 0 && spikes >= 2 && withThrottle*2 >= spikes {
			a.add(metrics.Diagnosis{Code: "thundering_herd", Severity: "critical", Title: "Thundering herd after a pause",
				Evidence: fmt.Sprintf("%d synchronised spikes of starts (over 5× the mean of %s per interval), %d of them met by 429s; %s",
					spikes, human(mean, 3), withThrottle, pausedWords(a, pauses)),
				Cause: "every waiter wakes at the same instant after a Retry-After",
				Fix: metrics.Fix{Text: "add jitter to the resume time per caller: resume_jitter = \"5s\" spreads the resumes over a few seconds",
					Set: map[string]any{"client.on_429.resume_jitter": "5s"}}})
		}
	}
}

// pausedWords says how long the hosts stayed paused and in how many
// pause episodes, so that a handful of episodes reads beside many spikes:
// a 429 answered while a pause runs extends it rather than starting a new
// episode, and the waiters' resumes within it are the spikes.
func pausedWords(a *analysis, pauses int64) string {
	paused := map[int]bool{}
	n := 0
	for _, u := range a.r.Upstreams {
		a.s.ScanNamed(a.from, []string{u.Host + ".paused"}, func(i int, v []float64) bool {
			n = max(n, i-a.from+1)
			if v[0] > 0 {
				paused[i] = true
			}
			return true
		})
	}
	return fmt.Sprintf("a host was paused at %.0f%% of the steady state's interval ends, in %s pause episode(s) in all: an episode counts a pause that starts, and a 429 that comes while one runs extends it instead, so one episode can hold many spikes of waiters resuming together",
		100*metrics.Ratio(float64(len(paused)), float64(n)), Grouped(pauses))
}

// acquisitionOrder: the order warnings found when loading (lock-order cycles, concurrency before rate).
func acquisitionOrder(a *analysis) {
	r := a.r
	for _, w := range r.Warnings {
		switch w.Code {
		case metrics.LockOrder:
			if !a.has("deadlock") {
				d := metrics.Diagnosis{Code: "lock_order", Severity: "warning", Title: "Limiters acquired in opposite orders",
					Evidence: w.Text, Cause: "two limiters acquired in different orders by different paths: a deadlock waiting to happen",
					Fix: metrics.Fix{Text: "acquire in one global order: rate, then broad, then narrow"}}
				if set, order := orderFix(r); set != nil {
					d.Fix.Text, d.Fix.Set = "acquire in one global order on every path (rate, then broad, then narrow): "+strings.Join(order, " → "), set
				}
				a.add(d)
			}
		case metrics.AcquireOrder:
			d := metrics.Diagnosis{Code: "acquire_order", Severity: "warning", Title: "Concurrency limiter taken before a rate limiter",
				Evidence: w.Text, Cause: "a scarce permit is held while merely waiting for a clock",
				Fix: metrics.Fix{Text: "acquire rate limits before concurrency limits"}}
			if set, order := orderFix(r); set != nil && !a.has("acquire_order") {
				d.Fix.Text, d.Fix.Set = "acquire rate limits before concurrency limits on every path: "+strings.Join(order, " → "), set
			}
			a.add(d)
		}
	}
}

// noSteadyState: the run ended at or before the end of its warm-up, or
// its last request arrived before it (or so in one of its replications), so
// its steady-state figures are empty or measure only a backlog draining.
// The fix keeps a tenth of that span as warm-up.
func noSteadyState(a *analysis) {
	for _, w := range a.r.Warnings {
		cut, ok := w.SteadyStateCut()
		if !ok {
			continue
		}
		title, cause := "No steady state: the warm-up outlasts the run", "run.warmup leaves out everything before its end, and the run ended first"
		span := "the run's " + secs(cut.Seconds())
		if strings.Contains(w.Text, "the last request arrived") {
			title, cause = "No arrivals in the steady state: the warm-up outlasts them", "run.warmup leaves out everything before its end, and the last request arrived before it"
			span = "the " + secs(cut.Seconds()) + " in which requests arrived"
		}
		if rep, _, ok := strings.Cut(w.Text, ": "); ok && strings.HasPrefix(rep, "replication ") {
			title = strings.Replace(title, ": ", " in "+rep+": ", 1)
		}
		warmup := (cut / 10).Round(time.Millisecond)
		fix := fmt.Sprintf("keep the warm-up to a small part of the run: run.warmup = %q, a tenth of %s", warmup.String(), span)
		if warmup == 0 {
			fix = "remove the warm-up (run.warmup = \"0s\"): the requests arrive, or the run ends, within a few milliseconds of the start"
		}
		a.add(metrics.Diagnosis{Code: "no_steady_state", Severity: "warning", Title: title, Evidence: w.Text, Cause: cause,
			Fix: metrics.Fix{Text: fix, Set: map[string]any{"run.warmup": warmup.String()}}})
		return
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
	if rowsOf(s, "in_system")-from < 8 {
		return false, 0, 0
	}
	// Up to the end of arrivals: after that the line drains.
	end := from
	s.ScanNamed(from, []string{"arrivals"}, func(i int, arr []float64) bool {
		if arr[0] != 0 {
			end = i + 1
		}
		return true
	})
	if end-from < 8 {
		return false, 0, 0
	}
	q := (end - from) / 4
	var first, last, peak, at float64 // the means of the first and last quarters
	s.ScanNamed(from, []string{"in_system", "t_s"}, func(i int, v []float64) bool {
		if i == end {
			return false
		}
		if i < from+q {
			first += v[0] / float64(q)
		}
		if i >= end-q {
			last += v[0] / float64(q)
		}
		peak, at = math.Max(peak, v[0]), v[1]
		return true
	})
	return last > 100 && last > 3*first, at, peak
}
