package retry

import (
	"math"
	"time"
)

// The constants of the AWS SDKs' adaptive retry mode's client-side rate
// limiter (aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go and
// adaptive_token_bucket.go; botocore retries/adaptive.py and cubic.py).
const (
	// AdaptiveBeta is CUBIC's multiplicative decrease: a throttle sets the
	// send rate to β × the rate in use.
	AdaptiveBeta = 0.7
	// AdaptiveScale is CUBIC's scale constant C in
	// rate(t) = C·(t − K)³ + Wmax, K = ∛(Wmax·(1 − β)/C).
	AdaptiveScale = 0.4
	// AdaptiveSmooth weighs the newest half-second's send rate in the
	// measured rate: measured = 0.8·current + 0.2·measured.
	AdaptiveSmooth = 0.8
	// AdaptiveMinFillRate is the least the bucket refills, per second.
	AdaptiveMinFillRate = 0.5
	// AdaptiveMinCapacity is the least the bucket holds.
	AdaptiveMinCapacity = 1.0
	// adaptiveBucket is the measuring bucket, half a second.
	adaptiveBucket = 500 * time.Millisecond
)

// Adaptive is the client-side send-rate limiter of the AWS SDKs' adaptive
// retry mode. Until the first throttling answer it lets every send through;
// from then on a token bucket paces sends, one token each, refilled at the
// rate CUBIC computes from the answers: a throttle cuts the rate to β × the
// measured send rate (or the fill rate, if lower), and each other answer
// grows it along C·(t − K)³ + Wmax from the last throttle, never above twice
// the measured send rate.
//
// Time is passed in (simulated nanoseconds since the start). The zero
// Adaptive is not ready; use NewAdaptive. Not safe for concurrent use.
type Adaptive struct {
	enabled      bool
	fillRate     float64 // tokens a second
	capacity     float64
	tokens       float64
	lastRefill   time.Duration
	refilled     bool
	measured     float64 // smoothed sends a second
	lastBucket   time.Duration
	count        int64
	lastMaxRate  float64
	lastThrottle time.Duration
	window       float64 // K, seconds
}

// NewAdaptive returns the limiter as a client starts at now: unrestricted,
// its bucket empty.
func NewAdaptive(now time.Duration) *Adaptive {
	return &Adaptive{lastBucket: now.Truncate(time.Second), lastThrottle: now}
}

// Acquire takes a send token at now, or returns how long to wait before
// asking again (never zero): the SDK sleeps that long and asks again.
func (a *Adaptive) Acquire(now time.Duration) (wait time.Duration, ok bool) {
	if !a.enabled {
		return 0, true
	}
	a.refill(now)
	if a.tokens >= 1 {
		a.tokens--
		return 0, true
	}
	secs := (1 - a.tokens) / a.fillRate
	return max(1, time.Duration(math.Ceil(secs*float64(time.Second)))), false
}

// Update reads one answer at now: throttled for a throttling error (a 429).
func (a *Adaptive) Update(now time.Duration, throttled bool) {
	a.measure(now)
	var rate float64
	if throttled {
		use := a.measured
		if a.enabled {
			use = min(a.measured, a.fillRate)
		}
		a.lastMaxRate = use
		a.window = cubicWindow(use)
		a.lastThrottle = now
		rate = use * AdaptiveBeta
		a.enabled = true
	} else {
		a.window = cubicWindow(a.lastMaxRate)
		rate = CubicRate(a.lastMaxRate, now-a.lastThrottle)
	}
	rate = min(rate, 2*a.measured)
	a.refill(now)
	a.fillRate = max(rate, AdaptiveMinFillRate)
	a.capacity = max(rate, AdaptiveMinCapacity)
	a.tokens = min(a.tokens, a.capacity)
}

// CubicRate is CUBIC's rate a time since after a throttle that measured
// lastMax: C·(since − K)³ + lastMax with K = ∛(lastMax·(1 − β)/C), which
// starts at β·lastMax, flattens at lastMax after K and grows beyond.
func CubicRate(lastMax float64, since time.Duration) float64 {
	dt := since.Seconds() - cubicWindow(lastMax)
	return AdaptiveScale*dt*dt*dt + lastMax
}

func cubicWindow(lastMax float64) float64 {
	return math.Cbrt(lastMax * (1 - AdaptiveBeta) / AdaptiveScale)
}

// measure counts a send answered at now in the half-second buckets and,
// when a bucket closes, folds its rate into the measured rate.
func (a *Adaptive) measure(now time.Duration) {
	a.count++
	b := now.Truncate(adaptiveBucket)
	if b > a.lastBucket {
		current := float64(a.count) / (b - a.lastBucket).Seconds()
		a.measured = current*AdaptiveSmooth + a.measured*(1-AdaptiveSmooth)
		a.count = 0
		a.lastBucket = b
	}
}

func (a *Adaptive) refill(now time.Duration) {
	if a.refilled {
		a.tokens = min(a.capacity, a.tokens+(now-a.lastRefill).Seconds()*a.fillRate)
	}
	a.lastRefill, a.refilled = now, true
}

// Enabled reports whether sends are paced (a throttle has been seen).
func (a *Adaptive) Enabled() bool { return a.enabled }

// FillRate returns the pacing rate, tokens a second.
func (a *Adaptive) FillRate() float64 { return a.fillRate }

// Measured returns the smoothed send rate, a second.
func (a *Adaptive) Measured() float64 { return a.measured }
