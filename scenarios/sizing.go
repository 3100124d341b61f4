package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/sim/client"
	"github.com/limitsim/limitsim/upstream"
)

// Sizing is the article's sizing table worked out for one quota (limitsim
// size, and its --json).
type Sizing struct {
	Inputs      SizingInputs  `json:"inputs"`
	LatencyMean float64       `json:"latency_mean_s"`
	PerInstance SizingFigures `json:"per_instance"`
	Total       SizingFigures `json:"total"`
	Verify      *SizingCheck  `json:"verify,omitempty"`
}

// SizingInputs is what a sizing starts from: the published quota, the
// instances sharing it, the latency profile, and optionally a memory budget
// and a window limit.
type SizingInputs struct {
	QuotaRPS     float64 `json:"quota_rps"`
	Instances    int     `json:"instances"`
	LatencyP50   float64 `json:"latency_p50_s"`
	LatencyP99   float64 `json:"latency_p99_s"`
	MemoryBytes  float64 `json:"memory_budget_bytes,omitempty"`
	ResponseP99  float64 `json:"response_p99_bytes,omitempty"`
	WindowLimit  int64   `json:"window_limit,omitempty"`
	WindowS      float64 `json:"window_s,omitempty"`
	SafetyMargin float64 `json:"safety_margin"`
}

// SizingFigures are the limits to configure, per instance or in total.
type SizingFigures struct {
	// Rate is the token-bucket rate: quota × margin (÷ instances).
	Rate float64 `json:"rate"`
	// Burst is the bucket capacity: one second of the rate.
	Burst float64 `json:"burst"`
	// Concurrency is where the quota saturates: rate × mean latency.
	Concurrency float64 `json:"concurrency"`
	// MemorySemaphore is the memory budget ÷ the p99 response size.
	MemorySemaphore int64 `json:"memory_semaphore,omitempty"`
	// WindowLimit is the sliding-window limit: published limit − in-flight
	// allowance.
	WindowLimit int64 `json:"window_limit,omitempty"`
	// WaitingBound bounds the waiting line: one second of the rate, enough
	// to absorb a burst, not a backlog.
	WaitingBound int64 `json:"waiting_bound"`
}

// SizingCheck is what simulating the sized configuration found.
type SizingCheck struct {
	Holds      bool    `json:"holds"`
	Rate429    float64 `json:"rate_429"`
	GoodputRPS float64 `json:"goodput_rps"`
	Note       string  `json:"note"`
}

// Size works out the article's sizing table for in: rate = quota ×
// margin ÷ instances with a second of burst, concurrency = quota × mean
// latency (Little's Law) ÷ instances, and the memory and window limits.
func Size(in SizingInputs) (*Sizing, error) {
	lat, err := upstream.NewLatency(upstream.Spec{Dist: "lognormal",
		P50: time.Duration(in.LatencyP50 * 1e9), P99: time.Duration(in.LatencyP99 * 1e9)})
	if err != nil {
		return nil, err
	}
	mean := lat.Mean().Seconds()
	if !(mean > 0) || lat.Mean() >= 1<<62 {
		return nil, fmt.Errorf("latency p99 (%gs) is too far above p50 (%gs): the lognormal through them has no mean a duration holds", in.LatencyP99, in.LatencyP50)
	}
	n := float64(in.Instances)
	total := SizingFigures{Rate: in.QuotaRPS * in.SafetyMargin}
	total.Burst = math.Max(1, math.Ceil(total.Rate))
	total.Concurrency = in.QuotaRPS * mean
	total.WaitingBound = int64(total.Burst)
	per := SizingFigures{Rate: total.Rate / n}
	per.Burst = math.Max(1, math.Ceil(per.Rate))
	per.Concurrency = math.Ceil(total.Concurrency / n)
	per.WaitingBound = int64(per.Burst)
	if in.MemoryBytes > 0 && in.ResponseP99 > 0 {
		per.MemorySemaphore = int64(in.MemoryBytes / in.ResponseP99)
		total.MemorySemaphore = per.MemorySemaphore * int64(in.Instances)
	}
	if in.WindowLimit > 0 && in.WindowS > 0 {
		allowance := int64(math.Ceil(float64(in.WindowLimit) / in.WindowS * mean))
		total.WindowLimit = max(1, in.WindowLimit-allowance)
		per.WindowLimit = max(1, total.WindowLimit/int64(in.Instances))
	}
	return &Sizing{Inputs: in, LatencyMean: mean, PerInstance: per, Total: total}, nil
}

// Check simulates the sized configuration: the instances, each with its
// bucket and a semaphore of the sized concurrency, offered exactly the
// quota for 120 s against a server quota of the published rate, and says
// whether the arithmetic holds (under 1% 429s and at least 85% of the
// sized rate as goodput).
func (s *Sizing) Check() (*SizingCheck, error) {
	bucket, err := models.LookupKind("token_bucket")
	if err != nil {
		return nil, err
	}
	sem, err := models.LookupKind("semaphore")
	if err != nil {
		return nil, err
	}
	in, per := s.Inputs, s.PerInstance
	cfg := &client.Config{
		Name: "size-verify",
		Run: client.RunSettings{Seed: 1, Duration: 120 * time.Second, Warmup: 20 * time.Second, Interval: time.Second,
			Replications: 1, MaxEvents: 1e9, MaxLiveRequests: 1e6, MaxEventsPerInstant: 1e6},
		Workload: client.Workload{Arrivals: arrivals.Spec{Kind: arrivals.KindPoisson, Rate: in.QuotaRPS}, Cost: 1,
			Hosts: []client.Share{{Name: "api", Weight: 1}}, Tenants: []client.Tenant{{Share: client.Share{Name: "default", Weight: 1}}}},
		Instances:      in.Instances,
		RequestTimeout: 30 * time.Second,
		Limiters: []client.LimiterConfig{
			{Name: "bucket", Kind: bucket, Params: models.Params{Rate: per.Rate, Burst: per.Burst, InitialFill: 1}},
			{Name: "conns", Kind: sem, Params: models.Params{Permits: int64(max(1, per.Concurrency))}},
		},
		On429: client.On429{Pause: client.PauseHost, HonorRetryAfter: true},
		Retry: client.Retry{Attempts: 1},
		Upstreams: []upstream.Config{{Host: "api", RejectLatency: 5 * time.Millisecond,
			RetryAfter: upstream.RetryAfter{Fixed: time.Second},
			Latency:    upstream.Spec{Dist: "lognormal", P50: time.Duration(in.LatencyP50 * 1e9), P99: time.Duration(in.LatencyP99 * 1e9)},
			Quotas:     []upstream.Quota{{Kind: "token_bucket", Rate: in.QuotaRPS, Burst: math.Max(1, in.QuotaRPS)}}}},
	}
	out, err := client.Run(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	r := out.Results
	v := &SizingCheck{Rate429: r.Rate429, GoodputRPS: r.Throughput.GoodputRPS}
	want := 0.85 * in.QuotaRPS * in.SafetyMargin
	switch {
	case r.Rate429 >= 0.01:
		v.Note = fmt.Sprintf("the arithmetic does not hold: %.1f%% of attempts answered 429; lower the rate", 100*r.Rate429)
	case r.Throughput.GoodputRPS < want:
		v.Note = fmt.Sprintf("goodput %.4g/s is under %.4g/s: the concurrency binds before the rate; raise it above %.0f per instance", r.Throughput.GoodputRPS, want, per.Concurrency)
	default:
		v.Holds = true
		v.Note = fmt.Sprintf("holds: %.4g/s of goodput with %.2f%% 429s, offered the full quota", r.Throughput.GoodputRPS, 100*r.Rate429)
	}
	return v, nil
}
