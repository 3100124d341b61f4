package client

import (
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models/retry"
)

// sdkState is one instance's state of an SDK retry policy (Retry.SDK) for
// one host, as gRPC throttles per server name and an AWS SDK client talks
// to one service: nil where the policy has none of it.
type sdkState struct {
	quota    *retry.Quota    // AWS retry quota
	throttle *retry.Throttle // gRPC retry throttling
	rate     *retry.Adaptive // AWS adaptive send-rate limiter
}

// newSDKState builds an instance's SDK retry state for one host at the
// start of a run.
func newSDKState(c *Retry) sdkState {
	var s sdkState
	switch c.SDK {
	case AWSAdaptive:
		s.rate = retry.NewAdaptive(0)
		s.quota = retry.NewQuota()
	case AWSStandard:
		s.quota = retry.NewQuota()
	case GRPC:
		if c.ThrottleTokens > 0 {
			s.throttle = retry.NewThrottle(c.ThrottleTokens, c.ThrottleRatio)
		}
	}
	return s
}

// sdkAnswered tells the SDK policy of r's instance how r's attempt ended:
// the adaptive limiter reads every answer (a 429 is a throttle), a success
// refills the retry quota (what r's last retry took, or the no-retry
// increment) and gives back part of a throttling token, a 429 takes one.
func (p *pipeline) sdkAnswered(now time.Duration, r *request) {
	s := &p.instances[r.instance].sdk[r.host]
	if s.rate != nil {
		s.rate.Update(now, !r.answer.OK)
	}
	switch {
	case r.answer.OK && s.quota != nil:
		s.quota.Succeeded(int64(r.quotaCost))
	case r.answer.OK && s.throttle != nil:
		s.throttle.Succeeded()
	case s.throttle != nil:
		s.throttle.Failed()
	}
}

// sdkAllows reports whether the SDK policy lets r be retried, and takes
// what the retry costs from the retry quota if so: gRPC retries only while
// its throttle allows; an AWS retry is made only if the quota pays for it.
// A 429 is an error, not a timeout: it costs RetryCost; an attempt timeout
// (timedOut) costs RetryTimeoutCost.
func (p *pipeline) sdkAllows(r *request, timedOut bool) bool {
	s := &p.instances[r.instance].sdk[r.host]
	if s.throttle != nil && !s.throttle.Allow() {
		return false
	}
	if s.quota != nil {
		cost, ok := s.quota.Acquire(timedOut)
		if !ok {
			return false
		}
		r.quotaCost = uint16(cost)
	}
	return true
}

// sdkHolds sleeps r until the adaptive send-rate limiter of its instance
// has a token for it, and reports whether it did; a request that finds
// one takes it. Woken, the request asks again, as the SDK does.
func (p *pipeline) sdkHolds(now time.Duration, r *request) bool {
	s := &p.instances[r.instance].sdk[r.host]
	if s.rate == nil {
		return false
	}
	wait, ok := s.rate.Acquire(now)
	if ok {
		return false
	}
	p.sleep(now, r, clock.Add(now, wait), phPausing)
	return true
}
