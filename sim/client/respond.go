package client

import (
	"fmt"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// send hands the request to the upstream: past its door (Envoy's adaptive
// concurrency filter, which may refuse it at once), then through its
// worker queue, if the server has one.
func (p *pipeline) send(now time.Duration, r *request) {
	r.sentAt = now
	r.serverBusy = true
	p.instances[r.instance].counts.Attempts++
	if p.trace != nil && r.attempt > 0 {
		p.trace.flow(r, "f", now)
	}
	p.rec.Sent(now, int(r.host))
	if d := p.cfg.Retry.AttemptTimeout; d > 0 {
		p.cancel(r.timer)
		r.timer = p.eng.At(clock.Add(now, d), (*hAttemptTimeout)(p), r.arg())
	}
	if p.observer != nil {
		p.observeSent(now, r)
	}
	if p.live != nil { // a real HTTP request: the server runs the rest
		p.live.send(p, r)
		return
	}
	if !p.servers[r.host].Arrive(now, &r.answer) {
		r.phase = phInFlight
		p.eng.Post(clock.Add(now, r.answer.After), (*hResponse)(p), r.arg())
		return
	}
	if q := p.serverQueues[r.host]; q != nil {
		_, st := q.Put(now, (*hServer)(p), r.arg())
		if st != models.Granted {
			r.phase = phServerQ
			return
		}
	}
	p.serve(now, r)
}

func (h *hServer) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil {
		return
	}
	p.serve(now, r)
}

// serve starts the server's work on the request.
func (p *pipeline) serve(now time.Duration, r *request) {
	if r.phase != phDone {
		r.phase = phInFlight
	}
	p.servers[r.host].StartInto(now, r.cost, &r.answer)
	if p.recorded != nil && r.answer.OK { // a replay: the latency production saw
		if d := p.latencies[r.handle.Index()]; d > 0 {
			r.answer.After = clock.Add(r.answer.Held, d)
		}
	}
	p.costServed(int(r.host), r.cost, &r.answer)
	p.rec.Served(now, int(r.host), r.answer.After-r.answer.Held, r.answer.OK) // the service, not the hold before it
	p.eng.Post(clock.Add(now, r.answer.After), (*hResponse)(p), r.arg())
}

// hResponse: the server finished; the client reads the answer unless it
// already gave up on the request.
func (h *hResponse) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil {
		return
	}
	p.serverDone(now, int(r.host), &r.answer, now-r.answer.After, r.sentAt)
	p.answered(now, r)
}

// serverDone ends the server's work on an answer whose service started at
// start, for a request that reached the server at arrived: its
// concurrency quota permits and its worker come back, and its door (Envoy's
// adaptive concurrency filter) reads its latency. A request refused at the
// door holds none of them.
func (p *pipeline) serverDone(now time.Duration, host int, a *upstream.Answer, start, arrived time.Duration) {
	if a.Door {
		return
	}
	p.servers[host].Depart(now, arrived)
	if a.OK {
		p.servers[host].Finish(now, a)
		p.costDone(host, a)
		p.rec.ServedDone(now, start, host)
	}
	if q := p.serverQueues[host]; q != nil {
		q.Done(now)
	}
}

// answered is the client reading request r's answer (r.answer).
func (p *pipeline) answered(now time.Duration, r *request) {
	r.serverBusy = false
	if r.phase == phDone { // abandoned by a deadline or an attempt timeout while in flight
		p.requests.Release(r.handle.Index())
		return
	}
	p.cancel(r.timer) // the attempt timeout
	r.timer = clock.Timer{}
	throttled := !r.answer.OK && p.cfg.On429.Throttles(r.answer.Status)
	if r.answer.OK || throttled {
		p.rec.Answered(now, r.sentAt, int(r.host), r.answer.OK)
	} else {
		p.rec.Refused(now, r.sentAt, int(r.host))
	}
	if p.readsAnswer || p.trace != nil {
		p.readAnswer(now, r)
	}
	if p.observer != nil {
		p.observeRefused(r)
	}
	p.reconcile(now, r)
	p.releaseHeld(now, r)
	if p.sdk {
		p.sdkAnswered(now, r)
	}
	if r.answer.OK {
		if t := p.cfg.Retry.Tokens; t > 0 { // a success gives back part of one
			in := p.instances[r.instance]
			in.tokens = min(t, in.tokens+p.cfg.Retry.TokenRatio)
		}
		p.end(now, r, metrics.Succeeded)
		return
	}
	if !throttled { // a refusal the client does not pause on: a failure
		if p.trace != nil {
			p.trace.instant(r, strconv.Itoa(r.answer.Status), now)
		}
		p.end(now, r, metrics.Failed)
		return
	}
	p.on429(now, r)
}

// readAnswer lets what reads each answer read r's: the adaptive
// limiters, the trace and the rate-limit headers' pacing and pauses.
func (p *pipeline) readAnswer(now time.Duration, r *request) {
	if p.adaptive {
		p.feedback(now, r)
	}
	if p.trace != nil {
		status := "200"
		switch {
		case r.answer.OK:
		case r.answer.Status == 0:
			status = "429"
		default:
			status = strconv.Itoa(r.answer.Status)
		}
		p.trace.span(r, fmt.Sprintf("attempt %d → %s", r.attempt+1, status), r.sentAt, now, p.cfg.Workload.Hosts[r.host].Name)
	}
	if p.cfg.Headers.SlowBelow > 0 && r.answer.Remaining >= 0 {
		p.instances[r.instance].pace[r.host].read(now-r.answer.After, r.answer, p.cfg.Headers.SlowBelow)
	}
	if p.cfg.Headers.PauseAtZero && r.answer.Remaining == 0 && r.answer.Reset > 0 {
		// X-RateLimit-Remaining: 0 — wait out the reset the server named
		// (counted from when it answered) before sending to the host again.
		p.pauseHost(now, r, clock.Add(now-r.answer.After, r.answer.Reset), false)
	}
	if p.cfg.Headers.PauseAtZero && r.answer.RemainingCost >= 0 {
		p.pauseOnCost(now, r, r.cost+p.instances[r.instance].estimate.current)
	}
}

// pauseHost pauses r's host for its instance until end: the later of end
// and a pause in force, or end itself when latest (the article's
// overwrite). A pause that starts counts as an episode.
func (p *pipeline) pauseHost(now time.Duration, r *request, end time.Duration, latest bool) {
	in := p.instances[r.instance]
	if in.pausedUntil[r.host] <= now { // not an extension: a new episode
		p.rec.Paused(int(r.host))
		if p.trace != nil {
			p.trace.pauseStart(int(r.instance), p.cfg.Workload.Hosts[r.host].Name, now, end)
		}
	}
	if latest {
		in.pausedUntil[r.host] = end
	} else {
		in.pausedUntil[r.host] = max(in.pausedUntil[r.host], end)
	}
}

// on429 applies the pause and decides whether to retry.
func (p *pipeline) on429(now time.Duration, r *request) {
	c := p.cfg
	var delay time.Duration
	if c.On429.Pause != PauseNone { // without a pause the fallback is never waited: no draw from the stream the resume jitter shares
		delay = c.On429.Fallback.Sample(p.jitterRand)
	}
	if c.On429.HonorRetryAfter && r.answer.HasRetryAfter {
		delay = r.answer.RetryAfter
	}
	if c.On429.Pause == PauseHost {
		p.pauseHost(now, r, clock.Add(now, delay), c.On429.LatestEnd)
	}
	if p.trace != nil {
		p.trace.instant(r, "429", now)
	}
	if c.Retry.Tokens > 0 { // every 429 takes a retry token
		in := p.instances[r.instance]
		in.tokens = max(0, in.tokens-1)
	}
	p.retryOrEnd(now, r, metrics.Throttled, delay)
}

// retryOrEnd retries request r after its failed attempt, or ends it with
// outcome (Throttled after a 429, TimedOut after an attempt timeout) when
// its attempts are spent or the retry throttling, the budget or the SDK
// policy refuses the retry. delay is a 429's pause or Retry-After.
func (p *pipeline) retryOrEnd(now time.Duration, r *request, outcome metrics.RequestEnd, delay time.Duration) {
	c := p.cfg
	timedOut := outcome == metrics.TimedOut
	r.attempt++
	if int(r.attempt) >= c.Retry.Attempts {
		p.end(now, r, outcome)
		return
	}
	if !p.retryAllowed(now, r, timedOut) {
		p.rec.RetryDenied()
		p.end(now, r, outcome)
		return
	}
	if p.trace != nil {
		p.trace.flow(r, "s", now)
	}
	p.rec.Retried()
	var wait time.Duration
	switch {
	case timedOut: // no answer, so no pause and no Retry-After: the back-off
		wait = c.Retry.Backoff.Delay(int(r.attempt), r.prevBackoff, p.retryRand)
		r.prevBackoff = wait
	case c.On429.Pause == PauseHost:
		wait = 0 // the entry check sleeps out the host pause, with jitter
	case c.On429.Pause == PauseCaller:
		wait = p.resumeAt(delay)
	case c.On429.HonorRetryAfter && r.answer.HasRetryAfter:
		wait = delay
	default:
		wait = c.Retry.Backoff.Delay(int(r.attempt), r.prevBackoff, p.retryRand)
		r.prevBackoff = wait
	}
	if wait <= 0 {
		p.attempt(now, r)
		return
	}
	p.sleep(now, r, clock.Add(now, wait), phBackoff)
}

// retryAllowed reports whether the retry throttling, the retry budget and
// the SDK policy let r be retried, in that order, each counting the retry
// it allows.
func (p *pipeline) retryAllowed(now time.Duration, r *request, timedOut bool) bool {
	c := p.cfg
	if c.Retry.Tokens > 0 && p.instances[r.instance].tokens <= c.Retry.Tokens/2 {
		return false // retry throttling: too many recent 429s
	}
	if c.Retry.Budget > 0 && !p.instances[r.instance].budget.allow(now, c.Retry.Budget, c.Retry.BudgetWindow) {
		return false
	}
	return !p.sdk || p.sdkAllows(r, timedOut) // the SDK's retry quota or throttling
}

// releaseHeld returns every concurrency permit the request holds.
func (p *pipeline) releaseHeld(now time.Duration, r *request) {
	if r.held == 0 {
		return
	}
	steps := p.instances[r.instance].steps[r.path]
	for k := len(steps) - 1; k >= 0; k-- { // narrowest first, as nested `async with` exit
		step := &steps[k]
		li := step.li
		if r.held&heldBit(li) == 0 {
			continue
		}
		s := step.slot(r)
		step.releasers[s].Release(now, 1)
		p.rec.LimiterReleased(now, li, s)
		if p.trace != nil {
			p.trace.permit(r, "e", li, p.cfg.Limiters[li].Name, now)
		}
	}
	r.held = 0
}

// hDeadline: the request timeout fired; the request is abandoned wherever
// it is (an in-flight request still occupies the server until it finishes).
func (h *hDeadline) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil {
		return
	}
	r.deadline = clock.Timer{}
	switch r.phase {
	case phAcquiring:
		if !p.leaveLimiter(now, r, metrics.LeftWithdrawn) {
			r.expired = true // granted at this very instant: end it on arrival
			return
		}
	case phInFlight, phServerQ:
		p.rec.Abandoned(now, r.sentAt)
		if p.trace != nil {
			p.trace.span(r, fmt.Sprintf("attempt %d abandoned", r.attempt+1), r.sentAt, now, "request timeout")
		}
	}
	p.end(now, r, metrics.TimedOut)
}

// end finishes a request: permits back, timers off, outcome recorded, the
// worker freed for the next queued item.
func (p *pipeline) end(now time.Duration, r *request, o metrics.RequestEnd) {
	p.releaseHeld(now, r)
	if p.trace != nil {
		p.trace.ended(r, o)
	}
	if len(p.instances) > 1 { // per_instance is reported when there are several
		ic := &p.instances[r.instance].counts
		ic.Ended++
		ic.Waited += r.waited
		switch o {
		case metrics.Succeeded:
			ic.Succeeded++
		case metrics.Throttled:
			ic.Throttled429++
		}
	}
	p.cancel(r.timer)
	p.cancel(r.deadline)
	p.rec.Ended(now, r.arrived, int(r.tenant), o, r.waited)
	if p.observer != nil {
		p.observer.Ended(now, r.arrived, int(r.tenant), o)
	}
	p.inSystem--
	p.lastEnd = now
	instance := r.instance
	worked := o != metrics.RejectedIngest && p.instances[instance].queue != nil
	if r.serverBusy {
		r.phase = phDone
	} else {
		p.requests.Release(r.handle.Index())
	}
	if worked {
		p.instances[instance].queue.Done(now)
	}
}

// feedback reports an answer read by request r to the adaptive limiters
// of its path that cover it.
func (p *pipeline) feedback(now time.Duration, r *request) {
	for _, li := range p.paths[r.path] {
		if !p.cfg.Limiters[li].Kind.Adaptive {
			continue
		}
		if s := p.scope(li, r); s >= 0 {
			p.instances[r.instance].limiters[li][s].(models.Adaptive).Observe(now, !r.answer.OK, now-r.sentAt)
		}
	}
}

// hostPace spreads the sends to a host over what its rate-limit headers
// say remains (Headers.SlowBelow).
type hostPace struct {
	gap   time.Duration // between sends; 0: not pacing
	until time.Duration // pacing ends at the reset
	next  time.Duration // the next free send slot
}

// read takes an answer's headers, counted from when the server answered
// (at): below the threshold it paces the remaining requests over the time
// to the reset; at or above it, or without a reset to pace to, it stops
// pacing; at zero it leaves the pacing as it is (the pause at zero, or a
// 429's, takes over).
func (h *hostPace) read(at time.Duration, a upstream.Answer, below int64) {
	switch {
	case a.Remaining == 0:
	case a.Remaining >= below || a.Reset <= 0:
		h.gap = 0
	default:
		h.gap, h.until = a.Reset/time.Duration(a.Remaining), clock.Add(at, a.Reset)
	}
}

// sendPaced sends request r, or, while its host is paced, sleeps it until
// the host's next free slot and sends it then.
func (p *pipeline) sendPaced(now time.Duration, r *request) {
	if p.cfg.Headers.SlowBelow > 0 && !r.paced {
		h := &p.instances[r.instance].pace[r.host]
		if h.gap > 0 && now < h.until {
			// The slots run out at the reset: a request beyond them waits
			// for the new window rather than into it.
			slot := max(now, h.next)
			if slot >= h.until {
				slot = p.wakeAt(h.until) // with every request beyond the slots
			} else {
				h.next = slot + h.gap
			}
			if slot > now {
				r.paced = true
				p.sleep(now, r, slot, phPausing)
				return
			}
		}
	}
	if p.sdk && p.sdkHolds(now, r) { // r.paced stays: the slot is kept
		return
	}
	r.paced = false
	p.send(now, r)
}
