package client

import (
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
)

// pausedUntil returns when a host pause that applies to r ends: one a 429
// set (with pause = "host") or one the rate-limit headers set.
func (p *pipeline) pausedUntil(r *request) time.Duration {
	if !p.pauses {
		return 0
	}
	return p.instances[r.instance].pausedUntil[r.host]
}

// attempt begins an attempt: the entry pause check, then the limiters.
func (p *pipeline) attempt(now time.Duration, r *request) {
	r.step = 0
	p.reserve(now, r)
	if p.waitOutPause(now, r) {
		return
	}
	p.acquire(now, r)
}

// waitOutPause puts request r to sleep until the 429 pause that applies to
// it ends, plus the per-caller resume jitter, and reports whether it did.
func (p *pipeline) waitOutPause(now time.Duration, r *request) bool {
	until := p.pausedUntil(r)
	if until <= now {
		return false
	}
	p.sleep(now, r, p.resumeAt(until), phPausing)
	return true
}

// wakeSpread is how far apart the callers a pause's end wakes resume,
// before the resume jitter: a real event loop wakes sleepers whose timers
// end at one instant a moment apart, in no set order (each armed its timer
// a moment after reading the clock, and the loop takes them in its own
// order). In lockstep they would resume in the order they paused, and a
// server that admits by arrival order (nginx's limit_req) would admit the
// same callers first every time: the nginx-limit-req example's status-429
// variant served 21.5/s so, against 24.5-25.8/s over six seeds with the
// order drawn, and 24.5-27/s against a real nginx.
const wakeSpread = time.Microsecond

// resumeAt is when a caller paused until until resumes: after the resume
// jitter, at wakeAt.
func (p *pipeline) resumeAt(until time.Duration) time.Duration {
	return p.wakeAt(clock.Add(until, p.cfg.On429.ResumeJitter.Sample(p.jitterRand)))
}

// wakeAt is when a caller sleeping until at wakes, one of those whose
// sleep ends there: a draw within wakeSpread after it, from a stream of
// its own, so that the jitter's and the fallback's draws are those of a
// run without it. A sleep to clock.Never stays there.
func (p *pipeline) wakeAt(at time.Duration) time.Duration {
	return clock.Add(at, time.Duration(p.wakeRand.Int64N(int64(wakeSpread))))
}

func (p *pipeline) sleep(now time.Duration, r *request, until time.Duration, phase uint8) {
	r.phase = phase
	r.since = now
	r.timer = p.eng.At(until, (*hWake)(p), r.arg())
}

// hWake ends a pause or back-off sleep, or a blocked put of an arrival.
func (h *hWake) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil {
		return
	}
	r.timer = clock.Timer{}
	if p.trace != nil && (r.phase == phBackoff || r.phase == phPausing) {
		p.trace.span(r, sleepSpanName(r.phase), r.since, now, "")
	}
	switch r.phase {
	case phQueued: // the arrival's blocked put completed: its item is queued
		p.rec.Blocked(now, -1)
		p.rec.QueueIn(now)
		r.since = now
	case phBackoff:
		p.attempt(now, r)
	case phPausing:
		if r.step == 0 {
			p.acquire(now, r)
			return
		}
		// Paused at send time, permits held: a 429 meanwhile may have
		// extended the pause, so check again before sending.
		if p.waitOutPause(now, r) {
			return
		}
		p.sendPaced(now, r)
	}
}

// acquire takes the path's limiters in order from r.step.
func (p *pipeline) acquire(now time.Duration, r *request) {
	c := p.cfg
	in := p.instances[r.instance]
	steps := in.steps[r.path]
	for int(r.step) < len(steps) {
		step := &steps[r.step]
		s := step.slot(r)
		if s < 0 { // a host- or tenant-scoped limiter that does not cover r
			r.step++
			continue
		}
		li := step.li
		lim := step.limiters[s]
		step.active[s>>6] |= 1 << (s & 63)
		n := int64(1)
		if step.countsCost {
			n = r.cost + r.reserved
		}
		t, st := lim.Acquire(now, n, p.deadlineOf(now, r), (*hGrant)(p), r.arg())
		if st == models.Parked && !step.ownBound && p.overBound(li, lim) && lim.Cancel(now, t) {
			st = models.Full
		}
		switch st {
		case models.Granted:
			p.acquired(now, r, li, int(s))
			continue
		case models.Parked:
			r.phase, r.ticket, r.lim, r.scope, r.since = phAcquiring, t, int32(li), int32(s), now
			in.parked++
			p.rec.LimiterParked(now, li)
			if d := time.Duration(c.AcquireTimeout); d > 0 {
				r.timer = p.eng.At(clock.Add(now, d), (*hTimeout)(p), r.arg())
			}
			return
		case models.TooLate:
			// The limiter knows it cannot grant before the deadline
			// (x/time/rate's Wait): the request fails now, as the timeout
			// that binds would have failed it later.
			p.rec.LimiterTimedOut(li, int(s))
			if p.trace != nil {
				p.trace.instant(r, "limiter "+c.Limiters[li].Name+": too late for the deadline", now)
			}
			p.end(now, r, p.lateOutcome(now, r))
			return
		default:
			p.rec.LimiterRejected(li, int(s))
			if p.trace != nil {
				p.trace.refused(r, limiterBound(c.Limiters[li].Name, st), now)
			}
			p.end(now, r, metrics.RejectedLimiter)
			return
		}
	}
	if c.On429.CheckAtSend && p.waitOutPause(now, r) {
		return
	}
	p.sendPaced(now, r)
}

// overBound reports whether a just-parked acquisition breaks the
// limiter's own max_waiting, for limiters without a bounded line.
func (p *pipeline) overBound(li int, lim models.Limiter) bool {
	_, line := lim.(*models.Line) // a Line enforces its own bound
	return !line && !p.cfg.Limiters[li].Params.MaxWaiting.Admits(lim.Waiting()-1)
}

func (p *pipeline) scopeKey(li int, r *request) int {
	switch p.facts[li].scope {
	case PerHost:
		return int(r.host)
	case PerTenant:
		return int(r.tenant)
	}
	return 0
}

// deadlineOf is the instant the request's acquisition must succeed by.
func (p *pipeline) deadlineOf(now time.Duration, r *request) time.Duration {
	dl := clock.Never
	if !p.deadlines {
		return dl
	}
	if d := p.cfg.AcquireTimeout; d > 0 {
		dl = clock.Add(now, d)
	}
	if d := p.cfg.RequestTimeout; d > 0 {
		// The request deadline started when processing began.
		dl = min(dl, clock.Add(r.started, d))
	}
	return dl
}

// lateOutcome says which deadline a refused-as-too-late acquisition hit.
func (p *pipeline) lateOutcome(now time.Duration, r *request) metrics.RequestEnd {
	c := p.cfg
	if c.AcquireTimeout > 0 && (c.RequestTimeout == 0 || clock.Add(now, c.AcquireTimeout) <= clock.Add(r.started, c.RequestTimeout)) {
		return metrics.AcquireTimeout
	}
	return metrics.TimedOut
}

func (p *pipeline) acquired(now time.Duration, r *request, li, s int) {
	p.rec.LimiterPassed(now, li, s)
	p.charged(now, li, s, r)
	if p.facts[li].releases {
		r.held |= heldBit(li)
		if p.trace != nil {
			p.trace.permit(r, "b", li, p.cfg.Limiters[li].Name, now)
		}
	}
	r.step++
}

// hGrant: a parked acquisition was granted.
func (h *hGrant) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil || r.phase != phAcquiring {
		return
	}
	li, s := int(r.lim), int(r.scope)
	p.cancel(r.timer)
	r.timer = clock.Timer{}
	p.instances[r.instance].parked--
	p.rec.LimiterLeft(now, r.since, li, s, metrics.LeftGranted)
	p.charged(now, li, s, r)
	if p.trace != nil {
		p.trace.span(r, "limiter "+p.cfg.Limiters[li].Name, r.since, now, "granted")
	}
	r.waited += now - r.since
	r.lim = -1
	if p.facts[li].releases {
		r.held |= heldBit(li)
		if p.trace != nil {
			p.trace.permit(r, "b", li, p.cfg.Limiters[li].Name, now)
		}
	}
	if r.expired { // the deadline fired as this grant was delivered
		p.end(now, r, metrics.TimedOut)
		return
	}
	r.step++
	p.acquire(now, r)
}

// hTimeout: the acquisition timeout fired.
func (h *hTimeout) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil || r.phase != phAcquiring {
		return
	}
	r.timer = clock.Timer{}
	if !p.leaveLimiter(now, r, metrics.LeftGaveUp) {
		return // the grant was already decided: it wins
	}
	p.end(now, r, metrics.AcquireTimeout)
}

// leaveLimiter withdraws r from the limiter it is parked on; false if the
// grant is already on its way. how says why (an acquisition timeout, or the
// request's deadline).
func (p *pipeline) leaveLimiter(now time.Duration, r *request, how metrics.Leave) bool {
	li, s := int(r.lim), int(r.scope)
	if !p.instances[r.instance].limiters[li][s].Cancel(now, r.ticket) {
		return false
	}
	p.instances[r.instance].parked--
	p.rec.LimiterLeft(now, r.since, li, s, how)
	if p.trace != nil {
		p.trace.span(r, "limiter "+p.cfg.Limiters[li].Name, r.since, now, "gave up")
	}
	r.waited += now - r.since
	r.lim = -1
	return true
}
