package metrics

import (
	"math"
	"time"
)

// Results is the contract between a run and everything that reads it
// (metrics.json). Counts under Requests cover the whole run; rates, waits,
// saturation and Little's Law cover the steady state after the warm-up.
type Results struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Complete bool   `json:"complete"`
	Stop     Stop   `json:"stop_reason,omitzero"`
	// ElapsedS is the simulated time from the start to the last completion.
	ElapsedS  float64 `json:"elapsed_s"`
	WarmupS   float64 `json:"warmup_s"`
	IntervalS float64 `json:"interval_s"`
	Events    uint64  `json:"events"`
	// RequestTimeoutS is the request budget (0: none); the article's alert
	// line for limiter waits is a tenth of it.
	RequestTimeoutS float64 `json:"request_timeout_s"`
	AcquireTimeoutS float64 `json:"acquire_timeout_s"`
	Instances       int     `json:"instances"`

	Requests   Requests   `json:"requests"`
	Throughput Throughput `json:"throughput"`
	// Rate429 is the share of the steady state's attempts (by send time)
	// whose answer was a 429, over every host: the one 429 rate that the
	// summary, the verdicts and the diagnoses quote.
	Rate429 float64 `json:"rate_429"`
	// RequestS is the end-to-end time of the steady state's successful
	// requests, from arrival to the answer: ingest, limiters, pauses,
	// retries and the upstream together.
	RequestS Dist `json:"request_s"`
	// SuccessRatio is the share of the requests that arrived (whole run)
	// that succeeded: a request still in progress when an incomplete run
	// stopped counts as not succeeded.
	SuccessRatio float64         `json:"success_ratio"`
	Limiters     []LimiterStats  `json:"limiters"`
	InFlight     Level           `json:"in_flight"`
	Queue        QueueStats      `json:"queue"`
	Upstreams    []UpstreamStats `json:"upstreams"`
	// Quotas are the quotas several upstreams count together (top-level
	// [[quota]]); absent without them.
	Quotas  []SharedQuotaStats `json:"quotas,omitempty"`
	Tenants []TenantStats      `json:"tenants,omitempty"`
	// OnOff describes an on/off workload's phases (arrivals during the
	// first OnS of every OnS + OffS, from 0), for the charts to shade;
	// absent for other workloads.
	OnOff *OnOff `json:"on_off,omitempty"`
	// PerInstance gives each client instance's own figures when there are
	// several (instances split the workload evenly or by
	// client.instance_weights).
	PerInstance []InstanceStats `json:"per_instance,omitempty"`
	// TenantsTotal is how many tenants the run has. An output folder's
	// metrics.json lists them all up to MaxListed, and otherwise the
	// ListedWorst by p99 wait, every one being in tenants.csv.
	TenantsTotal int `json:"tenants_total,omitempty"`
	// TenantJain is Jain's fairness index over the tenants' success
	// rates, (Σx)² ÷ (n Σx²): 1 when every tenant succeeds as often, 1/n
	// when one tenant gets everything; absent with one tenant.
	TenantJain *float64 `json:"tenant_jain_index,omitempty"`
	// Paths are the request classes the scenario declares
	// ([[client.path]]), each with the limiters it takes in order; absent
	// when every request takes every limiter in the order written.
	Paths    []PathStats `json:"paths,omitempty"`
	Little   []Little    `json:"little"`
	Warnings []Warning   `json:"warnings,omitempty"`
	// Verdicts and Diagnoses are derived from the rest (Diagnose); they are
	// recomputed when a report is redrawn.
	Verdicts  []Verdict   `json:"verdicts"`
	Diagnoses []Diagnosis `json:"diagnoses"`
	// Fix is the verified remedy for the diagnoses (run before it is
	// printed); absent when no diagnosis has one.
	Fix *VerifiedFix `json:"fix,omitempty"`
	// Replications summarises every replication when run.replications > 1;
	// the rest of Results is the first replication.
	Replications *Replicas `json:"replications,omitempty"`
}

// Requests counts outcomes over the whole run. Every arrival ends in
// exactly one of Succeeded, Throttled429, Failed, Rejected,
// AcquireTimeouts, TimedOut, or is still InProgress when a run stops
// early.
type Requests struct {
	Arrived         int64 `json:"arrived"`
	Succeeded       int64 `json:"succeeded"`
	Throttled429    int64 `json:"throttled_429"`
	Rejected        int64 `json:"rejected"`
	RejectedIngest  int64 `json:"rejected_ingest"`
	RejectedLimiter int64 `json:"rejected_limiter"`
	AcquireTimeouts int64 `json:"acquire_timeouts"`
	TimedOut        int64 `json:"timed_out"`
	InProgress      int64 `json:"in_progress"`
	Attempts        int64 `json:"attempts"`
	Retries         int64 `json:"retries"`
	// RetriesDenied counts retries the retry budget refused (the request
	// ended with its 429); absent without a budget.
	RetriesDenied int64 `json:"retries_denied,omitempty"`
	Responses429  int64 `json:"responses_429"`
	// Failed counts the requests that ended with a refusal whose status
	// the client does not treat as throttling (not in
	// client.on_limit.statuses), and ResponsesFailed every such answer;
	// absent when there are none.
	Failed          int64 `json:"failed,omitempty"`
	ResponsesFailed int64 `json:"responses_failed,omitempty"`
}

// Throughput is per second of simulated steady state: the offered rate over
// the window in which arrivals came (after the warm-up), the others over
// the window from the warm-up to the last completion.
type Throughput struct {
	OfferedRPS float64 `json:"offered_rps"`
	StartedRPS float64 `json:"started_rps"`
	GoodputRPS float64 `json:"goodput_rps"`
	Rate429RPS float64 `json:"rate_429_rps"`
	WindowS    float64 `json:"window_s"`
}

// Dist summarises a distribution of durations, in seconds; percentiles are
// accurate to three significant digits.
type Dist struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Level is a time-weighted gauge: its time average and peak.
type Level struct {
	Mean float64 `json:"mean"`
	Max  int64   `json:"max"`
}

// LimiterStats is one named limiter, aggregated over its scopes and instances.
type LimiterStats struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Scope    string `json:"scope"`
	Acquired int64  `json:"acquired"`
	Rejected int64  `json:"rejected"`
	Timeouts int64  `json:"timeouts"`
	// PWait is the share of the acquisitions in WaitS that waited a
	// positive time.
	PWait float64 `json:"p_wait"`
	// WaitS is the time every acquisition that ended in the steady state
	// spent in acquire: granted at once (0), granted after waiting, or
	// given up (acquisition timeout or request deadline) after waiting.
	// Acquisitions refused at once (line full, or unable to make the
	// deadline) never waited and are counted as rejected or timeouts.
	WaitS Dist `json:"wait_s"`
	// WaitGrantedS is the same over granted acquisitions only.
	WaitGrantedS Dist    `json:"wait_granted_s"`
	MeanWaiting  float64 `json:"mean_waiting"`
	MaxWaiting   int64   `json:"max_waiting"`
	// Family is what the limiter counts: "rate" (a bucket, GCRA,
	// x/time/rate), "window" (starts per window) or "concurrency"
	// (permits held).
	Family string `json:"family"`
	// Unit is "cost" for a limiter that counts the requests' cost (tokens,
	// points): its Capacity is in cost units. Absent for one that counts
	// requests.
	Unit string `json:"unit,omitempty"`
	// Capacity is what one limiter object allows: units per second (rate
	// or window limiters) or permits (concurrency limiters).
	Capacity float64 `json:"capacity"`
	// Utilisation is the share of the limiter's capacity used in the
	// steady state: units granted ÷ units its objects allow (rate × time,
	// or limit per window) for a rate or window limiter, time-average
	// permits held ÷ permits for a concurrency limiter. For a scoped
	// limiter it is over every scope; UtilisationMax is the busiest
	// scope's.
	Utilisation    float64 `json:"utilisation"`
	UtilisationMax float64 `json:"utilisation_max"`
	// Saturation is the article's saturation: the time average of permits
	// in use ÷ permits, 1 − tokens ÷ capacity, or starts in the window ÷
	// limit, over the steady state (1 = pinned). For a bucket it reads the
	// token level, not the rate used: Utilisation is that.
	Saturation    float64      `json:"saturation"`
	SaturationMax float64      `json:"saturation_max"`
	Releases      bool         `json:"releases"` // a concurrency limiter
	WaitHist      []Bucket     `json:"wait_hist"`
	Scopes        []ScopeStats `json:"scopes,omitempty"`
	// Adaptation describes how an adaptive limiter's limit moved; absent
	// for the others.
	Adaptation *Adaptation `json:"adaptation,omitempty"`
	// ScopesTotal is how many scopes a scoped limiter has; an output
	// folder's metrics.json lists them as it lists tenants, every one
	// being in scopes.csv.
	ScopesTotal int `json:"scopes_total,omitempty"`
	// Store counts the calls a cluster limiter made to its shared store;
	// absent for the others.
	Store *StoreStats `json:"store,omitempty"`
}

// OnOff is an on/off workload's cycle.
type OnOff struct {
	OnS  float64 `json:"on_s"`
	OffS float64 `json:"off_s"`
}

// OffPhases returns the intervals without arrivals that start before end,
// or nil when there are more than most (a chart shades a few hundred; a
// cycle of nanoseconds over a run of seconds would make billions).
func (o *OnOff) OffPhases(end float64, most int) [][2]float64 {
	if o == nil || !(o.OffS > 0) || !(o.OnS > 0) {
		return nil
	}
	if n := math.Ceil((end - o.OnS) / (o.OnS + o.OffS)); n > float64(most) {
		return nil
	}
	var out [][2]float64
	for k := 0.0; len(out) <= most; k++ {
		from := k*(o.OnS+o.OffS) + o.OnS
		if from >= end {
			return out
		}
		out = append(out, [2]float64{from, from + o.OffS})
	}
	return nil
}

// StoreStats counts a cluster limiter's calls to its shared store over the
// whole run: one per acquisition attempt without a sync interval, one per
// instance and sync interval with one.
type StoreStats struct {
	Calls  int64 `json:"calls"`
	Failed int64 `json:"failed"`
}

// Adaptation is how an adaptive limiter's limit (all its objects
// together, requests per second) moved over the steady state, read at the
// end of each interval, and how fast it found each quota set by a quota
// schedule.
type Adaptation struct {
	LimitMean float64 `json:"limit_mean"`
	LimitMin  float64 `json:"limit_min"`
	LimitMax  float64 `json:"limit_max"`
	// Oscillation is (p90 − p10) ÷ mean of the interval limits: the width
	// of the sawtooth relative to its level.
	Oscillation float64    `json:"oscillation"`
	Changes     []Settling `json:"changes,omitempty"`
}

// Settling is the limiter's answer to one quota change: SettleS after
// AtS the limit first came within ±SettleBand of the new quota (null if it
// never did before the next change or the end), and its mean and
// oscillation from then to the next change.
type Settling struct {
	AtS       float64  `json:"at_s"`
	QuotaRPS  float64  `json:"quota_rps"`
	SettleS   *float64 `json:"settle_s"`
	LimitMean float64  `json:"limit_mean"`
	// Oscillation is (p90 − p10) ÷ mean of the settled interval limits.
	Oscillation float64 `json:"oscillation"`
}

// SettleBand is the band around a new quota within which an adaptive
// limit counts as settled: ±35%, wide enough for an AIMD sawtooth
// (halving from about 1.3× the quota) to sit in it.
const SettleBand = 0.35

// QuotaRejections is one quota's count of refusals.
type QuotaRejections struct {
	Quota string `json:"quota"`
	// Unit is what the quota counts: "requests" or "cost".
	Unit  string `json:"unit"`
	Count int64  `json:"count"`
	// Shared: the quota is a top-level [[quota]] that other hosts count
	// too (its count here is this host's share of its refusals).
	Shared bool `json:"shared,omitempty"`
}

// QuotaStep is a change of a host's quota rate during the run.
type QuotaStep struct {
	AtS float64 `json:"at_s"`
	RPS float64 `json:"rps"`
}

// Bucket is one bin of a wait histogram: Count waits of at most LE seconds
// (and more than the previous bin's LE). Bins are a tenth of a decade wide;
// LE 0 holds the waits of zero. Empty bins are left out.
type Bucket struct {
	LE    float64 `json:"le"`
	Count int64   `json:"count"`
}

// ScopeStats is one host's or tenant's share of a scoped limiter.
type ScopeStats struct {
	Key      string  `json:"key"`
	Acquired int64   `json:"acquired"`
	Rejected int64   `json:"rejected"`
	Timeouts int64   `json:"timeouts"`
	PWait    float64 `json:"p_wait"`
	WaitS    Dist    `json:"wait_s"`
	// Utilisation is this scope's share of its capacity.
	Utilisation float64 `json:"utilisation"`
}

// QueueStats describes the ingest queue (or, for one task per request, the
// requests parked on limiters).
type QueueStats struct {
	Kind       string  `json:"kind"`
	MeanDepth  float64 `json:"mean_depth"`
	MaxDepth   int64   `json:"max_depth"`
	MaxBlocked int64   `json:"max_blocked_producers"`
	WaitS      Dist    `json:"wait_s"`
}

// UpstreamStats is one modeled host as the clients saw it.
type UpstreamStats struct {
	Host      string `json:"host"`
	Attempts  int64  `json:"attempts"`
	OK        int64  `json:"ok"`
	Throttled int64  `json:"throttled_429"`
	// Failed counts the refusals whose status the client does not treat
	// as throttling; absent when there are none.
	Failed       int64   `json:"failed,omitempty"`
	Rate429      float64 `json:"rate_429"`
	PerMinute429 float64 `json:"per_minute_429"`
	Pauses       int64   `json:"pauses"`
	// LatencyS is the response time of OK answers as clients read them:
	// attempts whose client gave up first are not in it, so under
	// overload it is truncated by the timeouts.
	LatencyS Dist `json:"latency_s"`
	// ServiceS is the upstream's service time of every OK answer it
	// produced, read by a client or not: the modeled distribution.
	ServiceS        Dist    `json:"service_s"`
	QuotaSaturation float64 `json:"quota_saturation"`
	// QuotaUtilisation is the share of the quota used in the steady state:
	// admitted attempts ÷ what the quota admits (rate quotas), or
	// time-average permits held ÷ permits (concurrency); null without a
	// quota.
	QuotaUtilisation *float64 `json:"quota_utilisation"`
	// QuotaRPS is what a rate or window quota admits per second; absent
	// otherwise.
	QuotaRPS *float64 `json:"quota_rps,omitempty"`
	// QuotaSchedule lists the quota's rate changes during the run.
	QuotaSchedule []QuotaStep `json:"quota_schedule,omitempty"`
	// RejectedBy counts, for a host with several quotas, the 429s each
	// refused (whole run; a request refused by two counts for both).
	RejectedBy []QuotaRejections `json:"rejected_by,omitempty"`
	// Cost is what the host's requests cost, when a quota counts cost or
	// its responses reveal one.
	Cost *CostStats `json:"cost,omitempty"`
}

// CostStats is what a host's requests cost (whole run): a language
// model's tokens, against the quota that counts them.
type CostStats struct {
	// QuotaPerS and QuotaBurst are the tightest quota that counts cost:
	// units per second (a window's limit ÷ its length) and the most it
	// holds at once (0 without such a quota).
	QuotaPerS  float64 `json:"quota_per_s"`
	QuotaBurst float64 `json:"quota_burst"`
	// Request is each request's own cost (every arrival routed to the
	// host, once however often it is tried); Response each OK answer's
	// revealed cost (empty without response_cost).
	Request  Dist `json:"request"`
	Response Dist `json:"response"`
	// ChargedPerS is the cost the host admitted per second of the run: the
	// admitted attempts' own costs and their responses'.
	ChargedPerS float64 `json:"charged_per_s"`
}

// TenantStats is one tenant's experience, for fairness.
type TenantStats struct {
	Name      string `json:"name"`
	Arrived   int64  `json:"arrived"`
	Succeeded int64  `json:"succeeded"`
	// ArrivalShare is the tenant's arrivals ÷ all arrivals; Share its
	// successes ÷ all successes; SuccessRate its successes ÷ its arrivals.
	ArrivalShare float64 `json:"arrival_share"`
	Share        float64 `json:"admitted_share"`
	SuccessRate  float64 `json:"success_rate"`
	WaitS        Dist    `json:"wait_s"`
}

// PathStats is a request class: its name and the limiters it takes, in
// the order it takes them.
type PathStats struct {
	Name     string   `json:"name"`
	Limiters []string `json:"limiters"`
	// Method is the path's HTTP method, when it names one.
	Method string `json:"method,omitempty"`
}

// InstanceStats is one client instance's share of a run (whole run).
type InstanceStats struct {
	Instance     int           `json:"instance"`
	Weight       float64       `json:"weight"` // its share of the workload
	Arrived      int64         `json:"arrived"`
	Succeeded    int64         `json:"succeeded"`
	Throttled429 int64         `json:"throttled_429"`
	Attempts     int64         `json:"attempts"`
	Ended        int64         `json:"-"`
	Waited       time.Duration `json:"-"` // total over its ended requests
	// MeanWaitS is the mean time its ended requests spent waiting on
	// limiters.
	MeanWaitS float64 `json:"mean_wait_s"`
}

// Little checks Little's Law for one stage: L (time-average number in the
// stage) against λ × W (entry rate × mean time in the stage).
type Little struct {
	Stage    string  `json:"stage"`
	L        float64 `json:"L"`
	Lambda   float64 `json:"lambda"`
	W        float64 `json:"W"`
	RelError float64 `json:"rel_error"`
}
