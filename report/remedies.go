package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// scopeBreadth ranks a limiter's scope from the broadest (shared by the
// most requests) to the narrowest.
var scopeBreadth = map[string]int{"cluster": 0, "global": 1, "host": 2, "tenant": 3}

// orderFix is the override that makes every declared path take its
// limiters in one global order — rate limiters first, then concurrency
// limiters from the broadest scope to the narrowest, each group in the
// order the scenario declares them — and that order; nil when the
// scenario declares no paths or every path already follows it.
func orderFix(r *metrics.Results) (map[string]any, []string) {
	rank := map[string]int{}
	for i, l := range r.Limiters {
		group := 0
		if l.Family == "concurrency" {
			group = 1 + scopeBreadth[l.Scope]
			if _, known := scopeBreadth[l.Scope]; !known {
				group = 1 + len(scopeBreadth)
			}
		}
		rank[l.Name] = group*len(r.Limiters) + i
	}
	var set map[string]any
	var order []string
	for _, l := range r.Limiters {
		order = append(order, l.Name)
	}
	sort.SliceStable(order, func(i, j int) bool { return rank[order[i]] < rank[order[j]] })
	for _, p := range r.Paths {
		sorted := slices.Clone(p.Limiters)
		sort.SliceStable(sorted, func(i, j int) bool { return rank[sorted[i]] < rank[sorted[j]] })
		if slices.Equal(sorted, p.Limiters) {
			continue
		}
		if set == nil {
			set = map[string]any{}
		}
		list := make([]any, len(sorted))
		for i, n := range sorted {
			list[i] = n
		}
		set[pathKey(p.Name, "limiters")] = list
	}
	return set, order
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

// lightTenants sums the tenants that ask less than their equal share.
type lightTenants struct {
	count  int
	demand float64 // requests per second they are offered
}

// tenantShare is the rate each tenant's own limiter gets when a shared
// limit of capacity per second is split by tenant: the light tenants
// (offered less than an equal share) keep what they ask, and the heavy
// ones share the rest equally, so the total stays at capacity while a
// light tenant never waits behind a heavy one. The rate is never below
// an equal share.
func tenantShare(r *metrics.Results, capacity float64) (float64, lightTenants) {
	n := float64(len(r.Tenants))
	var light lightTenants
	for _, t := range r.Tenants {
		if d := t.ArrivalShare * r.Throughput.OfferedRPS; d < capacity/n {
			light.count++
			light.demand += d
		}
	}
	heavy := len(r.Tenants) - light.count
	if heavy == 0 {
		return capacity / n, light
	}
	return math.Max(capacity/n, (capacity-light.demand)/float64(heavy)), light
}

// lineBoundFix is the remedy for requests that wait out a long
// acquisition timeout: bound the limiter's line at what it grants in 0.9
// of the timeout, so the excess is refused at once, and every request it
// admits is served in time, while the line still absorbs a burst (a
// shorter timeout would shed what the line serves between bursts). With
// no limiter to name, a fail-fast timeout.
func lineBoundFix(r *metrics.Results, worst *metrics.LimiterStats) metrics.Fix {
	if worst == nil || worst.Timeouts == 0 || r.ElapsedS <= 0 {
		return metrics.Fix{Text: fmt.Sprintf("fail fast: an acquisition timeout of %s (acquire_timeout = %q) sheds the excess quickly instead of after %s; then lower the offered load or raise the limit if the upstream allows", timeoutFix(r), timeoutFix(r), secs(r.AcquireTimeoutS)),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}
	}
	grants := float64(worst.Acquired) / r.ElapsedS
	bound := int64(math.Max(1, math.Floor(0.9*grants*r.AcquireTimeoutS)))
	return metrics.Fix{Text: fmt.Sprintf("bound %s's waiting line at %d (it grants %s/s: what it serves in 0.9 of the %s timeout), so the excess is refused at once instead of after %s and every request it admits is served in time; then lower the offered load (%s/s) or raise %s if the upstream allows",
		worst.Name, bound, human(grants, 3), secs(r.AcquireTimeoutS), secs(r.AcquireTimeoutS), human(r.Throughput.OfferedRPS, 4), worst.Name),
		Set: map[string]any{limiterKey(worst, "max_waiting"): bound}}
}

// loadShedTitle titles the acquisition timeouts of a limiter that fails
// fast on purpose: load shed, not a failure.
const loadShedTitle = "Load shed: demand exceeds the limit"

// LoadShed reports whether d is load shed on purpose: requests refused
// quickly (within the fail-fast bound) because demand exceeds the limit,
// the cost of holding it rather than a failure of it.
func LoadShed(d metrics.Diagnosis) bool {
	return d.Code == "acquire_timeouts" && d.Title == loadShedTitle
}
