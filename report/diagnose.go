package report

import (
	"fmt"
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
	r.Diagnoses = Diagnose(r, s)
	if r.Diagnoses == nil {
		r.Diagnoses = []metrics.Diagnosis{}
	}
	r.Verdicts = Verdicts(r) // after the diagnoses, which they read
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
		deadlock, retryStorm, costLimitBinds, sustained429, quotaExhausted, sharedQuotaExhausted, serialised, memoryGrowth, taskFlood, tenantStarvation, staticSplit, acquireTimeouts, refusals, requestTimeouts, unhandledRefusals, burstAtStart, thunderingHerd, acquisitionOrder, noArrivals, noSteadyState, littlesLaw,
	} {
		detect(a)
	}
	out := a.out
	if hasCode(out, "thundering_herd") || hasCode(out, "retry_storm") {
		// 429s at times are the herd's or the storm's, said there.
		out = slices.DeleteFunc(out, func(d metrics.Diagnosis) bool { return d.Code == "sustained_429" && d.Severity == "warning" })
	}
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

// unhandledRefusals: a share of the requests ended refused by a server
// with a status the client's 429 handling does not apply to (503 from
// nginx's limit_req or Envoy's adaptive concurrency, 403 from a secondary
// limit): they fail at once where
// a 429 would have paused and retried. The server limits; the client does
// not know it.
func unhandledRefusals(a *analysis) {
	q := a.r.Requests
	if q.Failed < 10 || float64(q.Failed) < 0.01*float64(q.Arrived) {
		return
	}
	share := metrics.Ratio(float64(q.Failed), float64(q.Arrived))
	host, most := "", int64(0)
	for _, u := range a.r.Upstreams {
		if u.Failed > most {
			host, most = u.Host, u.Failed
		}
	}
	d := metrics.Diagnosis{Code: "unhandled_refusals", Severity: "warning", Title: "The server refuses with a status the client does not treat as a limit",
		Evidence: fmt.Sprintf("%s requests (%.0f%%) ended refused with a status not in client.on_limit.statuses, %s of the refusals at %s; goodput %s/s of %s/s offered",
			Grouped(q.Failed), 100*share, Grouped(most), host, human(a.r.Throughput.GoodputRPS, 4), human(a.r.Throughput.OfferedRPS, 4)),
		Cause: "the server limits with a status the client's 429 handling does not apply to (nginx's limit_req and Envoy's adaptive concurrency filter answer 503 unless told otherwise; a secondary limit may answer 403): those requests fail at once instead of pausing and retrying",
		Fix: metrics.Fix{Text: "treat the server's limit as a limit: list every limit status in client.on_limit.statuses so the client pauses and retries (or have the server answer 429); and keep the client's rate under the server's",
			Set: map[string]any{"client.on_limit.statuses": []any{int64(429), int64(503), int64(403)}}}}
	if share > 0.1 {
		d.Severity = "critical"
	}
	a.add(d)
}

// requestTimeouts: a large share of requests ran out their request
// deadline. Under overload a FIFO line hands its grants to the requests
// that have waited longest, which then run out of budget in flight: the
// work is done and wasted, and goodput collapses.
func requestTimeouts(a *analysis) {
	r := a.r
	q := r.Requests
	if q.TimedOut < 10 || float64(q.TimedOut) < 0.01*float64(q.Arrived) || r.RequestTimeoutS <= 0 || a.has("quota_exhausted") || stormInRun(r) {
		return
	}
	share := metrics.Ratio(float64(q.TimedOut), float64(q.Arrived))
	hit := fmt.Sprintf("the %s request timeout", secs(r.RequestTimeoutS))
	if r.AttemptTimeoutS > 0 {
		hit += fmt.Sprintf(" or, on their last attempt, the %s attempt timeout", secs(r.AttemptTimeoutS))
	}
	d := metrics.Diagnosis{Code: "request_timeouts", Severity: "warning", Title: "Requests run out their request budget",
		Evidence: fmt.Sprintf("%s requests (%.0f%%) hit %s; goodput %s/s of %s/s offered",
			Grouped(q.TimedOut), 100*share, hit, human(r.Throughput.GoodputRPS, 4), human(r.Throughput.OfferedRPS, 4)),
		Cause: "requests wait most of their budget for a limiter, then time out later (often in flight, after the upstream did the work)",
		Fix: metrics.Fix{Text: fmt.Sprintf("fail fast: an acquisition timeout of a tenth of the budget (acquire_timeout = %q) turns the excess into quick, visible refusals; then lower the offered load or raise the limit", timeoutFix(r)),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}}
	if wait, waited := lineWait(r); !waited || wait < r.RequestTimeoutS/2 {
		d.Cause, d.Fix = inFlightTimeouts(r, wait, waited)
	}
	if share > 0.1 {
		d.Severity = "critical"
	}
	a.add(d)
}

// lineWait is what a request may wait in the client's limiters, from
// which its request timeout counts: the sum of their p99 waits (a request
// passes each in turn), and whether there is any. The ingest queue is
// left out: the budget starts when a worker takes the item.
func lineWait(r *metrics.Results) (float64, bool) {
	wait := 0.0
	for _, l := range r.Limiters {
		wait += l.WaitS.P99
	}
	return wait, len(r.Limiters) > 0
}

// inFlightTimeouts is the cause and fix of request timeouts that the
// limiters do not explain (none, or p99 waits under half the budget): the
// budget goes on the attempts, their retries' backoff and pauses, where
// an acquisition timeout cannot help.
func inFlightTimeouts(r *metrics.Results, wait float64, waited bool) (string, metrics.Fix) {
	where := "there is no client limiter to wait in"
	if waited {
		where = fmt.Sprintf("the limiters wait little (p99 %s in all of the %s budget)", secs(wait), secs(r.RequestTimeoutS))
	}
	cause := fmt.Sprintf("not waiting for a limiter: %s; the budget goes on the attempts (and any retries' backoff and pauses), answered slower than it allows", where)
	if r.AttemptTimeoutS > 0 {
		cause = fmt.Sprintf("not waiting for a limiter: %s; the budget goes on the attempts: those slower than the %s attempt timeout are abandoned and retried (with any backoff and pauses) until it runs out", where, secs(r.AttemptTimeoutS))
	}
	fix := "find what slows the upstream, or give requests the time its answers take (a longer request timeout); an acquisition timeout would not help"
	if r.AttemptTimeoutS > 0 {
		fix = "find what slows the upstream, or give attempts the time its answers take (an attempt timeout above their latency, fewer retries within the budget); an acquisition timeout would not help"
	}
	if t := r.Throughput; t.GoodputRPS < 0.9*t.OfferedRPS {
		// Perhaps overloaded: then more time only lets a backlog grow.
		fix = fmt.Sprintf("goodput is %s/s of the %s/s offered. If the upstream cannot serve more, lower the offered load or cap the client's concurrency or rate, so the excess is refused at once rather than timed out: a longer timeout would only let its backlog grow. Otherwise %s",
			human(t.GoodputRPS, 4), human(t.OfferedRPS, 4), fix)
	}
	return cause, metrics.Fix{Text: fix}
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

// Shares of the steady-state intervals with 429s (the 429 rate over
// rate429Alert): from sustained429Share the 429s are sustained
// (critical); from recurring429Share they recur (a warning); fewer are
// a few spikes or the start's burst.
const (
	sustained429Share = 0.25
	recurring429Share = 0.05
)

// sustained429: 429s over the alert line, in at least a quarter of the
// steady-state intervals (critical) or a twentieth (a warning). The fix
// names the rate to set: the hosts' quota × 0.9 ÷ instances.
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
	if share < recurring429Share {
		return // a few spikes, or the start's burst (burst_at_start)
	}
	d := metrics.Diagnosis{Code: "sustained_429", Severity: "critical", Title: "Sustained 429s despite a limiter",
		Evidence: fmt.Sprintf("%.1f%% of attempts answered 429, in %.0f%% of the steady-state intervals (%s per minute)",
			100*a.rate429, 100*share, human(r.Throughput.Rate429RPS*60, 3))}
	if share < sustained429Share {
		// Over the alert line, though not in most intervals: bursts the
		// upstream refuses, a bucket's burst against a strict window.
		d.Severity, d.Title = "warning", "429s at times despite a limiter"
	}
	quota, known := quotaRPS(r)
	inst := float64(max(1, r.Instances))
	target := quota * 0.9 / inst
	rl := rateLimiter(r)
	waistCause, waistFix, waist := narrowestWaist(r)
	switch {
	case rl == nil:
		d.Title = "429s do the limiting: no client-side rate limiter"
		if d.Severity == "warning" {
			d.Title = "429s at times: no client-side rate limiter"
		}
		d.Cause = "nothing on the client counts starts per second: the upstream's 429s do the limiting, and each costs a round trip"
		d.Fix = addedBucketFix(r, quota, known)
	case r.Instances > 1:
		d.Cause = fmt.Sprintf("%d instances share one quota, each configured as if it were alone (%s at %s/s each, %s/s together)",
			r.Instances, rl.Name, human(rl.Capacity, 3), human(rl.Capacity*inst, 3))
		d.Fix.Text = fmt.Sprintf("divide the quota by the instance count (%d) and add a safety margin, or coordinate through a shared store", r.Instances)
		if known {
			d.Fix.Text = fmt.Sprintf("set %s to %s/s = quota %s/s × 0.9 ÷ %d instances, or coordinate through a shared store", rl.Name, human(target, 3), human(quota, 3), r.Instances)
			d.Fix.Set = setRate(rl, target)
		}
	case r.Instances <= 1 && waist:
		d.Cause, d.Fix = waistCause, waistFix
	default:
		d.Cause = "local rate set above the real quota"
		d.Fix.Text = "lower the local rate below the quota (quota × 0.9); treat a rising 429 rate as a configuration bug, not something to retry harder"
		if known && rl.Capacity <= quota {
			// Its rate is under the quota: its bursts are not.
			d.Cause = fmt.Sprintf("%s's rate (%s/s) is under the quota (%s/s), but its burst sends more at once than the upstream admits in its window, and those starts are refused", rl.Name, human(rl.Capacity, 3), human(quota, 3))
			burst := slackBurst(quota, 1)
			d.Fix.Text = fmt.Sprintf("set %s to %s/s = quota %s/s × 0.9 with a burst of %s (what the quota leaves above that rate in a second), or use a sliding window for a strict window quota; treat a rising 429 rate as a configuration bug, not something to retry harder", rl.Name, human(target, 3), human(quota, 3), human(burst, 3))
			if d.Fix.Set = setRate(rl, target); d.Fix.Set != nil {
				d.Fix.Set[limiterKey(rl, "burst")] = burst
			}
		} else if known {
			d.Cause = fmt.Sprintf("local rate set above the real quota (%s at %s/s against %s/s)", rl.Name, human(rl.Capacity, 3), human(quota, 3))
			d.Fix.Text = fmt.Sprintf("set %s to %s/s = quota %s/s × 0.9; treat a rising 429 rate as a configuration bug, not something to retry harder", rl.Name, human(target, 3), human(quota, 3))
			d.Fix.Set = setRate(rl, target)
		}
	}
	a.add(d)
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
			d.Fix = tenantFix(r, l)
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
		if worst.Unit == "cost" { // its line drains by cost: no count of requests bounds the wait (lineBoundFix)
			d.Fix.Text = fmt.Sprintf("lower the offered load (%s/s) or raise %s if the upstream allows", human(r.Throughput.OfferedRPS, 4), worst.Name)
		}
	}
	if d.Severity == "critical" {
		d.Fix = lineBoundFix(r, worst, bursty(a.s, a.from))
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
