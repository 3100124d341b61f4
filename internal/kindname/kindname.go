package kindname

// Limiter kinds, in the kinds table's order.
const (
	TokenBucket          = "token_bucket"
	GCRA                 = "gcra"
	XRate                = "xrate"
	PollingBucket        = "polling_bucket"
	LockedBucket         = "locked_bucket"
	AIMD                 = "aimd"
	SREThrottle          = "sre_throttle"
	SlidingWindow        = "sliding_window"
	SlidingWindowCounter = "sliding_window_counter"
	FixedWindow          = "fixed_window"
	AIMDConcurrency      = "aimd_concurrency"
	Vegas                = "vegas"
	Gradient2            = "gradient2"
	Semaphore            = "semaphore"
)

// Limiter families: what a kind counts (models.Family).
const (
	RateFamily        = "rate"
	WindowFamily      = "window"
	ConcurrencyFamily = "concurrency"
)

// Server quota kinds, in the quota table's order.
const (
	QuotaTokenBucket   = "token_bucket"
	QuotaFixedWindow   = "fixed_window"
	QuotaSlidingWindow = "sliding_window"
	QuotaConcurrency   = "concurrency"
	// Quotas as servers implement them, with the servers' own parameters.
	QuotaNginxLimitReq  = "nginx_limit_req"
	QuotaNginxLimitConn = "nginx_limit_conn"
	QuotaEnvoyLocal     = "envoy_local_rate_limit"
	// QuotaEnvoyAdaptiveConcurrency is Envoy's adaptive concurrency filter.
	QuotaEnvoyAdaptiveConcurrency = "envoy_adaptive_concurrency"
)
