package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
)

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
		costRej, reqRej, costName := costRejections(u)
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
		if rl := rateLimiter(r); rl != nil && rl.Scope == "global" && rl.Kind == kindname.TokenBucket {
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

// costRejections splits host u's 429s between its quotas that count cost
// (costRej, the first of them named costName) and those that count
// requests (reqRej). A host that does not say which quota refused has one
// quota, which counts cost.
func costRejections(u metrics.UpstreamStats) (costRej, reqRej int64, costName string) {
	if len(u.RejectedBy) == 0 {
		return u.Throttled, 0, ""
	}
	for _, q := range u.RejectedBy {
		if q.Unit == "cost" {
			costRej += q.Count
			if costName == "" {
				costName = quotaName(q.Quota)
			}
		} else {
			reqRej += q.Count
		}
	}
	return costRej, reqRej, costName
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
		if l.Scope != "global" || l.Family != kindname.RateFamily || l.Adaptation != nil || l.Capacity <= 0 {
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
		if l.Kind != kindname.GCRA { // a store keeps a GCRA: drop the bucket's own keys
			set[limiterKey(l, "kind")] = kindname.GCRA
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
