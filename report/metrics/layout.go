package metrics

import "time"

// LimiterInfo describes one named limiter for the recorder.
type LimiterInfo struct {
	// Name is the limiter's name in the scenario; Kind its algorithm
	// (token_bucket, semaphore, …); Scope "global", "host", "tenant" or
	// "cluster".
	Name, Kind, Scope string
	// Releases: a concurrency limiter, whose grants hold a permit until
	// released.
	Releases bool
	// Scopes names the limiter's scope keys (hosts or tenants); one key,
	// "global", for a global limiter.
	Scopes []string
	// Capacity is what one limiter object allows: units per second for a
	// rate or window limiter (its rate, or limit ÷ window), permits for a
	// concurrency limiter. Each scope has one object per client instance.
	Capacity float64
	// Cost is the units one grant takes.
	Cost int64
	// Charged: the units vary by grant (a request's cost drawn from a
	// distribution, a reservation and its reconciliation) and are recorded
	// by LimiterCharged rather than counted as grants × Cost.
	Charged bool
	// Family is "rate", "window" or "concurrency".
	Family string
	// Unit is "cost" for a limiter that counts the requests' cost (tokens,
	// points) rather than requests; "" for one that counts requests.
	Unit string
	// Adaptive: the limit moves during the run (aimd); timeseries.csv has
	// its NAME.limit column.
	Adaptive bool
}

// QuotaInfo describes a host's server-side quota for the recorder; the
// zero QuotaInfo is no quota.
type QuotaInfo struct {
	PerSecond float64 // requests per second a rate or window quota admits
	Permits   int64   // a concurrency quota's permits
}

// Layout is the static shape of a run: what the recorder keeps apart.
type Layout struct {
	Scenario string
	Seed     uint64
	// Warmup is when the steady state starts; Interval the length of a
	// row of the time series (a second when not positive).
	Warmup   time.Duration
	Interval time.Duration
	Ingest   string // "queue" or "tasks"
	Limiters []LimiterInfo
	Hosts    []string
	Quotas   []QuotaInfo // by host; nil or zero entries: no quota
	// QuotaSchedules are the hosts' quota rate changes, by host.
	QuotaSchedules [][]QuotaStep
	Tenants        []string
	// Triggers are the scenario's transient losses of capacity, and
	// StormSettle three times the longest a request lasts (its request
	// timeout, else its retries' back-off): what Finish reads a
	// metastable failure after (Results.Storm).
	Triggers    []Trigger
	StormSettle time.Duration

	// RequestTimeout and AcquireTimeout are the request budget and the
	// acquisition timeout (0: none), reported as they are.
	RequestTimeout, AcquireTimeout time.Duration
	// AttemptTimeout is the retry policy's attempt timeout (0: none).
	AttemptTimeout time.Duration
	// Instances is how many client instances share the workload (0 is
	// one).
	Instances int
}
