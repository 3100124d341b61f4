package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/models"
)

// MinRTTCalcParams are Envoy's min_rtt_calc_params: how the adaptive
// concurrency filter measures the minimum round-trip time it compares
// every later sample with.
type MinRTTCalcParams struct {
	// Interval is the time from the end of one measurement to the start
	// of the next (before Jitter), in whole milliseconds.
	Interval time.Duration
	// RequestCount is the number of requests a measurement aggregates.
	RequestCount int64
	// Jitter delays each measurement's start by a random 0 to Jitter
	// percent of Interval.
	Jitter float64
	// MinConcurrency is the limit pinned while measuring (and the least
	// limit the controller ever sets).
	MinConcurrency int64
	// Buffer is the percent of the minimum RTT added to it before it is
	// compared with a sample.
	Buffer float64
}

// Envoy's documented defaults for the adaptive concurrency filter's
// gradient controller (gradient_controller.cc and adaptive_concurrency.proto).
// Interval has no default in Envoy; the one here is its documentation's
// example.
const (
	DefaultSampleAggregatePercentile = 50
	DefaultMaxConcurrencyLimit       = 1000
	DefaultMinRTTInterval            = 60 * time.Second
	DefaultMinRTTRequestCount        = 50
	DefaultMinRTTJitter              = 15
	DefaultMinConcurrency            = 3
	DefaultMinRTTBuffer              = 25
)

// DefaultMinRTTCalc returns min_rtt_calc_params with Envoy's defaults.
func DefaultMinRTTCalc() MinRTTCalcParams {
	return MinRTTCalcParams{Interval: DefaultMinRTTInterval, RequestCount: DefaultMinRTTRequestCount,
		Jitter: DefaultMinRTTJitter, MinConcurrency: DefaultMinConcurrency, Buffer: DefaultMinRTTBuffer}
}

// adaptiveConcurrency is Envoy's adaptive concurrency filter with its
// gradient controller (gradient_controller.cc), on simulated time. It
// forwards a request while fewer than its limit are outstanding and
// refuses the rest at once; each forwarded request's latency, from the
// filter to the response, is a sample.
//
// Every concurrency_update_interval the samples' percentile becomes the
// sample RTT and the limit becomes
//
//	gradient = clamp((minRTT + minRTT × buffer) ÷ sampleRTT, 0.5, 2)
//	limit    = ⌊limit × gradient + √(limit × gradient)⌋, within [min_concurrency, max_concurrency_limit]
//
// The minimum RTT is measured at the start and then every interval plus a
// jitter drawn from the filter's stream (and at once after five updates
// in a row that left the limit at min_concurrency): the limit is pinned
// at min_concurrency, samples of requests forwarded before the
// measurement began are dropped, and once request_count samples are in,
// their percentile is the new minimum RTT, the limit before the
// measurement comes back and the update timer restarts. An update due
// during a measurement is skipped.
//
// Latencies are whole microseconds, summarised as Envoy's circllhist
// does (see latencyHist). The timers fire lazily: every call first runs
// the timers due by its instant, each at its own instant, so a request at
// the very instant of a timer finds it fired.
type adaptiveConcurrency struct {
	percentile   float64       // of the samples, as a fraction
	update       time.Duration // concurrency_update_interval
	interval     time.Duration // min_rtt_calc_params.interval
	requestCount int64
	jitter       float64 // as a fraction of interval
	minConc      int64
	maxLimit     int64
	buffer       float64 // as a fraction of the minimum RTT
	rng          *rand.Rand

	limit       int64
	outstanding int64
	deferred    int64         // the limit to restore after a measurement; > 0 while measuring
	epoch       time.Duration // when the last measurement began
	minRTT      int64         // µs
	sampleRTT   int64         // µs
	atMin       int           // updates in a row that left the limit at min_concurrency
	sampleAt    time.Duration // the update timer, or never
	minRTTAt    time.Duration // the measurement timer, or never
	hist        latencyHist
}

// never is a timer that is not armed.
const never = time.Duration(math.MaxInt64)

var _ models.Core = (*adaptiveConcurrency)(nil)

// newAdaptiveConcurrency builds q's filter, its jitter drawn from rng; it
// begins measuring the minimum RTT at time 0.
func newAdaptiveConcurrency(q Quota, rng *rand.Rand) (*adaptiveConcurrency, error) {
	p := q.MinRTTCalc
	switch {
	case q.SampleAggregatePercentile < 0 || q.SampleAggregatePercentile > 100:
		return nil, fmt.Errorf("%w: sample_aggregate_percentile %v: from 0 to 100", ErrQuota, q.SampleAggregatePercentile)
	case q.ConcurrencyUpdateInterval < time.Millisecond || q.ConcurrencyUpdateInterval%time.Millisecond != 0:
		return nil, fmt.Errorf("%w: concurrency_update_interval %v: whole milliseconds, at least 1ms", ErrQuota, q.ConcurrencyUpdateInterval)
	case q.MaxConcurrencyLimit < 1:
		return nil, fmt.Errorf("%w: max_concurrency_limit %d: at least 1", ErrQuota, q.MaxConcurrencyLimit)
	case p.Interval < time.Millisecond || p.Interval%time.Millisecond != 0:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.interval %v: whole milliseconds, at least 1ms", ErrQuota, p.Interval)
	case p.RequestCount < 1:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.request_count %d: at least 1", ErrQuota, p.RequestCount)
	case p.Jitter < 0 || p.Jitter > 100:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.jitter %v: from 0 to 100", ErrQuota, p.Jitter)
	case p.MinConcurrency < 1:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.min_concurrency %d: at least 1", ErrQuota, p.MinConcurrency)
	case p.Buffer < 0 || p.Buffer > 100:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.buffer %v: from 0 to 100", ErrQuota, p.Buffer)
	case rng == nil && p.Jitter > 0:
		return nil, fmt.Errorf("%w: min_rtt_calc_params.jitter needs a random stream", ErrQuota)
	}
	c := &adaptiveConcurrency{percentile: q.SampleAggregatePercentile / 100, update: q.ConcurrencyUpdateInterval,
		interval: p.Interval, requestCount: p.RequestCount, jitter: p.Jitter / 100, minConc: p.MinConcurrency,
		maxLimit: q.MaxConcurrencyLimit, buffer: p.Buffer / 100, rng: rng, limit: p.MinConcurrency, minRTTAt: never}
	c.enterMeasurement(0)
	c.sampleAt = c.update
	return c, nil
}

// measuring reports whether a minimum RTT measurement is under way.
func (c *adaptiveConcurrency) measuring() bool { return c.deferred > 0 }

// advance fires the timers due by now in order, each at its instant (the
// update timer first when both are due at once).
func (c *adaptiveConcurrency) advance(now time.Duration) {
	for {
		switch at := min(c.sampleAt, c.minRTTAt); {
		case at > now:
			return
		case c.sampleAt == at:
			c.sampleAt = never
			if !c.measuring() { // a measurement re-arms it when it ends
				c.updateLimit(at)
				c.sampleAt = at + c.update
			}
		default:
			c.minRTTAt = never
			c.enterMeasurement(at)
		}
	}
}

// enterMeasurement starts measuring the minimum RTT at now: the limit is
// pinned at min_concurrency and the samples so far are dropped.
func (c *adaptiveConcurrency) enterMeasurement(now time.Duration) {
	if c.measuring() {
		return
	}
	c.deferred = c.limit
	c.setLimit(now, c.minConc)
	c.hist.clear()
	c.epoch = now
}

// endMeasurement ends a measurement at now once request_count samples are
// in: their percentile is the minimum RTT, the limit comes back, and the
// next measurement and update are timed from now.
func (c *adaptiveConcurrency) endMeasurement(now time.Duration) {
	if !c.measuring() || c.hist.count < c.requestCount {
		return
	}
	c.minRTT = c.hist.take(c.percentile)
	c.setLimit(now, c.deferred)
	c.deferred = 0
	c.minRTTAt = now + c.jittered()
	c.sampleAt = now + c.update
}

// jittered is interval plus Envoy's jitter: a random whole number of
// milliseconds below ⌈interval × jitter⌉.
func (c *adaptiveConcurrency) jittered() time.Duration {
	ms := int64(c.interval / time.Millisecond)
	span := int64(math.Ceil(float64(ms) * c.jitter))
	if span <= 0 {
		return c.interval
	}
	return time.Duration(ms+int64(c.rng.Uint64()%uint64(span))) * time.Millisecond
}

// updateLimit is the update timer at now outside a measurement: the
// samples' percentile is the sample RTT and sets the new limit (no
// samples, no change).
func (c *adaptiveConcurrency) updateLimit(now time.Duration) {
	if c.hist.count == 0 {
		return
	}
	c.sampleRTT = c.hist.take(c.percentile)
	c.setLimit(now, c.newLimit())
}

// newLimit is the limit the gradient of the minimum RTT (with its buffer)
// over the sample RTT gives: limit × gradient plus its square root as
// headroom, rounded down, within [min_concurrency, max_concurrency_limit].
func (c *adaptiveConcurrency) newLimit() int64 {
	gradient := 2.0 // a sample RTT of 0 µs: as Envoy's clamp reads a division by zero
	if c.sampleRTT > 0 {
		buffered := float64(c.minRTT) + float64(c.minRTT)*c.buffer
		gradient = max(0.5, min(2.0, buffered/float64(c.sampleRTT)))
	}
	limit := float64(c.limit) * gradient
	next := int64(limit + math.Sqrt(limit))
	return max(c.minConc, min(c.maxLimit, next))
}

// setLimit sets the limit at now; a fifth update in a row that leaves it
// at min_concurrency outside a measurement starts a measurement at now
// (the minimum RTT may be wrong).
func (c *adaptiveConcurrency) setLimit(now time.Duration, limit int64) {
	old := c.limit
	c.limit = limit
	if !c.measuring() && old == c.minConc && limit == c.minConc {
		c.atMin++
	} else {
		c.atMin = 0
	}
	if c.atMin >= 5 {
		c.minRTTAt = now
	}
}

// forward decides on a request at now: forwarded (counted outstanding)
// while fewer than the limit are, refused otherwise.
func (c *adaptiveConcurrency) forward(now time.Duration) bool {
	c.advance(now)
	if c.outstanding < c.limit {
		c.outstanding++
		return true
	}
	return false
}

// record ends a forwarded request answered at now that the filter
// forwarded at start: its latency is a sample unless it was forwarded
// before the current measurement began.
func (c *adaptiveConcurrency) record(now, start time.Duration) {
	c.advance(now)
	c.outstanding = max(0, c.outstanding-1)
	if start < c.epoch {
		return
	}
	c.hist.add(int64((now - start) / time.Microsecond))
	c.endMeasurement(now)
}

// TakeAt forwards a request at now (n is 1: the filter counts requests).
func (c *adaptiveConcurrency) TakeAt(now time.Duration, _ int64) bool { return c.forward(now) }

// ReadyAt is now while a request would be forwarded; otherwise only a
// response can make room.
func (c *adaptiveConcurrency) ReadyAt(now time.Duration, _ int64) (time.Duration, bool) {
	c.advance(now)
	if c.outstanding < c.limit {
		return now, true
	}
	return 0, false
}

// Max is the limit.
func (c *adaptiveConcurrency) Max() int64 { return c.limit }

// Usage is the share of the limit outstanding.
func (c *adaptiveConcurrency) Usage(now time.Duration) float64 {
	c.advance(now)
	return min(1, float64(c.outstanding)/float64(c.limit))
}

// Limit is the concurrency limit in force at now.
func (c *adaptiveConcurrency) Limit(now time.Duration) int64 {
	c.advance(now)
	return c.limit
}
