package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
)

// narrowestWaist is the cause and fix of 429s that come from some hosts
// only, each host holding a quota of its own: a limit on every host
// together lets the busiest host draw past its own quota while the others
// leave theirs unused. The article: limit at the narrowest waist, per
// host for HTTP. The fix is a token bucket per host for the hosts that
// answer 429, at 0.9 of the least of their quotas, taken first (or the
// host-scoped rate limiter the client has, set to that rate). ok is false when the 429s are not so spread:
// one host, a shared quota, a host without a quota, or every host
// answering 429 alike.
func narrowestWaist(r *metrics.Results) (cause string, fix metrics.Fix, ok bool) {
	if len(r.Upstreams) < 2 || len(r.Quotas) > 0 {
		return "", metrics.Fix{}, false
	}
	least := math.Inf(1) // the least quota of the hosts that answer 429
	var hot []string
	var hotShare float64
	for _, u := range r.Upstreams {
		if u.QuotaRPS == nil {
			return "", metrics.Fix{}, false
		}
		if u.Rate429 > rate429Alert {
			hot = append(hot, u.Host)
			hotShare = math.Max(hotShare, u.Rate429)
			least = math.Min(least, *u.QuotaRPS)
		}
	}
	if len(hot) == 0 || len(hot) == len(r.Upstreams) {
		return "", metrics.Fix{}, false
	}
	rate := 0.9 * least
	cause = fmt.Sprintf("the 429s come from %s (up to %.1f%% of a host's attempts, the least quota among them %s/s) while the other hosts answer none: each host holds a quota of its own, and a limit on every host together lets the busiest draw past its own quota while the others leave theirs unused; limit at the narrowest waist, per host",
		strings.Join(hot, ", "), 100*hotShare, human(least, 3))
	for i := range r.Limiters {
		if l := &r.Limiters[i]; l.Scope == "host" && l.Family == kindname.RateFamily {
			return cause, metrics.Fix{Text: fmt.Sprintf("set %s, one per host, to %s/s = the least host quota %s/s × 0.9", l.Name, human(rate, 3), human(least, 3)),
				Set: setRate(l, rate)}, true
		}
	}
	name := unusedLimiterName(r, "per_host_rate")
	return cause, metrics.Fix{Text: fmt.Sprintf("add a token bucket per host for the hosts that answer 429, %q (scope = \"host\", hosts = [%s]) at %s/s = their least quota %s/s × 0.9, taken before the other limiters",
		name, strings.Join(hot, ", "), human(rate, 3), human(least, 3)),
		Set: addLimiterFirst(r, name, kindname.TokenBucket, rate, map[string]any{"scope": "host", "hosts": anyList(hot), "unit": "requests"})}, true
}
