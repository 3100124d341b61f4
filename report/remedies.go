package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
)

// scopeBreadth ranks a limiter's scope from the broadest (shared by the
// most requests) to the narrowest.
var scopeBreadth = map[string]int{"cluster": 0, "global": 1, "host": 2, "tenant": 3}

// orderFix is the override that makes every request take its limiters in
// one global order — rate limiters first, then concurrency limiters from
// the broadest scope to the narrowest, each group in the order the
// scenario declares them — and that order; nil when every request
// already follows it. A scenario without paths gets one path that every
// request takes, listing the limiters in that order (a file's order
// cannot be changed key by key); with paths, each path out of order is
// set in it.
func orderFix(r *metrics.Results) (map[string]any, []string) {
	var order []string
	for _, l := range r.Limiters {
		order = append(order, l.Name)
	}
	rank := limiterRanks(r)
	byRank := func(names []string) {
		sort.SliceStable(names, func(i, j int) bool { return rank[names[i]] < rank[names[j]] })
	}
	byRank(order)
	if len(r.Paths) == 0 {
		if slices.IsSortedFunc(r.Limiters, func(a, b metrics.LimiterStats) int { return rank[a.Name] - rank[b.Name] }) {
			return nil, order
		}
		return map[string]any{"client.path": onePath(order)}, order
	}
	var set map[string]any
	for _, p := range r.Paths {
		sorted := slices.Clone(p.Limiters)
		byRank(sorted)
		if slices.Equal(sorted, p.Limiters) {
			continue
		}
		if set == nil {
			set = map[string]any{}
		}
		set[pathKey(p.Name, "limiters")] = anyList(sorted)
	}
	return set, order
}

// limiterRanks ranks r's limiters in the one global order of acquisition
// (see orderFix): the lower, the earlier.
func limiterRanks(r *metrics.Results) map[string]int {
	rank := map[string]int{}
	for i, l := range r.Limiters {
		group := 0
		if l.Family == kindname.ConcurrencyFamily {
			group = 1 + scopeBreadth[l.Scope]
			if _, known := scopeBreadth[l.Scope]; !known {
				group = 1 + len(scopeBreadth)
			}
		}
		rank[l.Name] = group*len(r.Limiters) + i
	}
	return rank
}

// slackBurst is the burst a bucket at 0.9 of a quota may have, each of
// instances: what the quota leaves above that rate in a second, at least
// 1. In a window of w seconds the bucket sends its burst and its rate ×
// w, so a tenth of a second's quota keeps within any window of a second
// or more.
func slackBurst(quota, instances float64) float64 {
	return math.Max(1, math.Floor(quota/10/instances))
}

// addedBucketFix is the fix where no client-side limiter counts starts:
// a token bucket at quota × 0.9 ÷ instances, with slackBurst of burst
// (with a second of burst, jittered resumes after a pause still drew
// 2.9% of 429s in fail-thundering-herd, with a tenth none), taken first.
// Without a known quota it is text alone.
func addedBucketFix(r *metrics.Results, quota float64, known bool) metrics.Fix {
	if !known {
		return metrics.Fix{Text: "add a token bucket below the quota (quota × 0.9 ÷ instances)"}
	}
	inst := float64(max(1, r.Instances))
	target, burst := quota*0.9/inst, slackBurst(quota, inst)
	set, name := addBucketFix(r, target, burst)
	f := metrics.Fix{Set: set, Text: fmt.Sprintf("add a token bucket %q at %s/s = quota %s/s × 0.9 ÷ %d instance(s), burst %s (what the quota leaves above that rate in a second)",
		name, human(target, 3), human(quota, 3), max(1, r.Instances), human(burst, 3))}
	if len(r.Limiters) > 0 {
		f.Text += ", taken before the other limiters (rate limits before concurrency limits)"
	}
	return f
}

// addBucketFix is the override that adds a token bucket of rate per
// second and burst, taken before every other limiter, as rate limiters go
// first (see orderFix), and the bucket's name: "rate", or "rate_2" and on
// when a limiter has that name.
func addBucketFix(r *metrics.Results, rate, burst float64) (map[string]any, string) {
	name := unusedLimiterName(r, "rate")
	// The quota counts requests (a cost quota is token_limit_binds): so
	// does the bucket, whatever the requests cost.
	return addLimiterFirst(r, name, kindname.TokenBucket, rate, map[string]any{"unit": "requests", "burst": burst}), name
}

// unusedLimiterName is base, or base_2 and on when r has a limiter of
// that name.
func unusedLimiterName(r *metrics.Results, base string) string {
	name := base
	for k := 2; slices.ContainsFunc(r.Limiters, func(l metrics.LimiterStats) bool { return l.Name == name }); k++ {
		name = fmt.Sprintf("%s_%d", base, k)
	}
	return name
}

// addLimiterFirst is the override that adds the rate limiter name of kind
// at rate per second (one second of burst), with the keys extra, taken
// before every other limiter: on each declared path, or, without paths,
// on one path every request takes (the file's order cannot be changed
// key by key).
func addLimiterFirst(r *metrics.Results, name, kind string, rate float64, extra map[string]any) map[string]any {
	added := metrics.LimiterStats{Name: name, Family: kindname.RateFamily}
	set := setRate(&added, rate)
	set[limiterKey(&added, "kind")] = kind
	for k, v := range extra {
		set[limiterKey(&added, k)] = v
	}
	if len(r.Paths) > 0 {
		for _, p := range r.Paths {
			set[pathKey(p.Name, "limiters")] = anyList(append([]string{name}, p.Limiters...))
		}
	} else if len(r.Limiters) > 0 {
		order := []string{name}
		for _, l := range r.Limiters {
			order = append(order, l.Name)
		}
		set["client.path"] = onePath(order)
	}
	return set
}

// onePath is the value of client.path that sends every request through
// the limiters in order: one path, named "all".
func onePath(order []string) []any {
	return []any{map[string]any{"name": "all", "limiters": anyList(order)}}
}

// anyList is names as an override's list value.
func anyList(names []string) []any {
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = n
	}
	return list
}

// pathKey is the override key of a path's field, the name in brackets
// when it holds a dot.
func pathKey(name, field string) string {
	if strings.Contains(name, ".") {
		return "client.path[" + name + "]." + field
	}
	return "client.path." + name + "." + field
}

// fastShedS is the longest acquisition timeout that still fails fast: the
// alert line (a tenth of the request budget) or the article's 2 s,
// whichever is longer. Requests refused within it are load shed on
// purpose, not a failure.
func fastShedS(r *metrics.Results) float64 { return math.Max(alertWait(r), 2) }

// lightTenants are the tenants that ask less than an equal share.
type lightTenants struct {
	count  int
	demand float64 // requests per second they are offered
}

// heavyTenantRate is the rate each heavy tenant's own limiter gets in
// front of a shared limit of capacity per second: what the light tenants
// (offered less than an equal share) leave, less as much again as room
// for their bursts (at least a twentieth of capacity), split equally, and
// never below 0.9 of an equal share. The shared limit stays behind it as
// the burst pool: the heavy tenants together leave it that room, so a
// light tenant seldom waits there, and every tenant together stays within
// it. Also the light tenants and the heavy tenants' names.
func heavyTenantRate(r *metrics.Results, capacity float64) (float64, lightTenants, []string) {
	n := float64(len(r.Tenants))
	var light lightTenants
	var heavy []string
	for _, t := range r.Tenants {
		if d := t.ArrivalShare * r.Throughput.OfferedRPS; d < capacity/n {
			light.count++
			light.demand += d
		} else {
			heavy = append(heavy, t.Name)
		}
	}
	floor := 0.9 * capacity / n
	if len(heavy) == 0 {
		return floor, light, nil
	}
	room := math.Max(light.demand, capacity/20)
	return math.Max(floor, (capacity-light.demand-room)/float64(len(heavy))), light, heavy
}

// tenantFix caps each heavy tenant with a limiter of its own, taken
// before the shared limiter l, which stays as the burst pool: the light
// tenants no longer queue behind a heavy one's bursts, and all of them
// together stay within l (per-tenant limiters in place of l would add up
// past it whenever a light tenant bursts).
func tenantFix(r *metrics.Results, l *metrics.LimiterStats) metrics.Fix {
	if l.Family != kindname.RateFamily || r.ElapsedS <= 0 {
		// Its capacity is permits, not a rate: the heavy tenants are told
		// apart by what it granted, and no rate is proposed.
		_, _, heavy := heavyTenantRate(r, float64(l.Acquired)/math.Max(r.ElapsedS, 1))
		return metrics.Fix{Text: fmt.Sprintf("give each heavy tenant (%s) a limiter of its own, taken before %s, which stays behind it as the shared pool: per-tenant limiters with a shared burst pool",
			strings.Join(heavy, ", "), l.Name)}
	}
	each, light, heavy := heavyTenantRate(r, l.Capacity)
	name := unusedLimiterName(r, "per_tenant")
	f := metrics.Fix{Text: fmt.Sprintf("give each heavy tenant (%s) a limiter of its own, taken before %s: %s with scope = \"tenant\" at %s/s each (the %s/s %s allows, less the %s/s the %d light tenant(s) ask and as much again as room for their bursts); %s stays behind it as the shared burst pool, so the tenants together stay within %s/s",
		strings.Join(heavy, ", "), l.Name, name, human(each, 3), human(l.Capacity, 3), l.Name, human(light.demand, 3), light.count, l.Name, human(l.Capacity, 3))}
	if len(heavy) > 0 {
		// Each tenant's bucket counts what the shared one counts.
		unit := "requests"
		if l.Unit == "cost" {
			unit = "cost"
		}
		f.Set = addLimiterFirst(r, name, kindname.TokenBucket, each, map[string]any{"scope": "tenant", "tenants": anyList(heavy), "unit": unit})
	}
	return f
}

// lineBoundFix is the remedy for requests that wait out a long
// acquisition timeout: bound the limiter's line at what it grants in the
// fail-fast wait (the alert line, a tenth of the request budget, or the
// article's 2 s), so the excess is refused at once, the requests it
// admits wait no longer than that, and the line absorbs a burst of that
// length rather than holding a backlog. When the arrivals come in bursts
// (bursty), a line that short would shed a burst the limiter could serve
// in the lull after it: the bound is then what it grants in 0.9 of the
// timeout, every request it admits served in time. With no limiter to
// name, a fail-fast timeout.
func lineBoundFix(r *metrics.Results, worst *metrics.LimiterStats, bursty bool) metrics.Fix {
	if worst == nil || worst.Timeouts == 0 || r.ElapsedS <= 0 || worst.Unit == "cost" {
		f := metrics.Fix{Text: fmt.Sprintf("fail fast: an acquisition timeout of %s (acquire_timeout = %q) sheds the excess quickly instead of after %s; then lower the offered load or raise the limit if the upstream allows", timeoutFix(r), timeoutFix(r), secs(r.AcquireTimeoutS)),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}
		if worst != nil && worst.Unit == "cost" {
			// Its line drains by cost, not by requests: no count of
			// requests waiting bounds how long they wait.
			f.Text = fmt.Sprintf("%s's line drains by cost, not by requests, so no bound on the requests waiting keeps their wait short: ", worst.Name) + f.Text
		}
		return f
	}
	// What one limiter object grants: max_waiting bounds each instance's
	// and each scope's line.
	grants := float64(worst.Acquired) / r.ElapsedS / limiterObjects(r, *worst)
	if bursty {
		bound := int64(math.Max(1, math.Floor(0.9*grants*r.AcquireTimeoutS)))
		return metrics.Fix{Text: fmt.Sprintf("bound %s's waiting line at %d (each of its lines grants %s/s: what it serves in 0.9 of the %s timeout, as the arrivals come in bursts that a shorter line would shed though the lull after them could serve them), so the excess is refused at once instead of after %s and every request it admits is served in time; then lower the offered load (%s/s) or raise %s if the upstream allows",
			worst.Name, bound, human(grants, 3), secs(r.AcquireTimeoutS), secs(r.AcquireTimeoutS), human(r.Throughput.OfferedRPS, 4), worst.Name),
			Set: map[string]any{limiterKey(worst, "max_waiting"): bound}}
	}
	wait := timeoutFixS(r)
	bound := int64(math.Max(1, math.Floor(grants*wait)))
	return metrics.Fix{Text: fmt.Sprintf("bound %s's waiting line at %d (each of its lines grants %s/s: what it serves in %s, %s), so the excess is refused at once instead of after %s, the requests it admits wait at most about %s, and the line absorbs a burst rather than holding a backlog; then lower the offered load (%s/s) or raise %s if the upstream allows",
		worst.Name, bound, human(grants, 3), secs(wait), failFastWhy(r), secs(r.AcquireTimeoutS), secs(wait), human(r.Throughput.OfferedRPS, 4), worst.Name),
		Set: map[string]any{limiterKey(worst, "max_waiting"): bound}}
}

// loadShedTitle titles the acquisition timeouts of a limiter that fails
// fast on purpose: load shed, not a failure.
const loadShedTitle = "Load shed: demand exceeds the limit"

// LoadShed reports whether d is load shed on purpose: requests refused
// quickly (within the fail-fast bound, or at once by a full line) because
// demand exceeds the limit, the cost of holding it rather than a failure
// of it.
func LoadShed(d metrics.Diagnosis) bool {
	return (d.Code == "acquire_timeouts" && d.Title == loadShedTitle) || (d.Code == "refusals" && d.Severity != "critical")
}

// serialisedFix: sleep outside the lock. A locked_bucket becomes a
// token_bucket: no lock held while waiting, and a FIFO line whose head
// alone holds a timer, fair to every waiter. The article's own polling
// bucket also sleeps outside its lock, but every waiter polls: it is not
// fair, and under load it wakes thousands of waiters a tick.
func serialisedFix(l metrics.LimiterStats) metrics.Fix {
	f := metrics.Fix{Text: "sleep outside the lock; only mutate state inside it"}
	if l.Kind == kindname.LockedBucket {
		f.Text += fmt.Sprintf(": kind = %q for %s (the same rate and burst with no lock held while waiting, and a FIFO line that wakes one waiter at a time; the article's polling bucket sleeps outside its lock too, but wakes every waiter on every poll and serves them in no order)", kindname.TokenBucket, l.Name)
		f.Set = map[string]any{limiterKey(&l, "kind"): kindname.TokenBucket, limiterKey(&l, "handoff"): nil, limiterKey(&l, "lag"): nil}
	}
	return f
}

// burstFix: start the buckets partially filled (a tenth of their burst).
func burstFix(r *metrics.Results) metrics.Fix {
	f := metrics.Fix{Text: "start the bucket partially filled (initial_fill)"}
	var names []string
	set := map[string]any{}
	for i := range r.Limiters {
		l := &r.Limiters[i]
		if l.Kind == kindname.TokenBucket || l.Kind == kindname.PollingBucket || l.Kind == kindname.LockedBucket {
			set[limiterKey(l, "initial_fill")] = 0.1
			names = append(names, l.Name)
		}
	}
	if len(names) > 0 {
		f.Text = fmt.Sprintf("start %s a tenth full (initial_fill = 0.1)", strings.Join(names, ", "))
		f.Set = set
	}
	if r.Instances > 1 {
		// No key staggers the instances' starts: every instance of a
		// scenario starts at 0.
		f.Text += "; in production, stagger the instances' starts too (every instance here starts at once)"
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
	if l.Family != kindname.RateFamily {
		return nil
	}
	rate = math.Round(rate*1000) / 1000
	return map[string]any{limiterKey(l, "rate"): rate, limiterKey(l, "burst"): math.Max(1, math.Ceil(rate))}
}

// timeoutFix is the acquisition timeout a diagnosis proposes: the alert
// line (a tenth of the request budget), or the article's 2 s.
func timeoutFix(r *metrics.Results) string { return fmt.Sprintf("%gs", timeoutFixS(r)) }

// failFastWhy says where timeoutFixS comes from.
func failFastWhy(r *metrics.Results) string {
	if alertWait(r) > 0 {
		return "the alert line, a tenth of the request budget"
	}
	return "the article's fail-fast acquisition timeout"
}

// timeoutFixS is timeoutFix in seconds.
func timeoutFixS(r *metrics.Results) float64 {
	if a := alertWait(r); a > 0 {
		return a
	}
	return 2
}

// quotaRPS is the requests per second the hosts' rate quotas admit
// together, and whether any host has one. A shared quota (quotas[])
// holds the hosts it counts to the least of its rate and the sum of
// theirs (a host without a rate quota of its own leaves it the shared
// one's).
func quotaRPS(r *metrics.Results) (float64, bool) {
	var sum float64
	known := false
	grouped := map[string]bool{}
	for _, q := range r.Quotas {
		if q.QuotaRPS == nil {
			continue
		}
		own, bounded := 0.0, true
		for _, h := range q.Upstreams {
			if grouped[h] {
				continue // counted with an earlier shared quota
			}
			grouped[h] = true
			if u := hostStats(r, h); u != nil && u.QuotaRPS != nil {
				own += *u.QuotaRPS
			} else {
				bounded = false
			}
		}
		if bounded {
			sum += math.Min(own, *q.QuotaRPS)
		} else {
			sum += *q.QuotaRPS
		}
		known = true
	}
	for _, u := range r.Upstreams {
		if u.QuotaRPS != nil && !grouped[u.Host] {
			sum += *u.QuotaRPS
			known = true
		}
	}
	return sum, known
}

// hostStats is host's entry of upstreams[], or nil.
func hostStats(r *metrics.Results, host string) *metrics.UpstreamStats {
	for i := range r.Upstreams {
		if r.Upstreams[i].Host == host {
			return &r.Upstreams[i]
		}
	}
	return nil
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
