package client

import (
	"slices"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/models/retry"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// Config is one simulated client deployment and its upstreams: what a
// scenario file describes, as plain Go values. Build a Config in code, or
// decode a scenario file into one with scenarios.Build.
type Config struct {
	Name string
	Run  RunSettings
	// Workload is the arrival process and how arrivals spread over hosts
	// and tenants.
	Workload Workload
	// Instances is how many client processes share the workload (each
	// with its own limiters, all drawing on the same upstream quotas).
	Instances int
	// InstanceWeights splits the workload between instances in these
	// proportions (one per instance); nil splits it evenly.
	InstanceWeights []float64
	// Ingest is the bounded ingest queue and its workers; nil for one task
	// per request.
	Ingest *Ingest
	// MaxParked bounds the requests of one instance waiting on limiters
	// when there is no ingest queue (one task per request): an arrival
	// that finds that many waiting is rejected at once, before it takes
	// anything.
	MaxParked      models.Bound
	AcquireTimeout time.Duration // 0: none
	RequestTimeout time.Duration // 0: none; starts when processing begins
	Limiters       []LimiterConfig
	// Paths are request classes, each taking its limiters in its own
	// order; when empty, one path takes every limiter in order.
	Paths []Path
	On429 On429
	Retry Retry
	// Headers is how the client reads the server's rate-limit headers.
	Headers Headers
	// Reserve is what a request reserves on the limiters that count cost
	// for its response's cost, reconciled when the response arrives.
	Reserve Reserve
	// Upstreams holds one modeled server per workload host, in host order.
	Upstreams []upstream.Config
	// SharedQuotas are quotas several hosts count together, each built
	// once per run and checked by every server of the hosts it names.
	SharedQuotas []upstream.SharedConfig
	// Warnings are carried into the results as they are.
	Warnings []metrics.Warning
}

// RunSettings are the run's length, statistics and guards.
type RunSettings struct {
	Seed         uint64
	Requests     int64         // 0: limited by Duration
	Duration     time.Duration // 0: limited by Requests
	Warmup       time.Duration
	Interval     time.Duration
	Replications int
	// Guards: a run that trips one stops with partial, valid outputs
	// marked incomplete.
	MaxEvents           int64
	MaxLiveRequests     int64
	MaxEventsPerInstant int64
}

// Workload is where requests come from and where they go.
type Workload struct {
	// Arrivals is the workload's arrival process, unless Backlog is set or
	// every tenant brings its own.
	Arrivals arrivals.Spec
	// Backlog: Run.Requests targets are ready at t = 0 and each instance's
	// producer feeds its share into the ingest as fast as it accepts.
	Backlog bool
	// Cost is the tokens (or window units) one request takes, unless
	// CostDist is set.
	Cost int64
	// CostDist, if set, draws each request's cost (its input tokens, known
	// before it is sent) from a count distribution (see upstream.Count);
	// a retry keeps its request's cost.
	CostDist   upstream.Dist
	Hosts      []Share
	RoundRobin bool // hosts in turn rather than at random by weight
	Tenants    []Tenant
}

// OwnArrivals reports whether tenants bring their own arrival processes.
func (w *Workload) OwnArrivals() bool { return len(w.Tenants) > 0 && w.Tenants[0].Arrivals != nil }

// Share is a named share of the workload.
type Share struct {
	Name   string
	Weight float64
}

// Tenant is a share of the workload that may bring its own arrivals (then
// the workload is the superposition of every tenant's process).
type Tenant struct {
	Share
	Arrivals *arrivals.Spec
}

// Ingest is a bounded queue in front of a fixed pool of workers.
type Ingest struct {
	Capacity models.Bound
	// Block: a producer waits for space (`await queue.put`); otherwise a
	// full queue rejects.
	Block   bool
	Workers int
}

// Scope says which requests share one limiter object.
type Scope uint8

// Limiter scopes.
const (
	Global    Scope = iota // one limiter for every request of an instance
	PerHost                // one per host
	PerTenant              // one per tenant
	Cluster                // one limiter shared by every instance, in a store (Store)
)

var scopeNames = [...]string{"global", "host", "tenant", "cluster"}

func (s Scope) String() string { return scopeNames[s] }

// LimiterConfig is one named client-side limiter: its kind from the kinds
// table, the kind's parameters, and which requests share one object.
type LimiterConfig struct {
	Name   string
	Kind   models.Kind
	Params models.Params
	Scope  Scope
	// Only limits the scope to these hosts or tenants (empty: all).
	Only []string
	// CountsRequests: the limiter takes one unit per request rather than
	// the request's cost (unit = "requests"); concurrency limiters always
	// take one permit.
	CountsRequests bool
	// Store is the shared store of a Cluster limiter (a GCRA kept as
	// go-redis/redis_rate keeps it in Redis).
	Store *models.StoreConfig
}

// Path is a request class: a weight and the limiters it takes, in order
// (indices into Config.Limiters).
type Path struct {
	Name     string
	Weight   float64
	Limiters []int
	// Cost, or CostDist when set, replaces the workload's cost for the
	// path's requests; neither set (Cost 0): the workload's.
	Cost     int64
	CostDist upstream.Dist
	// Method is the path's HTTP method, reported with it.
	Method string
}

// ownCost reports whether the path's requests cost other than the
// workload's.
func (p Path) ownCost() bool { return p.Cost > 0 || p.CostDist != nil }

// PauseScope says who waits out a 429's pause.
type PauseScope uint8

// Pause scopes.
const (
	PauseHost   PauseScope = iota // every caller of the host, per instance
	PauseCaller                   // only the caller that got the 429
	PauseNone                     // nobody; retries follow the back-off
)

// On429 is the client's reaction to a 429.
type On429 struct {
	Pause PauseScope
	// CheckAtSend also checks the host pause after the limiters, just
	// before sending (the entry check always runs).
	CheckAtSend bool
	// LatestEnd makes every 429 set the host's pause to end at its own
	// now + delay, as the article's paused_until[host] = now + delay does,
	// shortening a pause in force when its delay is shorter; otherwise the
	// pause ends at the later of the two ends.
	LatestEnd       bool
	HonorRetryAfter bool
	// Fallback is the pause when the answer carries no Retry-After.
	Fallback models.Jitter
	// ResumeJitter is added per caller to the end of a pause.
	ResumeJitter models.Jitter
	// Statuses are the refusal statuses the client treats as a 429
	// (paused on, retried, counted as throttled); nil: 429 alone. A
	// refusal with another status is a failure: the request ends with it.
	Statuses []int
}

// Throttles reports whether the client treats a refusal with status as a
// 429 (status 0, a refusal without one, reads as 429).
func (o *On429) Throttles(status int) bool {
	if status == 0 {
		status = 429
	}
	if o.Statuses == nil {
		return status == 429
	}
	return slices.Contains(o.Statuses, status)
}

// Headers is the client's use of rate-limit headers.
type Headers struct {
	// PauseAtZero pauses the host (per instance) when an answer says no
	// requests remain, until the reset it names; and when its tokens
	// family (the quotas that count cost) says fewer remain than the
	// request would take (its cost plus its reservation), for the share of
	// the tokens' reset that shortfall is of what is missing: exact for a
	// bucket that refills steadily.
	PauseAtZero bool
	// SlowBelow, when positive, paces the host (per instance) once an
	// answer says fewer than SlowBelow requests remain: the remaining ones
	// are spread evenly until the reset it names, one send every reset ÷
	// remaining, until an answer says SlowBelow or more remain or the
	// reset passes.
	SlowBelow int64
}

// Estimate says how a request's response cost is estimated for its
// reservation.
type Estimate uint8

// Reservation estimates.
const (
	// EstimateNone reserves nothing: the limiters that count cost take the
	// request's own cost and never learn the response's.
	EstimateNone Estimate = iota
	// EstimateFixed reserves Reserve.Fixed (0: charge the response's cost
	// only once it is known).
	EstimateFixed
	// EstimateP50 and EstimateP90 reserve that quantile of the response
	// costs the instance has observed (Reserve.Fixed before the first).
	EstimateP50
	EstimateP90
)

// Reserve is how well-behaved clients of a cost-metered API (a language
// model's tokens per minute) hold their limiters: each request takes its
// own cost plus an estimate of its response's cost when it acquires, and
// when the response arrives the limiters are charged the difference from
// the real cost (or given back the excess); a 429 gives the estimate back.
type Reserve struct {
	Estimate Estimate
	Fixed    int64
}

// read reports whether the client reads the rate-limit headers at all.
func (h Headers) read() bool { return h.PauseAtZero || h.SlowBelow > 0 }

// Retry is the retry policy for 429s.
type Retry struct {
	Attempts int // including the first
	Backoff  retry.Backoff
	// Budget, when positive, caps the retries of each instance over the
	// last BudgetWindow at Budget × the requests it started in that window
	// (0.1: retries add at most 10% to the load); a retry beyond it is not
	// made and the request ends with its 429.
	Budget       float64
	BudgetWindow time.Duration
	// Tokens, when positive, is gRPC's retry throttling: each instance
	// holds up to Tokens tokens (starting full), a 429 takes one, a
	// success gives back TokenRatio, and a retry is made only while more
	// than half remain.
	Tokens     float64
	TokenRatio float64
	// SDK is a retry policy as an SDK ships it, on top of the fields
	// above (its attempts and back-off are set in them): the AWS retry
	// quota, gRPC's retry throttling, the AWS adaptive send-rate limiter,
	// each kept per instance and host.
	SDK SDK
	// ThrottleTokens and ThrottleRatio are gRPC's retryThrottling
	// maxTokens and tokenRatio for SDK GRPC (0 tokens: not throttled),
	// counted exactly (retry.Throttle) where Tokens counts in floats.
	ThrottleTokens, ThrottleRatio float64
}

// SDK names a retry policy as an SDK ships it.
type SDK uint8

// SDK retry policies.
const (
	// NoSDK: the retry policy is the generic one of Retry alone.
	NoSDK SDK = iota
	// AWSStandard is the AWS SDKs' standard retry mode: every retry pays
	// the retry quota (retry.Quota) of its instance and host, and none is
	// made when it cannot.
	AWSStandard
	// AWSAdaptive is the standard mode plus the adaptive mode's send-rate
	// limiter (retry.Adaptive), one per instance and host, pacing every
	// attempt.
	AWSAdaptive
	// GRPC is gRPC's retry policy and its retry throttling
	// (retry.Throttle), one per instance and host (gRPC throttles per
	// server name).
	GRPC
)

// pathLimiters returns each path's limiter order: Paths, or one path over
// every limiter in order.
func (c *Config) pathLimiters() (names []string, order [][]int) {
	if len(c.Paths) == 0 {
		all := make([]int, len(c.Limiters))
		for i := range all {
			all[i] = i
		}
		return []string{"default"}, [][]int{all}
	}
	for _, p := range c.Paths {
		names = append(names, p.Name)
		order = append(order, p.Limiters)
	}
	return names, order
}
