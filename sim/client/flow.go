package client

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
)

// start schedules the first arrivals and the first interval tick.
func (p *pipeline) start() {
	switch {
	case len(p.perTen) > 0:
		p.streams = len(p.perTen)
		for t := range p.perTen {
			p.scheduleArrival(0, t+1)
		}
	case p.arrivals == nil: // backlog: every instance's producer starts at 0
		for k := range p.insts {
			p.eng.At(0, (*hBacklog)(p), uint64(k))
		}
		p.noMore = true
	default:
		p.streams = 1
		p.scheduleArrival(0, 0)
	}
	p.scheduleSamples(0, p.rec.NextTick())
	p.eng.At(p.rec.NextTick(), (*hTick)(p), 0)
}

// scheduleArrival schedules the next arrival of chain c (0: the workload's
// process; t+1: tenant t's own process).
func (p *pipeline) scheduleArrival(prev time.Duration, c int) {
	run := &p.cfg.Run
	var at time.Duration
	ok := !(run.Requests > 0 && p.arrived >= run.Requests)
	if ok {
		if c == 0 {
			at, ok = p.arrivals.Next(prev, p.rArr)
		} else {
			at, ok = p.perTen[c-1].Next(prev, p.perRng[c-1])
		}
	}
	if !ok || (run.Duration > 0 && at >= time.Duration(run.Duration)) {
		p.streams--
		p.noMore = p.streams == 0
		return
	}
	p.chains[c] = p.eng.At(at, (*hArrival)(p), uint64(c))
}

// stopArrivals ends every arrival chain once run.requests have arrived, so
// a slow chain's next arrival does not hold the run open.
func (p *pipeline) stopArrivals() {
	for c, t := range p.chains {
		p.eng.Cancel(t)
		p.chains[c] = clock.Timer{}
	}
	p.streams, p.noMore = 0, true
}

func (h *hArrival) Fire(now time.Duration, c uint64) {
	p := (*pipeline)(h)
	if run := &p.cfg.Run; run.Requests > 0 && p.arrived >= run.Requests {
		p.stopArrivals()
		return
	}
	p.arrived++
	p.lastArrival = now
	if run := &p.cfg.Run; run.Requests > 0 && p.arrived >= run.Requests {
		p.stopArrivals()
	} else {
		p.scheduleArrival(now, int(c))
	}
	k := 0
	if n := len(p.insts); n > 1 {
		k = p.rRoute.IntN(n)
	}
	p.arrive(now, k, false, int(c)-1)
}

// hBacklog feeds instance arg's backlog into its ingest as fast as it
// accepts, one `await queue.put` after another.
func (h *hBacklog) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	in := p.insts[arg]
	p.lastArrival = now
	if in.blocked != 0 { // the blocked put completed: the item is queued
		p.rec.Blocked(now, -1)
		p.rec.QueueIn(now)
		if _, r := p.lookup(in.blocked - 1); r != nil {
			r.since = now
		}
		in.blocked = 0
	}
	for in.backlogLeft > 0 {
		in.backlogLeft--
		p.arrived++
		if blocked := p.arrive(now, int(arg), true, -1); blocked {
			return // resumed by the queue when the put completes
		}
	}
}

// newRequest allocates and routes a request.
func (p *pipeline) newRequest(now time.Duration, k, tenant int) uint32 {
	i := p.alloc()
	r := &p.reqs[i]
	r.inst = uint16(k)
	if p.cfg.Workload.RoundRobin && len(p.hostCum) > 1 {
		r.host = uint16(p.rr % len(p.hostCum))
		p.rr++
	} else {
		r.host = uint16(pick(p.hostCum, p.rRoute))
	}
	if tenant >= 0 {
		r.tenant = uint16(tenant)
	} else {
		r.tenant = uint16(pick(p.tenantCum, p.rRoute))
	}
	r.path = uint16(pick(p.pathCum, p.rRoute))
	r.arrived, r.since = now, now
	r.seq = uint32(min(p.arrived, 1<<32-1))
	r.lim = -1
	if p.trace != nil {
		p.trace.named(r)
	}
	p.inSystem++
	if p.inSystem > p.cfg.Run.MaxLiveRequests {
		p.eng.Abort(p.liveGuard(now))
	}
	p.rec.Arrived(now, int(r.tenant))
	return i
}

// arrive brings a new request to instance k's ingest. For a backlog
// producer it reports whether the producer is now blocked on a full queue.
func (p *pipeline) arrive(now time.Duration, k int, producer bool, tenant int) (blocked bool) {
	i := p.newRequest(now, k, tenant)
	r := &p.reqs[i]
	in := p.insts[k]
	if in.queue == nil {
		p.process(now, i)
		return false
	}
	r.phase = phQueued
	var st models.Status
	if p.cfg.Ingest.Block {
		ph, parg := clock.Handler((*hBacklog)(p)), uint64(k)
		if !producer {
			ph, parg = (*hWake)(p), p.arg(i) // the arrival itself waits on put
		}
		_, st = in.queue.PutWait(now, (*hWorker)(p), p.arg(i), ph, parg)
		if st == models.Blocked && producer {
			// The backlog producer resumes when the put completes; the
			// queue then holds the item.
			p.rec.Blocked(now, 1)
			in.blocked = p.arg(i) + 1
			return true
		}
	} else {
		_, st = in.queue.Put(now, (*hWorker)(p), p.arg(i))
	}
	switch st {
	case models.Granted:
		p.process(now, i)
	case models.Parked:
		p.rec.QueueIn(now)
	case models.Blocked:
		p.rec.Blocked(now, 1)
	case models.Full:
		p.end(now, i, metrics.RejectedIngest)
	}
	return false
}

// hWorker: a worker took the item from the ingest queue.
func (h *hWorker) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil {
		return
	}
	p.rec.QueueOut(now, r.since)
	if p.trace != nil {
		p.trace.span(r, "ingest queue", r.since, now, "")
	}
	p.process(now, i)
}

// process starts work on a request: the request deadline starts now (the
// seed wraps each get in asyncio.timeout inside the worker).
func (p *pipeline) process(now time.Duration, i uint32) {
	r := &p.reqs[i]
	r.started = now
	if d := p.cfg.RequestTimeout; d > 0 {
		r.deadline = p.eng.At(clock.Add(now, d), (*hDeadline)(p), p.arg(i))
	}
	p.attempt(now, i)
}

// pausedUntil returns when a 429 pause that applies to r ends.
func (p *pipeline) pausedUntil(r *request) time.Duration {
	if p.cfg.On429.Pause != PauseHost {
		return 0
	}
	return p.insts[r.inst].pausedUntil[r.host]
}

// attempt begins an attempt: the entry pause check, then the limiters.
func (p *pipeline) attempt(now time.Duration, i uint32) {
	r := &p.reqs[i]
	r.step = 0
	if p.waitOutPause(now, i) {
		return
	}
	p.acquire(now, i)
}

// waitOutPause puts request i to sleep until the 429 pause that applies to
// it ends, plus the per-caller resume jitter, and reports whether it did.
func (p *pipeline) waitOutPause(now time.Duration, i uint32) bool {
	until := p.pausedUntil(&p.reqs[i])
	if until <= now {
		return false
	}
	p.sleep(now, i, until+p.cfg.On429.ResumeJitter.Sample(p.rJitter), phPausing)
	return true
}

func (p *pipeline) sleep(now time.Duration, i uint32, until time.Duration, phase uint8) {
	r := &p.reqs[i]
	r.phase = phase
	r.since = now
	r.timer = p.eng.At(until, (*hWake)(p), p.arg(i))
}

// hWake ends a pause or back-off sleep, or a blocked put of an arrival.
func (h *hWake) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil {
		return
	}
	r.timer = clock.Timer{}
	if p.trace != nil && (r.phase == phBackoff || r.phase == phPausing) {
		name := "paused after 429"
		if r.phase == phBackoff {
			name = "retry back-off"
		}
		p.trace.span(r, name, r.since, now, "")
	}
	switch r.phase {
	case phQueued: // the arrival's blocked put completed: its item is queued
		p.rec.Blocked(now, -1)
		p.rec.QueueIn(now)
		r.since = now
	case phBackoff:
		p.attempt(now, i)
	case phPausing:
		if r.step == 0 {
			p.acquire(now, i)
			return
		}
		// Paused at send time, permits held: a 429 meanwhile may have
		// extended the pause, so check again before sending.
		if p.waitOutPause(now, i) {
			return
		}
		p.send(now, i)
	}
}

// acquire takes the path's limiters in order from r.step.
func (p *pipeline) acquire(now time.Duration, i uint32) {
	r := &p.reqs[i]
	c := p.cfg
	lims := p.paths[r.path]
	for int(r.step) < len(lims) {
		li := lims[r.step]
		s := p.scopeOf[li][p.scopeKey(li, r)]
		if s < 0 { // a host- or tenant-scoped limiter that does not cover r
			r.step++
			continue
		}
		in := p.insts[r.inst]
		lim := in.lims[li][s]
		n := c.Workload.Cost
		if c.Limiters[li].Kind.Releases() {
			n = 1
		}
		t, st := lim.Acquire(now, n, p.deadlineOf(now, r), (*hGrant)(p), p.arg(i))
		if st == models.Parked && p.overBound(in, li, lim) && lim.Cancel(now, t) {
			st = models.Full
		}
		switch st {
		case models.Granted:
			p.acquired(now, i, li, int(s))
			continue
		case models.Parked:
			r.phase, r.ticket, r.lim, r.scope, r.since = phAcquiring, t, int32(li), int32(s), now
			in.parked++
			p.rec.LimiterParked(now, li)
			if d := time.Duration(c.AcquireTimeout); d > 0 {
				r.timer = p.eng.At(clock.Add(now, d), (*hTimeout)(p), p.arg(i))
			}
			return
		case models.TooLate:
			// The limiter knows it cannot grant before the deadline
			// (x/time/rate's Wait): the request fails now, as the timeout
			// that binds would have failed it later.
			p.rec.LimiterTimedOut(li, int(s))
			p.end(now, i, p.lateOutcome(now, r))
			return
		default:
			p.rec.LimiterRejected(li, int(s))
			p.end(now, i, metrics.RejectedLimiter)
			return
		}
	}
	if c.On429.CheckAtSend && p.waitOutPause(now, i) {
		return
	}
	p.send(now, i)
}

// overBound reports whether a just-parked acquisition breaks a bound on
// waiting: the client's max_waiting (one task per request) or the
// limiter's own max_waiting for limiters without a bounded line.
func (p *pipeline) overBound(in *instance, li int, lim models.Limiter) bool {
	c := p.cfg
	if c.Ingest == nil && !c.MaxParked.Admits(in.parked) {
		return true
	}
	_, line := lim.(*models.Line) // a Line enforces its own bound
	return !line && !c.Limiters[li].Params.MaxWaiting.Admits(lim.Waiting()-1)
}

func (p *pipeline) scopeKey(li int, r *request) int {
	switch p.cfg.Limiters[li].Scope {
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
func (p *pipeline) lateOutcome(now time.Duration, r *request) metrics.Outcome {
	c := p.cfg
	if c.AcquireTimeout > 0 && (c.RequestTimeout == 0 || clock.Add(now, c.AcquireTimeout) <= clock.Add(r.started, c.RequestTimeout)) {
		return metrics.AcquireTimeout
	}
	return metrics.TimedOut
}

func (p *pipeline) acquired(now time.Duration, i uint32, li, s int) {
	r := &p.reqs[i]
	p.rec.LimiterPassed(now, li, s)
	if p.cfg.Limiters[li].Kind.Releases() {
		r.held |= 1 << li
	}
	r.step++
}

// hGrant: a parked acquisition was granted.
func (h *hGrant) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil || r.phase != phAcquiring {
		return
	}
	li, s := int(r.lim), int(r.scope)
	p.eng.Cancel(r.timer)
	r.timer = clock.Timer{}
	p.insts[r.inst].parked--
	p.rec.LimiterLeft(now, r.since, li, s, metrics.Granted)
	if p.trace != nil {
		p.trace.span(r, "limiter "+p.cfg.Limiters[li].Name, r.since, now, "granted")
	}
	r.waited += now - r.since
	r.lim = -1
	if p.cfg.Limiters[li].Kind.Releases() {
		r.held |= 1 << li
	}
	if r.expired { // the deadline fired as this grant was delivered
		p.end(now, i, metrics.TimedOut)
		return
	}
	r.step++
	p.acquire(now, i)
}

// hTimeout: the acquisition timeout fired.
func (h *hTimeout) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil || r.phase != phAcquiring {
		return
	}
	r.timer = clock.Timer{}
	if !p.leaveLimiter(now, i, metrics.GaveUp) {
		return // the grant was already decided: it wins
	}
	p.end(now, i, metrics.AcquireTimeout)
}

// leaveLimiter withdraws r from the limiter it is parked on; false if the
// grant is already on its way. how says why (an acquisition timeout, or the
// request's deadline).
func (p *pipeline) leaveLimiter(now time.Duration, i uint32, how metrics.Leave) bool {
	r := &p.reqs[i]
	li, s := int(r.lim), int(r.scope)
	if !p.insts[r.inst].lims[li][s].Cancel(now, r.ticket) {
		return false
	}
	p.insts[r.inst].parked--
	p.rec.LimiterLeft(now, r.since, li, s, how)
	if p.trace != nil {
		p.trace.span(r, "limiter "+p.cfg.Limiters[li].Name, r.since, now, "gave up")
	}
	r.waited += now - r.since
	r.lim = -1
	return true
}

// send hands the request to the upstream (through its worker queue, if
// the server has one).
func (p *pipeline) send(now time.Duration, i uint32) {
	r := &p.reqs[i]
	r.sentAt = now
	r.serverBusy = true
	p.rec.Sent(now, int(r.host))
	if q := p.serverQ[r.host]; q != nil {
		_, st := q.Put(now, (*hServer)(p), p.arg(i))
		if st != models.Granted {
			r.phase = phServerQ
			return
		}
	}
	p.serve(now, i)
}

func (h *hServer) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil {
		return
	}
	p.serve(now, i)
}

// serve starts the server's work on the request.
func (p *pipeline) serve(now time.Duration, i uint32) {
	r := &p.reqs[i]
	if r.phase != phDone {
		r.phase = phInFlight
	}
	r.answer = p.servers[r.host].Start(now)
	p.eng.At(clock.Add(now, r.answer.After), (*hResponse)(p), p.arg(i))
}

// hResponse: the server finished; the client reads the answer unless it
// already gave up on the request.
func (h *hResponse) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil {
		return
	}
	if r.answer.OK {
		p.servers[r.host].Finish(now)
	}
	if q := p.serverQ[r.host]; q != nil {
		q.Done(now)
	}
	r.serverBusy = false
	if r.phase == phDone { // abandoned by a deadline while in flight
		p.release(i)
		return
	}
	p.rec.Answered(now, r.sentAt, int(r.host), r.answer.OK)
	if p.trace != nil {
		status := "200"
		if !r.answer.OK {
			status = "429"
		}
		p.trace.span(r, fmt.Sprintf("attempt %d → %s", r.attempt+1, status), r.sentAt, now, p.cfg.Workload.Hosts[r.host].Name)
	}
	p.releaseHeld(now, i)
	if r.answer.OK {
		p.end(now, i, metrics.Succeeded)
		return
	}
	p.on429(now, i)
}

// on429 applies the pause and decides whether to retry.
func (p *pipeline) on429(now time.Duration, i uint32) {
	r := &p.reqs[i]
	c := p.cfg
	delay := c.On429.Fallback.Sample(p.rJitter)
	if c.On429.HonorRetryAfter && r.answer.HasRetryAfter {
		delay = r.answer.RetryAfter
	}
	if c.On429.Pause == PauseHost {
		in := p.insts[r.inst]
		in.pausedUntil[r.host] = max(in.pausedUntil[r.host], clock.Add(now, delay))
		p.rec.Paused(int(r.host))
	}
	r.attempt++
	if int(r.attempt) >= c.Retry.Attempts {
		p.end(now, i, metrics.Throttled)
		return
	}
	p.rec.Retried()
	var wait time.Duration
	switch c.On429.Pause {
	case PauseHost:
		wait = 0 // the entry check sleeps out the host pause, with jitter
	case PauseCaller:
		wait = delay + c.On429.ResumeJitter.Sample(p.rJitter)
	default:
		if c.On429.HonorRetryAfter && r.answer.HasRetryAfter {
			wait = delay
		} else {
			wait = c.Retry.Backoff.Delay(int(r.attempt), r.prevBackoff, p.rRetry)
			r.prevBackoff = wait
		}
	}
	if wait <= 0 {
		p.attempt(now, i)
		return
	}
	p.sleep(now, i, clock.Add(now, wait), phBackoff)
}

// releaseHeld returns every concurrency permit the request holds.
func (p *pipeline) releaseHeld(now time.Duration, i uint32) {
	r := &p.reqs[i]
	if r.held == 0 {
		return
	}
	lims := p.paths[r.path]
	for k := len(lims) - 1; k >= 0; k-- { // narrowest first, as nested `async with` exit
		li := lims[k]
		if r.held&(1<<li) == 0 {
			continue
		}
		s := p.scopeOf[li][p.scopeKey(li, r)]
		p.insts[r.inst].lims[li][s].(models.Releaser).Release(now, 1)
	}
	r.held = 0
}

// hDeadline: the request timeout fired; the request is abandoned wherever
// it is (an in-flight request still occupies the server until it finishes).
func (h *hDeadline) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	i, r := p.lookup(arg)
	if r == nil {
		return
	}
	r.deadline = clock.Timer{}
	switch r.phase {
	case phAcquiring:
		if !p.leaveLimiter(now, i, metrics.Withdrawn) {
			r.expired = true // granted at this very instant: end it on arrival
			return
		}
	case phInFlight, phServerQ:
		p.rec.Abandoned(now, r.sentAt)
		if p.trace != nil {
			p.trace.span(r, fmt.Sprintf("attempt %d abandoned", r.attempt+1), r.sentAt, now, "request timeout")
		}
	}
	p.end(now, i, metrics.TimedOut)
}

// end finishes a request: permits back, timers off, outcome recorded, the
// worker freed for the next queued item.
func (p *pipeline) end(now time.Duration, i uint32, o metrics.Outcome) {
	r := &p.reqs[i]
	p.releaseHeld(now, i)
	p.eng.Cancel(r.timer)
	p.eng.Cancel(r.deadline)
	p.rec.Ended(now, r.arrived, int(r.tenant), o, r.waited)
	p.inSystem--
	p.lastEnd = now
	inst := r.inst
	worked := o != metrics.RejectedIngest && p.insts[inst].queue != nil
	if r.serverBusy {
		r.phase = phDone
	} else {
		p.release(i)
	}
	if worked {
		p.insts[inst].queue.Done(now)
	}
}

// samplesPerInterval is how many times per interval the limiters' usage is
// sampled; saturation is the mean of the samples, a time average.
const samplesPerInterval = 8

// sampleOffsets places the samples inside an interval at fractions of a
// low-discrepancy sequence (multiples of the golden ratio, modulo 1), so
// they never line up with window boundaries or periodic arrivals.
var sampleOffsets = func() [samplesPerInterval]float64 {
	var o [samplesPerInterval]float64
	for k := range o {
		_, f := math.Modf(float64(k+1) * 0.6180339887498949)
		o[k] = f
	}
	return o
}()

// scheduleSamples schedules the usage samples of the interval [from, to).
func (p *pipeline) scheduleSamples(from, to time.Duration) {
	for _, f := range sampleOffsets {
		p.eng.At(from+time.Duration(f*float64(to-from)), (*hSample)(p), 0)
	}
}

// hSample adds one sample of every limiter's and quota's usage.
func (h *hSample) Fire(now time.Duration, _ uint64) {
	p := (*pipeline)(h)
	for li := range p.cfg.Limiters {
		var sum float64
		var n int
		for _, in := range p.insts {
			for _, l := range in.lims[li] {
				sum += l.Usage(now)
				n++
			}
		}
		p.limUsage[li] += sum / float64(max(1, n))
	}
	for hi, s := range p.servers {
		p.hostUsage[hi] += s.Usage(now)
	}
	p.samples++
}

// hTick closes an interval and schedules the next while work remains.
func (h *hTick) Fire(now time.Duration, _ uint64) {
	p := (*pipeline)(h)
	if p.samples == 0 { // no sample fell in the interval: take one now
		(*hSample)(p).Fire(now, 0)
	}
	for li := range p.limUsage {
		p.limUsage[li] /= float64(p.samples)
	}
	for hi := range p.servers {
		p.hostUsage[hi] /= float64(p.samples)
		paused := 0
		for _, in := range p.insts {
			if in.pausedUntil[hi] > now {
				paused++
			}
		}
		p.hostPaused[hi] = float64(paused) / float64(len(p.insts))
	}
	p.rec.Tick(now, p.limUsage, p.hostUsage, p.hostPaused)
	clear(p.limUsage)
	clear(p.hostUsage)
	p.samples = 0
	if p.noMore && p.inSystem == 0 {
		return
	}
	if p.eng.Pending() == 0 && p.inSystem > 0 {
		return // nothing else can happen: let the engine report the stall
	}
	next := p.rec.NextTick()
	p.scheduleSamples(now, next)
	p.eng.At(next, h, 0)
}

// limiterParker reports one named limiter's waiters to the engine.
type limiterParker struct {
	p    *pipeline
	li   int
	name string
}

func (l *limiterParker) Name() string { return "limiter " + l.name }
func (l *limiterParker) Parked() int  { return l.p.waiting(l.li) }

// waiting counts the waiters of limiter li over its scopes and instances.
func (p *pipeline) waiting(li int) int {
	n := 0
	for _, in := range p.insts {
		for _, lim := range in.lims[li] {
			n += lim.Waiting()
		}
	}
	return n
}

type queueParker struct{ p *pipeline }

func (q *queueParker) Name() string { return "ingest queue" }
func (q *queueParker) Parked() int {
	n := 0
	for _, in := range q.p.insts {
		if in.queue != nil {
			n += in.queue.Waiting() + in.queue.BlockedProducers()
		}
	}
	return n
}

// explainStall builds the wait-for graph of the parked requests: a request
// holding limiter A while parked on B makes an edge A → B.
func (p *pipeline) explainStall(s *sim.StallError) {
	var g sim.WaitGraph
	names, _ := p.cfg.pathLimiters()
	holders := map[string]int{}
	for i := range p.reqs {
		r := &p.reqs[i]
		if r.phase != phAcquiring || r.lim < 0 {
			continue
		}
		want := p.cfg.Limiters[r.lim].Name
		for li, l := range p.cfg.Limiters {
			if r.held&(1<<li) != 0 {
				label := "path " + names[min(int(r.path), len(names)-1)]
				g.Add(l.Name, want, label)
				holders[l.Name+" → "+want]++
			}
		}
	}
	s.Cycle = g.Cycle()
	if len(s.Cycle) > 0 {
		var parts []string
		for k := 0; k+1 < len(s.Cycle); k++ {
			e := s.Cycle[k] + " → " + s.Cycle[k+1]
			parts = append(parts, fmt.Sprintf("%d requests hold %s and wait for %s (%s)", holders[e], s.Cycle[k], s.Cycle[k+1], strings.Join(g.Labels(s.Cycle[k], s.Cycle[k+1]), ", ")))
		}
		sort.Strings(parts)
		s.Detail = strings.Join(parts, "; ") + ". Fix: acquire in one global order: rate, then broad, then narrow"
	}
}

// liveGuard explains a run stopped for holding too many live requests: the
// seed's memory failure, an unbounded waiting line under overload.
func (p *pipeline) liveGuard(now time.Duration) *sim.GuardError {
	where := ""
	most := 0
	for li, l := range p.cfg.Limiters {
		n := p.waiting(li)
		if n > most {
			most, where = n, fmt.Sprintf("; %d of them wait on limiter %s", n, l.Name)
		}
	}
	var queued int
	for _, in := range p.insts {
		if in.queue != nil {
			queued += in.queue.Waiting() + in.queue.BlockedProducers()
		}
	}
	if queued > most {
		where = fmt.Sprintf("; %d of them wait in the ingest queue", queued)
	}
	secs := max(now.Seconds(), 1e-9)
	done := float64(int64(p.arrived)-p.inSystem) / secs
	return &sim.GuardError{Guard: "max_live_requests", Limit: uint64(p.cfg.Run.MaxLiveRequests), At: now,
		Detail: fmt.Sprintf("%d requests alive: arrivals (%.4g/s) outpace completions (%.4g/s)%s. An unbounded waiting line turns a rate problem into a memory problem: bound the ingest queue or add an acquisition timeout", p.inSystem, float64(p.arrived)/secs, done, where)}
}
