package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

// Sizing is the article's sizing table worked out for one quota (limitsim
// size, and its --json). Every figure of Total is the sum of the same
// figure of PerInstance over the instances; a limiter the instances share
// is in Shared instead.
type Sizing struct {
	Inputs      SizingInputs `json:"inputs"`
	LatencyMean float64      `json:"latency_mean_s"`
	// InFlight is the mean number of requests in flight at the binding
	// quota (Little's Law: quota × mean latency), before rounding up to
	// the instances' permits.
	InFlight float64 `json:"in_flight"`
	// SizedRPS is the request rate the sized limiters let through in all:
	// the least of the request bucket's, the window's, the cost bucket's
	// (its rate ÷ the mean cost) and, with a memory budget, the memory
	// semaphore's (its permits ÷ the mean latency, each instance).
	SizedRPS float64 `json:"sized_rps"`
	// WindowAllowance is what the window limit leaves for requests in
	// flight: ⌈limit ÷ window × mean latency⌉.
	WindowAllowance int64 `json:"window_allowance,omitempty"`
	// CostMean and CostP90 are the lognormal cost's mean and p90; CostP90
	// (rounded up) is the reservation each request starts with.
	CostMean    float64 `json:"cost_mean,omitempty"`
	CostReserve int64   `json:"cost_reserve,omitempty"`
	// Shared is the request limiter the instances share, when the quota's
	// second of burst is too small to give each its own (fewer requests
	// than instances): then PerInstance and Total have no rate or burst.
	Shared      *SharedLimiter `json:"shared,omitempty"`
	PerInstance SizingFigures  `json:"per_instance"`
	Total       SizingFigures  `json:"total"`
	Verify      *SizingCheck   `json:"verify,omitempty"`
}

// SharedLimiter is one limiter for every instance, kept in a shared store
// (scope = "cluster": a GCRA, as go-redis/redis_rate keeps it in Redis).
type SharedLimiter struct {
	Rate  float64 `json:"rate"`
	Burst float64 `json:"burst"`
}

// SizingInputs is what a sizing starts from: the published quota, the
// instances sharing it, the latency profile, and optionally a memory
// budget, a window limit and a cost quota with the cost of a request.
type SizingInputs struct {
	QuotaRPS     float64 `json:"quota_rps"`
	Instances    int     `json:"instances"`
	LatencyP50   float64 `json:"latency_p50_s"`
	LatencyP99   float64 `json:"latency_p99_s"`
	MemoryBytes  float64 `json:"memory_budget_bytes,omitempty"`
	ResponseP99  float64 `json:"response_p99_bytes,omitempty"`
	WindowLimit  int64   `json:"window_limit,omitempty"`
	WindowS      float64 `json:"window_s,omitempty"`
	CostQuota    float64 `json:"cost_quota_per_s,omitempty"`
	CostP50      int64   `json:"cost_p50,omitempty"`
	CostP99      int64   `json:"cost_p99,omitempty"`
	SafetyMargin float64 `json:"safety_margin"`
}

// SizingFigures are the limits to configure for one instance, or their
// sums over the instances.
type SizingFigures struct {
	// Rate is the token-bucket rate: quota × margin ÷ instances (0 when
	// the instances share one limiter).
	Rate float64 `json:"rate"`
	// Burst is the bucket capacity: a second of the rate, rounded down,
	// at least 1 (0 when shared).
	Burst float64 `json:"burst"`
	// Concurrency is where the quota saturates: the mean in flight at the
	// binding quota (Little's Law) ÷ instances, rounded up.
	Concurrency float64 `json:"concurrency"`
	// Permits is the semaphore to configure: at least Concurrency, and
	// enough that the count in flight at the request limiter's rate
	// exceeds it 0.1% of the time (see permitsQuantile).
	Permits int64 `json:"permits"`
	// MemorySemaphore is the memory budget ÷ the p99 response size.
	MemorySemaphore int64 `json:"memory_semaphore,omitempty"`
	// WindowLimit is the sliding-window limit: (published limit −
	// in-flight allowance) ÷ instances, rounded down.
	WindowLimit int64 `json:"window_limit,omitempty"`
	// CostRate and CostBurst are the cost bucket's: cost quota × margin ÷
	// instances, and a minute of that rate.
	CostRate  float64 `json:"cost_rate,omitempty"`
	CostBurst float64 `json:"cost_burst,omitempty"`
	// WaitingBound bounds the waiting line (client.max_waiting): a second
	// of the sized rate, rounded up, enough to absorb a burst, not a
	// backlog; and with the bucket's burst at least LineDepth, which a
	// slow rate's second is not.
	WaitingBound int64 `json:"waiting_bound"`
}

// times returns the figures of n instances together.
func (f SizingFigures) times(n int) SizingFigures {
	k := float64(n)
	return SizingFigures{Rate: f.Rate * k, Burst: f.Burst * k, Concurrency: f.Concurrency * k, Permits: f.Permits * int64(n),
		MemorySemaphore: f.MemorySemaphore * int64(n), WindowLimit: f.WindowLimit * int64(n),
		CostRate: f.CostRate * k, CostBurst: f.CostBurst * k, WaitingBound: f.WaitingBound * int64(n)}
}

// SizingInputError is an input the sizing cannot work with. Input names
// it as SizingInputs's JSON does.
type SizingInputError struct {
	Input, Reason string
}

func (e *SizingInputError) Error() string { return e.Input + ": " + e.Reason }

// costBurstSeconds is how much of a cost quota its buckets hold: a minute,
// as the tokens-per-minute limits of metered APIs refill continuously.
const costBurstSeconds = 60

// z90 is the standard normal quantile at 0.9; z99 the one at 0.99.
const z90, z99 = 1.2815515655446004, 2.3263478740408408

// Size works out the article's sizing table for in: rate = quota ×
// margin ÷ instances with a second of burst (the bursts summing to at most
// the quota's second), concurrency = quota × mean latency (Little's Law)
// ÷ instances, the memory and window limits, and a cost bucket.
func Size(in SizingInputs) (*Sizing, error) {
	switch {
	case in.Instances < 1:
		return nil, &SizingInputError{"instances", "must be at least 1"}
	case !(in.QuotaRPS > 0) || math.IsInf(in.QuotaRPS, 0):
		return nil, &SizingInputError{"quota_rps", "must be a positive number"}
	case !(in.SafetyMargin > 0 && in.SafetyMargin <= 1):
		return nil, &SizingInputError{"safety_margin", fmt.Sprintf("%v must be in (0, 1]", in.SafetyMargin)}
	}
	lat, err := upstream.NewLatency(upstream.LogNormal{P50: seconds(in.LatencyP50), P99: seconds(in.LatencyP99)})
	if err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	mean := lat.Mean().Seconds()
	if !(mean > 0) || lat.Mean() >= 1<<62 {
		return nil, fmt.Errorf("latency p99 (%gs) is too far above p50 (%gs): the lognormal through them has no mean a duration holds", in.LatencyP99, in.LatencyP50)
	}
	s := &Sizing{Inputs: in, LatencyMean: mean}
	n := float64(in.Instances)
	per := s.sizeRequests()
	sized, binding := in.SafetyMargin*in.QuotaRPS, in.QuotaRPS
	semaphoreBinds, costBinds := false, false
	if in.WindowLimit > 0 && in.WindowS > 0 {
		if err := s.sizeWindow(&per); err != nil {
			return nil, err
		}
		sized = math.Min(sized, float64(per.WindowLimit)*n/in.WindowS)
		binding = math.Min(binding, float64(in.WindowLimit)/in.WindowS)
	}
	if in.CostQuota > 0 {
		if err := s.sizeCost(&per); err != nil {
			return nil, err
		}
		if c := per.CostRate * n / s.CostMean; c < sized {
			sized, costBinds = c, true
		}
		binding = math.Min(binding, in.CostQuota/s.CostMean)
	}
	s.SizedRPS, s.InFlight = sized, binding*mean
	per.Concurrency = math.Max(1, ceilWhole(s.InFlight/n))
	// The permits cover the request limiter's rate, not the sized one: a
	// window or a cost bucket lets requests through at that rate while it
	// has room, and idles after.
	per.Permits = int64(math.Max(per.Concurrency, poissonQuantile(in.SafetyMargin*in.QuotaRPS*mean/n, permitsQuantile)))
	if in.MemoryBytes > 0 && in.ResponseP99 > 0 {
		if sized, semaphoreBinds, err = s.sizeMemory(&per, sized); err != nil {
			return nil, err
		}
		s.SizedRPS = sized
	}
	per.WaitingBound = s.waitingBound(per, semaphoreBinds, costBinds)
	s.PerInstance, s.Total = per, per.times(in.Instances)
	return s, nil
}

// sizeMemory sets the memory semaphore: the budget ÷ the p99 response.
// Fewer permits than the rate needs in flight cap the rate (Little's
// Law: permits ÷ mean latency an instance); it returns the sized rate so
// capped and whether the semaphore binds. The permits were sized at the
// margin's rate already; the memory semaphore takes the margin here.
func (s *Sizing) sizeMemory(per *SizingFigures, sized float64) (float64, bool, error) {
	in := s.Inputs
	if in.MemoryBytes < in.ResponseP99 {
		return 0, false, fmt.Errorf("a memory budget of %.0f bytes holds no response of %.0f bytes (the p99): give a budget of one response at least", in.MemoryBytes, in.ResponseP99)
	}
	per.MemorySemaphore = int64(in.MemoryBytes / in.ResponseP99)
	capped := math.Min(float64(per.Permits), in.SafetyMargin*float64(per.MemorySemaphore)) * float64(in.Instances) / s.LatencyMean
	if capped < sized {
		return capped, true, nil
	}
	return sized, false, nil
}

// waitingBound is the waiting line of each instance: a second of the
// sized rate, or, when that is less, LineDepth with what cushions it.
// The request bucket's burst absorbs a Poisson burst beside the line
// when that bucket binds; a cost bucket's does not (each request's cost
// shows only when its response completes), nor does anything binding
// below the bucket's rate: the line then holds LineDepth itself.
func (s *Sizing) waitingBound(per SizingFigures, semaphoreBinds, costBinds bool) int64 {
	in, n := s.Inputs, float64(s.Inputs.Instances)
	depth, cushion := float64(LineDepth), per.Burst
	if per.CostRate > 0 || s.SizedRPS/n < per.Rate*(1-1e-9) {
		cushion = 0 // a cost bucket, a window or a memory semaphore binds
	}
	if costBinds {
		// Costs that vary serve the line as latencies do a semaphore:
		// 1 + the cost's squared coefficient of variation.
		depth *= (s.CostMean / float64(in.CostP50)) * (s.CostMean / float64(in.CostP50))
	}
	if semaphoreBinds {
		// Served by latencies that vary, not by a clock: the line grows
		// with 1 + the latency's squared coefficient of variation
		// (Pollaczek–Khinchine), (mean ÷ p50)² for a lognormal.
		depth *= (s.LatencyMean / in.LatencyP50) * (s.LatencyMean / in.LatencyP50)
	}
	if sh := s.Shared; sh != nil {
		// One limiter for every instance, each with a line of its own:
		// the arrivals an instance draws burst on their own (a third of
		// the depth each over three instances refused 2.6% offered 90%).
		cushion = sh.Burst
	}
	return int64(max(1, ceilWhole(s.SizedRPS/n), ceilWhole(depth-cushion)))
}

// LineDepth is what a token bucket's burst and its waiting line together
// hold so that a Poisson stream at 90% of the bucket's rate is refused at
// once under 1% of the time. A queue's length at a given utilisation does
// not grow with the rate, so a slow rate needs more than its second: 3/s
// with a burst of 3 and a line of 3 refused 4.5% of 2.67/s, with a line
// of 10 0.67%, of 13 0.88% of 2.7/s, of 17 0.55% (size --verify's
// third run checks it).
const LineDepth = 20

// ceilWhole is x rounded up to a whole number, x within a rounding error
// of one being that one: 1,000/min over 3 instances computes 5.000000000000001
// a second, a line of 5, not 6.
func ceilWhole(x float64) float64 { return math.Ceil(x * (1 - 1e-12)) }

// floorWhole is x rounded down to a whole number, x within a rounding
// error of one being that one.
func floorWhole(x float64) float64 { return math.Floor(x * (1 + 1e-12)) }

// sizeRequests sizes the request limiter: quota × margin ÷ instances each,
// with a second of that rate as burst (whole, at least 1), so the bursts
// sum to at most the quota's own second of burst. When the quota holds
// fewer requests a second than there are instances, a burst of one each
// would overrun it: then the instances share one limiter (Shared).
func (s *Sizing) sizeRequests() SizingFigures {
	in := s.Inputs
	n, total := float64(in.Instances), in.SafetyMargin*in.QuotaRPS
	if n > math.Floor(serverBurst(in.QuotaRPS)) {
		s.Shared = &SharedLimiter{Rate: total, Burst: math.Max(1, math.Floor(total))}
		return SizingFigures{}
	}
	per := SizingFigures{Rate: total / n}
	per.Burst = math.Max(1, floorWhole(per.Rate))
	return per
}

// sizeWindow sizes the sliding window: the published limit less what is in
// flight at its rate, divided among the instances (rounded down).
func (s *Sizing) sizeWindow(per *SizingFigures) error {
	in := s.Inputs
	s.WindowAllowance = int64(math.Ceil(float64(in.WindowLimit) / in.WindowS * s.LatencyMean))
	limit := in.WindowLimit - s.WindowAllowance
	if limit < int64(in.Instances) {
		return &SizingInputError{"window_limit", fmt.Sprintf("%d less the %d in flight leaves %d a window, fewer than one for each of %d instances",
			in.WindowLimit, s.WindowAllowance, limit, in.Instances)}
	}
	per.WindowLimit = limit / int64(in.Instances)
	return nil
}

// permitsQuantile is the share of the time an instance's semaphore should
// not bind at the request limiter's rate: a request that waits for a
// permit has already taken its token, and leaves when one is freed, with
// others that waited, so a semaphore that binds sends bursts the rate
// limiter never allowed.
const permitsQuantile = 0.999

// poissonQuantile is the least whole c ≥ 1 with P(N ≤ c) ≥ q for N
// Poisson of mean m: how many requests are in flight at once, at most,
// but for a share 1 − q of the time (the count in flight of requests
// started at a steady rate with independent latencies is at most as spread
// as a Poisson count).
func poissonQuantile(m, q float64) float64 {
	if m > 1000 { // the normal approximation, within a permit or two here
		return math.Ceil(m + 3.0902323061678132*math.Sqrt(m) + 0.5)
	}
	logPMF, cdf := -m, 0.0
	for c := 0.0; ; c++ {
		if c > 0 {
			logPMF += math.Log(m / c)
		}
		if cdf += math.Exp(logPMF); cdf >= q {
			return math.Max(1, c)
		}
	}
}

// serverBurst is the burst of a published quota of rps: one second of it,
// at least one request.
func serverBurst(rps float64) float64 { return math.Max(1, rps) }

// sizeCost sizes the cost bucket: the cost quota × margin, a minute of it
// as burst, divided among the instances; and the reservation, the p90 of
// the lognormal cost through the given p50 and p99.
func (s *Sizing) sizeCost(per *SizingFigures) error {
	in := s.Inputs
	if in.CostP50 < 1 || in.CostP99 <= in.CostP50 {
		return &SizingInputError{"cost_p50", fmt.Sprintf("want 1 ≤ p50 < p99, got p50 %d and p99 %d", in.CostP50, in.CostP99)}
	}
	sigma := math.Log(float64(in.CostP99)/float64(in.CostP50)) / z99
	s.CostMean = float64(in.CostP50) * math.Exp(sigma*sigma/2)
	if s.CostMean > maxCostValue {
		return &SizingInputError{"cost_p99", fmt.Sprintf("%d is too far above p50 %d: the lognormal through them has a mean of %.3g", in.CostP99, in.CostP50, s.CostMean)}
	}
	s.CostReserve = int64(math.Ceil(float64(in.CostP50) * math.Exp(z90*sigma)))
	n := float64(in.Instances)
	per.CostRate = in.SafetyMargin * in.CostQuota / n
	per.CostBurst = math.Floor(in.SafetyMargin * in.CostQuota * costBurstSeconds / n)
	if per.CostBurst < float64(1+s.CostReserve) {
		return &SizingInputError{"cost_quota_per_s", fmt.Sprintf("a minute of %.4g/s × %g divided among %d instances holds %.0f, less than one request and its reservation (1 + the p90 cost, %d)",
			in.CostQuota, in.SafetyMargin, in.Instances, per.CostBurst, s.CostReserve)}
	}
	return nil
}

// seconds converts seconds to a duration, rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// ClientTOML returns the sized configuration of one instance as TOML keys
// of [client], to paste under its header: the waiting-line bound, the
// limiters in the order to take them (cost, window, request rate, then
// the semaphore, so the request bucket is the last to pace a request
// before it is sent), and the reservation of a cost limiter.
func (s *Sizing) ClientTOML() string {
	per := s.PerInstance
	var b strings.Builder
	fmt.Fprintf(&b, "max_waiting = %d\n", per.WaitingBound)
	limiter := func(name, kind string, keys ...string) {
		fmt.Fprintf(&b, "\n[[client.limiter]]\nname = %q\nkind = %q\n", name, kind)
		for i := 0; i+1 < len(keys); i += 2 {
			fmt.Fprintf(&b, "%s = %s\n", keys[i], keys[i+1])
		}
	}
	if per.CostBurst > 0 {
		limiter("tokens", kindname.TokenBucket, "unit", `"cost"`, "rate", decimalDown(per.CostRate), "burst", wholeText(per.CostBurst))
	}
	if per.WindowLimit > 0 {
		limiter("window", kindname.SlidingWindow, "unit", `"requests"`, "limit", strconv.FormatInt(per.WindowLimit, 10),
			"window", strconv.Quote(durationText(seconds(s.Inputs.WindowS))))
	}
	if sh := s.Shared; sh != nil {
		limiter("bucket", kindname.GCRA, "scope", `"cluster"`, "unit", `"requests"`, "rate", decimalDown(sh.Rate), "burst", wholeText(sh.Burst))
	} else {
		limiter("bucket", kindname.TokenBucket, "unit", `"requests"`, "rate", decimalDown(per.Rate), "burst", wholeText(per.Burst))
	}
	limiter("conns", kindname.Semaphore, "permits", strconv.FormatInt(s.SemaphorePermits(), 10))
	if per.CostBurst > 0 {
		fmt.Fprintf(&b, "\n[client.reserve]\nestimate = \"p90\"\nfixed = %d\n", s.CostReserve)
	}
	return b.String()
}

// SemaphorePermits is the semaphore of one instance: its Permits, or the
// memory semaphore when that is smaller.
func (s *Sizing) SemaphorePermits() int64 {
	p := s.PerInstance.Permits
	if m := s.PerInstance.MemorySemaphore; m > 0 {
		p = min(p, m)
	}
	return max(1, p)
}

// decimalDown writes x with six significant digits, rounded down, so a
// pasted rate never exceeds the sized one.
func decimalDown(x float64) string {
	if !(x > 0) {
		return "0"
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-5)
	return strconv.FormatFloat(math.Floor(x/p*(1+1e-12))*p, 'g', 6, 64)
}

// wholeText writes a whole number of a float.
func wholeText(x float64) string { return strconv.FormatFloat(math.Floor(x), 'f', 0, 64) }

// durationText writes d as a scenario duration ("1h", "250ms", "1h30m").
func durationText(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}
