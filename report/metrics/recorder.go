package metrics

import "time"

// Recorder streams a run's measurements into histograms, time-weighted
// levels and fixed-width interval rows. Its memory depends on the layout and
// the simulated duration, never on the number of requests.
//
// It is made of one part per concern, each owning its state: the requests'
// counts and end-to-end times, the stages' levels, the limiters and their
// scopes, the hosts, the tenants, and the timeline of interval rows (see
// the package documentation). The events below touch several of them; an
// event of one concern is recorded by a method in that concern's file.
type Recorder struct {
	layout   Layout
	requests requestCounts
	times    requestTimes
	stages   requestStages
	limiters limiterSet
	hosts    hostSet
	tenants  tenantSet
	timeline timeline
}

// NewRecorder returns a recorder for the layout.
func NewRecorder(layout Layout) *Recorder {
	if layout.Interval <= 0 {
		layout.Interval = time.Second
	}
	sketches := sharedSketchMapping()
	r := &Recorder{layout: layout, times: newRequestTimes(), stages: newRequestStages(layout),
		limiters: newLimiterSet(layout, sketches), hosts: newHostSet(layout, sketches), tenants: newTenantSet(layout, sketches)}
	r.timeline = newTimeline(layout.Interval, r.columns())
	return r
}

// steady reports whether t is in the steady state, after the warm-up.
func (r *Recorder) steady(t time.Duration) bool { return t >= r.layout.Warmup }

// Arrived counts a new request of tenant.
func (r *Recorder) Arrived(now time.Duration, tenant int) {
	r.requests.arrived(r.steady(now))
	r.tenants.arrived(tenant)
	r.stages.arrived(now)
}

// Ended records a request's outcome; since is its arrival and waited the
// total time it spent waiting on limiters.
func (r *Recorder) Ended(now, since time.Duration, tenant int, o RequestEnd, waited time.Duration) {
	r.stages.ended(now, since)
	r.requests.ended(o, r.steady(now))
	if o == Succeeded {
		r.tenants.succeeded(tenant)
		r.times.succeeded(now-since, r.steady(since))
	}
	r.tenants.ended(since, tenant, o, waited)
}

// Sent records an attempt reaching host.
func (r *Recorder) Sent(now time.Duration, host int) {
	r.hosts.sent(now, host)
	r.requests.sent(r.steady(now))
	r.stages.sent(now)
}

// Refused records a refusal the client does not treat as throttling (its
// status is not one it pauses on) to an attempt sent at since: a failure,
// not a 429.
func (r *Recorder) Refused(now, since time.Duration, host int) {
	r.stages.answered(now, since)
	r.hosts.records[host].failed++
	r.requests.total.ResponsesFailed++
}

// Answered records the response to an attempt sent at since.
func (r *Recorder) Answered(now, since time.Duration, host int, ok bool) {
	r.stages.answered(now, since)
	if ok {
		r.hosts.answeredOK(now, since, host)
		return
	}
	r.hosts.throttled(since, host)
	r.requests.throttled(r.steady(since))
	r.count429(since, host)
}
