package client

import (
	"fmt"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// hAttemptTimeout: an attempt had no answer within Retry.AttemptTimeout.
// The attempt is abandoned where it is, in the server's queue or in
// service, and the server still works on it; the request gives back what
// it holds and is retried as after a 429, or ends timed out.
func (h *hAttemptTimeout) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil || (r.phase != phInFlight && r.phase != phServerQ) {
		return
	}
	r.timer = clock.Timer{}
	p.rec.Abandoned(now, r.sentAt)
	p.rec.AttemptTimedOut()
	if p.trace != nil {
		p.trace.span(r, fmt.Sprintf("attempt %d abandoned", r.attempt+1), r.sentAt, now, "attempt timeout")
	}
	r = p.leaveToServer(r)
	r.answer = upstream.Answer{} // none came
	p.reconcile(now, r)          // the reservation comes back, as for a refusal
	p.releaseHeld(now, r)
	p.retryOrEnd(now, r, metrics.TimedOut, 0)
}

// leaveToServer leaves r's attempt with the server and returns the request
// moved to a new record. The old record, which the server's pending events
// name, is left ended (phDone) and is released when the server answers,
// as a request abandoned by its deadline is; the request's deadline is
// moved to the new record.
func (p *pipeline) leaveToServer(r *request) *request {
	old, moved := r.handle, *r
	_, r, h := p.requests.Alloc() // r named the old record: it may move
	*r = moved
	r.handle, r.serverBusy = h, false
	if !moved.deadline.IsZero() {
		p.cancel(moved.deadline)
		r.deadline = p.eng.At(clock.Add(r.started, p.cfg.RequestTimeout), (*hDeadline)(p), r.arg())
	}
	_, left, _ := p.requests.Lookup(old)
	left.phase, left.held, left.traced = phDone, 0, false
	left.timer, left.deadline = clock.Timer{}, clock.Timer{}
	return r
}
