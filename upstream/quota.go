package upstream

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
)

// Quota is a server-side limit checked when a request starts. Kind names
// an entry of the quota kinds table; each kind reads the fields its Keys
// name.
type Quota struct {
	Kind    string
	Rate    float64
	Burst   float64
	Limit   int64
	Window  time.Duration
	Permits int64
	// Unit is what the quota counts: "" (or "requests") one per request,
	// "cost" each request's cost when it starts and its response's cost
	// when it completes (a tokens-per-minute limit).
	Unit string
	// Schedule changes a token bucket's rate during the run (a provider
	// lowering its quota, then restoring it), in ascending At.
	Schedule []RateStep
}

// RateStep sets a quota's rate from At on.
type RateStep struct {
	At   time.Duration
	Rate float64
}

// QuotaKind is one kind of server-side quota. The table of kinds is the
// one place a kind is declared: the scenario decoder and encoder, the
// checks and the server read it.
type QuotaKind struct {
	Name string
	// Keys are the fields the kind reads (besides kind), in docs order.
	Keys []string
	// Concurrency: permits held until the answer, not starts over time.
	Concurrency bool
	// Cost: the kind may count cost (unit = "cost") rather than requests.
	Cost bool
	// ExactLog: remembers every start in its window (its limit is bounded
	// by models.MaxExactLog and by the run's memory budget).
	ExactLog bool
	// Doc is the kind's line in the scenario reference.
	Doc string
	// core builds the limit; a concurrency kind returns a *models.Semaphore.
	core func(q Quota) (models.Core, error)
}

var quotaKinds = []QuotaKind{
	{Name: kindname.QuotaTokenBucket, Keys: []string{"rate", "burst", "schedule", "unit"}, Cost: true, Doc: "`rate` per second with `burst` (default: the rate); `schedule = [{ at = \"60s\", rate = 40.0 }, …]` changes the rate during the run",
		core: func(q Quota) (models.Core, error) {
			return models.NewTokenBucket(models.TokenBucketConfig{Rate: q.Rate, Burst: q.Burst, InitialFill: 1})
		}},
	{Name: kindname.QuotaFixedWindow, Keys: []string{"limit", "window", "unit"}, Cost: true, Doc: "`limit` per `window`, reset at boundaries",
		core: func(q Quota) (models.Core, error) { return models.NewFixedWindow(q.Limit, q.Window) }},
	{Name: kindname.QuotaSlidingWindow, Keys: []string{"limit", "window"}, ExactLog: true, Doc: "never more than `limit` in any `window`",
		core: func(q Quota) (models.Core, error) { return models.NewSlidingLog(q.Limit, q.Window) }},
	{Name: kindname.QuotaConcurrency, Keys: []string{"permits"}, Concurrency: true, Doc: "`permits` requests in service at once",
		core: func(q Quota) (models.Core, error) { return models.NewSemaphore(q.Permits) }},
}

// QuotaKinds returns the quota kinds in docs order.
func QuotaKinds() []QuotaKind { return slices.Clone(quotaKinds) }

// QuotaKindNames returns the quota kinds' names in docs order.
func QuotaKindNames() []string {
	out := make([]string, len(quotaKinds))
	for i, k := range quotaKinds {
		out[i] = k.Name
	}
	return out
}

// Has reports whether the kind reads key.
func (k QuotaKind) Has(key string) bool { return slices.Contains(k.Keys, key) }

// LookupQuota returns the quota kind called name.
func LookupQuota(name string) (QuotaKind, error) {
	for _, k := range quotaKinds {
		if k.Name == name {
			return k, nil
		}
	}
	return QuotaKind{}, fmt.Errorf("unknown quota kind %q", name)
}

// UnitCost is the Unit of a quota that counts cost.
const UnitCost = "cost"

// CountsCost reports whether the quota counts cost rather than requests.
func (q Quota) CountsCost() bool { return q.Unit == UnitCost }

// Name says which quota it is, for the count of 429s each refused:
// "token_bucket 100/s", "fixed_window 5000/1h0m0s", "concurrency 100",
// and "fixed_window 200000/1m0s cost" for one that counts cost.
func (q Quota) Name() string {
	suffix := ""
	if q.CountsCost() {
		suffix = " cost"
	}
	k, _ := LookupQuota(q.Kind)
	switch {
	case k.Concurrency:
		return fmt.Sprintf("%s %d", q.Kind, q.Permits)
	case k.Has("rate"):
		return fmt.Sprintf("%s %s/s%s", q.Kind, strconv.FormatFloat(q.Rate, 'g', -1, 64), suffix)
	}
	return fmt.Sprintf("%s %d/%v%s", q.Kind, q.Limit, q.Window, suffix)
}

// Size is the most the quota admits at once: a token bucket's burst, a
// window's limit, a concurrency quota's permits.
func (q Quota) Size() float64 {
	k, _ := LookupQuota(q.Kind)
	switch {
	case k.Concurrency:
		return float64(q.Permits)
	case k.Has("burst"):
		return q.Burst
	}
	return float64(q.Limit)
}

// Capacity is what the quota allows: requests (or, counting cost, units of
// cost) per second for a rate or window quota, or permits for a
// concurrency quota (concurrency true).
func (q Quota) Capacity() (c float64, concurrency bool) {
	k, err := LookupQuota(q.Kind)
	switch {
	case err != nil:
		return 0, false
	case k.Concurrency:
		return float64(q.Permits), true
	case k.Has("rate"):
		return q.Rate, false
	case q.Window > 0:
		return float64(q.Limit) / q.Window.Seconds(), false
	}
	return 0, false
}
