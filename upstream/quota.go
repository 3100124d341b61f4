package upstream

import (
	"fmt"
	"math/rand/v2"
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
	// Per is the unit an nginx rate is written in: time.Second for "r/s"
	// (and 0), time.Minute for "r/m"; Rate is per second either way.
	Per time.Duration
	// NoDelay and Delay are nginx limit_req's nodelay and delay=: the
	// excess requests served at once rather than delayed.
	NoDelay bool
	Delay   int64
	// MaxTokens, TokensPerFill and FillInterval are Envoy's local rate
	// limit token bucket.
	MaxTokens     int64
	TokensPerFill int64
	FillInterval  time.Duration
	// SampleAggregatePercentile, ConcurrencyUpdateInterval,
	// MaxConcurrencyLimit and MinRTTCalc are Envoy's adaptive concurrency
	// filter's gradient controller, with Envoy's names (percents as Envoy
	// writes them, 50 for p50); the scenario decoder fills Envoy's
	// defaults (DefaultMinRTTCalc and the constants beside it).
	SampleAggregatePercentile float64
	ConcurrencyUpdateInterval time.Duration
	MaxConcurrencyLimit       int64
	MinRTTCalc                MinRTTCalcParams
	// Status is the HTTP status of a refusal (429, 503 or 403); 0 reads
	// as the kind's default (QuotaKind.Status).
	Status int
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
	// Uncounted: the server never counts a refused request against it, so
	// it cannot take part in RefusedAll.
	Uncounted bool
	// Whole: rate and burst are whole requests, as a server's
	// configuration writes them (rate "50r/s" or "600r/m"; burst default 0).
	Whole bool
	// Gate: checked when a request reaches the server, before its workers'
	// queue, and told when the server answers it (a proxy's filter in
	// front of the server: Envoy's adaptive concurrency); a server has at
	// most one. Other quotas are checked when service starts.
	Gate bool
	// Status is the HTTP status the kind refuses with by default.
	Status int
	// Doc is the kind's line in the scenario reference.
	Doc string
	// core builds the limit; a concurrency kind returns a *models.Semaphore.
	core func(q Quota) (models.Core, error)
	// gate builds a Gate kind's limit instead, with its random stream.
	gate func(q Quota, rng *rand.Rand) (*adaptiveConcurrency, error)
	// size and capacity, if set, replace Quota.Size's and
	// Quota.Capacity's reading of the generic fields.
	size, capacity func(q Quota) float64
}

// Statuses are the HTTP statuses a quota may refuse with.
var Statuses = []int{429, 503, 403}

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
	{Name: kindname.QuotaNginxLimitReq, Keys: []string{"rate", "burst", "nodelay", "delay"}, Whole: true, Uncounted: true, Status: 503,
		Doc:  "nginx's `limit_req`: `rate` as nginx writes it (`\"50r/s\"`, `\"600r/m\"`, or a whole number per second), `burst` (default 0), `nodelay`, `delay`; admitted requests beyond the first `delay` excess ones are held by the server before service",
		core: func(q Quota) (models.Core, error) { return newLimitReq(q) },
		size: func(q Quota) float64 { return q.Burst + 1 }},
	{Name: kindname.QuotaNginxLimitConn, Keys: []string{"conn"}, Concurrency: true, Status: 503, Doc: "nginx's `limit_conn`: `conn` requests in service at once",
		core: func(q Quota) (models.Core, error) { return models.NewSemaphore(q.Permits) }},
	{Name: kindname.QuotaEnvoyLocal, Keys: []string{"max_tokens", "tokens_per_fill", "fill_interval"}, Uncounted: true,
		Doc:  "Envoy's local rate limit: a bucket of `max_tokens` (full at the start) given `tokens_per_fill` (default 1) every `fill_interval`, in steps",
		core: func(q Quota) (models.Core, error) { return newLocalRateLimit(q) },
		size: func(q Quota) float64 { return float64(q.MaxTokens) },
		capacity: func(q Quota) float64 {
			return float64(max(1, q.TokensPerFill)) / q.FillInterval.Seconds()
		}},
	{Name: kindname.QuotaEnvoyAdaptiveConcurrency, Keys: []string{"sample_aggregate_percentile", "concurrency_limit_params", "min_rtt_calc_params"},
		Gate: true, Uncounted: true, Status: 503,
		Doc: "Envoy's adaptive concurrency filter (gradient controller), in front of the server's workers: requests beyond a concurrency limit it adapts to their latency are refused at once. " +
			"`sample_aggregate_percentile` (default 50), `concurrency_limit_params = { concurrency_update_interval = \"100ms\" (required), max_concurrency_limit = 1000 }`, " +
			"`min_rtt_calc_params = { interval = \"60s\", request_count = 50, jitter = 15, min_concurrency = 3, buffer = 25 }` (percents as Envoy writes them)",
		gate:     newAdaptiveConcurrency,
		capacity: func(Quota) float64 { return 0 }},
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

// DefaultStatus is the status the kind refuses with unless told: its
// Status, or 429.
func (k QuotaKind) DefaultStatus() int {
	if k.Status == 0 {
		return 429
	}
	return k.Status
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
	case k.Gate:
		return fmt.Sprintf("%s max %d", q.Kind, q.MaxConcurrencyLimit)
	case k.Has("fill_interval"):
		return fmt.Sprintf("%s %d/%v", q.Kind, max(1, q.TokensPerFill), q.FillInterval)
	case k.Has("rate"):
		return fmt.Sprintf("%s %s/s%s", q.Kind, strconv.FormatFloat(q.Rate, 'g', -1, 64), suffix)
	}
	return fmt.Sprintf("%s %d/%v%s", q.Kind, q.Limit, q.Window, suffix)
}

// Size is the most the quota admits at once: a token bucket's burst, a
// window's limit, a concurrency quota's permits, nginx limit_req's burst
// plus the request that finds it empty, Envoy's max_tokens.
func (q Quota) Size() float64 {
	k, _ := LookupQuota(q.Kind)
	switch {
	case k.size != nil:
		return k.size(q)
	case k.Concurrency:
		return float64(q.Permits)
	case k.Has("burst"):
		return q.Burst
	}
	return float64(q.Limit)
}

// Capacity is what the quota allows: requests (or, counting cost, units of
// cost) per second for a rate or window quota, or permits for a
// concurrency quota (concurrency true); 0 for a quota that adapts (Envoy's
// adaptive concurrency).
func (q Quota) Capacity() (c float64, concurrency bool) {
	k, err := LookupQuota(q.Kind)
	switch {
	case err != nil:
		return 0, false
	case k.capacity != nil:
		return k.capacity(q), false
	case k.Concurrency:
		return float64(q.Permits), true
	case k.Has("rate"):
		return q.Rate, false
	case q.Window > 0:
		return float64(q.Limit) / q.Window.Seconds(), false
	}
	return 0, false
}

// RefusalStatus is the HTTP status the quota refuses with: Status, or its
// kind's default.
func (q Quota) RefusalStatus() int {
	if q.Status != 0 {
		return q.Status
	}
	k, _ := LookupQuota(q.Kind)
	return k.DefaultStatus()
}
