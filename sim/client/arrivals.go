package client

import (
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/prefetch"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
)

// arrivalChains is the arrival stage's part of the pipeline: the processes
// that draw arrivals and the chains of events that fire them.
type arrivalChains struct {
	arrivalRand    *rand.Rand
	arrivals       arrivals.Process
	tenantArrivals []arrivals.Process // tenants' own processes, when they bring them
	tenantRands    []*rand.Rand
	arrived        int64
	noMore         bool
	streams        int             // arrival chains still running
	chains         []clock.Timer   // each chain's pending arrival
	chainAt        []time.Duration // and its instant
	// run.requests and run.duration as the arrival chains compare with
	// them: the most arrivals (math.MaxInt64 when unlimited) and the
	// latest instant of one (just before run.duration, or clock.Never).
	maxArrivals int64
	// cutByDuration: an arrival chain ended because its next arrival fell
	// past run.duration, not because its process or run.requests ended.
	cutByDuration bool
	lastArrivalAt time.Duration
}

// router is the pipeline's part that routes each arrival: the draws of
// its client instance, host, tenant and path.
type router struct {
	routeRand *rand.Rand
	// instanceRand and pathRand draw an arrival's client instance and
	// path: streams of their own, so that a policy with more instances or
	// paths sends every arrival to the same host and tenant as one with
	// fewer.
	instanceRand, pathRand                  *rand.Rand
	hostWeights, tenantWeights, pathWeights weighted // hosts, tenants and paths by weight
	oneRoute                                bool     // one host, tenant and path, and a constant cost: every arrival routes alike
	instanceWeights                         weighted // no weights: instances share the workload evenly
	roundRobinNext                          int      // the next host of a round-robin workload, before the modulo
	ahead                                   struct {
		next routed // the workload process's next arrival
		ok   bool   // next is drawn: the first arrival fired
	} // routed ahead (routeAhead)
	lookahead bool // arrivals are routed ahead: some table an arrival reaches is larger than lookaheadAbove
}

// start schedules the first arrivals and the first interval tick.
func (p *pipeline) start() {
	switch {
	case p.recorded != nil:
		p.streams = 1
		p.scheduleArrival(0, 0)
	case len(p.tenantArrivals) > 0:
		p.streams = len(p.tenantArrivals)
		for t := range p.tenantArrivals {
			p.scheduleArrival(0, t+1)
		}
	case p.arrivals == nil: // backlog: every instance's producer starts at 0
		for k := range p.instances {
			p.eng.Post(0, (*hBacklog)(p), uint64(k))
		}
		p.noMore = true
	default:
		p.streams = 1
		p.scheduleArrival(0, 0)
	}
	p.scheduleSamples(0, p.rec.NextTick())
	p.eng.Post(p.rec.NextTick(), (*hTick)(p), 0)
	p.scheduleFold()
}

// scheduleArrival schedules the next arrival of chain c (0: the workload's
// process; t+1: tenant t's own process).
func (p *pipeline) scheduleArrival(prev time.Duration, c int) {
	var at time.Duration
	ok := p.arrived < p.maxArrivals
	if ok {
		switch {
		case p.recorded != nil:
			at, ok = p.nextRecordedAt()
		case c == 0:
			at, ok = p.nextArrival(prev)
		case p.tenantGaps != nil:
			at, ok = p.tenantExp[c-1].NextGiven(prev, math.Float64frombits(p.tenantGaps[c-1].Next()))
		default:
			at, ok = p.tenantArrivals[c-1].Next(prev, p.tenantRands[c-1])
		}
	}
	if !ok || at > p.lastArrivalAt {
		p.cutByDuration = p.cutByDuration || ok // the next arrival fell past run.duration
		p.streams--
		p.noMore = p.streams == 0
		return
	}
	p.chains[c], p.chainAt[c] = p.eng.At(at, (*hArrival)(p), uint64(c)), at
}

// closeArrivals releases the arrival processes that read a file as the
// run goes (a streamed trace) and returns the first error reading one: a
// run that replayed a trace it could not read whole has no results.
func (p *pipeline) closeArrivals() error {
	var first error
	for _, a := range append([]arrivals.Process{p.arrivals}, p.tenantArrivals...) {
		if c, ok := a.(io.Closer); ok {
			if err := c.Close(); first == nil {
				first = err
			}
		}
	}
	return first
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
	if p.arrived >= p.maxArrivals {
		p.stopArrivals()
		return
	}
	p.arrived++
	p.lastArrival = now
	if p.recorded != nil {
		p.fireRecorded(now, c)
		return
	}
	if p.arrived >= p.maxArrivals {
		p.stopArrivals()
	} else {
		// From this arrival's own instant, not from when it fired: on the
		// wall clock (live mode) a late timer must not slow the arrival
		// process down, as an open-model load generator keeps its
		// schedule. In a simulation the two are the same.
		p.scheduleArrival(p.chainAt[c], int(c))
	}
	var k int
	var rt route
	if c == 0 && p.lookahead {
		k, rt = p.routeAhead()
	} else {
		k = p.pickInstance()
		rt = p.route(int(c) - 1)
	}
	p.arrive(now, k, false, rt)
}

// pickInstance draws the client instance an arrival goes to.
func (p *pipeline) pickInstance() int {
	if n := len(p.instances); n > 1 {
		if p.instanceWeights.n() > 0 {
			return p.instanceWeights.pick(p.instanceRand)
		}
		return p.instanceRand.IntN(n)
	}
	return 0
}

// routed is an arrival's client instance and route, drawn ahead of it.
type routed struct {
	k  int
	rt route
}

// routeAhead returns the instance and route of the workload process's
// arrival now firing, drawn one arrival ahead, and draws the next one.
// The draws come from their own streams in the same order as when each
// arrival draws its own, so the results are the same; what changes is
// when the state an arrival reaches first is asked for. With thousands of
// tenants or hosts each arrival reaches a different tenant's or host's
// records and limiters, seldom in cache: asked for one arrival ahead,
// their misses overlap with the work in between instead of stalling each
// arrival in turn.
func (p *pipeline) routeAhead() (int, route) {
	a := &p.ahead
	if !a.ok { // the first arrival: nothing drawn yet
		a.next, a.ok = p.drawAhead(), true
	}
	cur := a.next
	a.next = p.drawAhead()
	return cur.k, cur.rt
}

// drawAhead draws an arrival's instance and route and prefetches the
// records it reaches, its upstream server and its limiter objects at its
// tenant or host.
func (p *pipeline) drawAhead() routed {
	r := routed{k: p.pickInstance(), rt: p.route(-1)}
	p.rec.PrefetchTenant(int(r.rt.tenant))
	if len(p.servers) > 1 {
		prefetch.Of(p.servers[r.rt.host])
		p.rec.PrefetchHost(int(r.rt.host))
	}
	for _, st := range p.instances[r.k].scoped[r.rt.path] {
		if s := st.slotOf(int(r.rt.host), int(r.rt.tenant)); s >= 0 {
			if l, ok := st.limiters[s].(*models.Line); ok {
				prefetch.Of(l)
			}
			p.rec.PrefetchScope(st.li, s)
		}
	}
	return r
}

// hBacklog feeds instance arg's backlog into its ingest as fast as it
// accepts, one `await queue.put` after another.
func (h *hBacklog) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	in := p.instances[arg]
	p.lastArrival = now
	if in.blocked != 0 { // the blocked put completed: the item is queued
		p.rec.Blocked(now, -1)
		p.rec.QueueIn(now)
		if r := p.lookup(in.blocked - 1); r != nil {
			r.since = now
		}
		in.blocked = 0
	}
	for in.backlogLeft > 0 {
		in.backlogLeft--
		p.arrived++
		if blocked := p.arrive(now, int(arg), true, p.route(-1)); blocked {
			return // resumed by the queue when the put completes
		}
	}
}

// route is where an arrival goes and what it costs: the draws every
// arrival makes, in the same order, whether or not it is then refused.
type route struct {
	host, tenant, path uint16
	cost               int64
}

// route draws an arrival's host, tenant (unless its own chain names it),
// path and cost.
func (p *pipeline) route(tenant int) route {
	if p.oneRoute { // one host, tenant and path, a constant cost: no draw
		return route{cost: p.fixedCost}
	}
	var rt route
	if p.cfg.Workload.RoundRobin && p.hostWeights.n() > 1 {
		rt.host = uint16(p.roundRobinNext % p.hostWeights.n())
		p.roundRobinNext++
	} else {
		rt.host = uint16(p.hostWeights.pick(p.routeRand))
	}
	if tenant >= 0 {
		rt.tenant = uint16(tenant)
	} else {
		rt.tenant = uint16(p.tenantWeights.pick(p.routeRand))
	}
	rt.path = uint16(p.pathWeights.pick(p.pathRand))
	if rt.cost = p.fixedCost; rt.cost == 0 {
		rt.cost = p.drawCost(int(rt.path))
	}
	return rt
}

// counted records an arrival at instance k: the counts, its cost, the
// live-request guard.
func (p *pipeline) counted(now time.Duration, k int, rt route) {
	p.instances[k].counts.Arrived++
	p.costArrived(int(rt.host), rt.cost)
	p.inSystem++
	if p.inSystem > p.cfg.Run.MaxLiveRequests {
		p.eng.Abort(p.liveGuard(now))
	}
	p.rec.Arrived(now, int(rt.tenant))
}

// newRequest allocates and routes a request.
func (p *pipeline) newRequest(now time.Duration, k int, rt route) *request {
	_, r, h := p.requests.Alloc()
	r.handle = h
	r.instance = uint16(k)
	r.host, r.tenant, r.path, r.cost = rt.host, rt.tenant, rt.path, rt.cost
	r.arrived, r.since = now, now
	r.seq = uint32(min(p.arrived, 1<<32-1))
	r.lim = -1
	if p.recorded != nil {
		p.setLatency(r, p.arriving)
	}
	if p.trace != nil {
		p.trace.follow(r, now, p.traceNames)
	}
	p.counted(now, k, rt)
	return r
}

// refuse ends an arrival that instance k turns away at once (one task per
// request, and client.max_waiting already waiting on limiters) as a
// request would that ended RejectedIngest on arrival: the same draws and
// records, without a request record. A traced run takes the full path, so
// that the refusal is in the trace.
func (p *pipeline) refuse(now time.Duration, k int, rt route) {
	p.counted(now, k, rt)
	if len(p.instances) > 1 { // as end counts it
		p.instances[k].counts.Ended++
	}
	p.rec.Ended(now, now, int(rt.tenant), metrics.RejectedIngest, 0)
	if p.observer != nil {
		p.observer.Ended(now, now, int(rt.tenant), metrics.RejectedIngest)
	}
	p.inSystem--
	p.lastEnd = now
}

// arrive brings a new request, routed as rt, to instance k's ingest. For a
// backlog producer it reports whether the producer is now blocked on a
// full queue.
func (p *pipeline) arrive(now time.Duration, k int, producer bool, rt route) (blocked bool) {
	in := p.instances[k]
	if in.queue == nil && p.trace == nil && !p.cfg.MaxParked.Admits(in.parked) {
		p.refuse(now, k, rt)
		return false
	}
	r := p.newRequest(now, k, rt)
	if in.queue == nil {
		if p.trace == nil {
			p.processAdmitted(now, r) // client.max_waiting was checked above
		} else {
			p.process(now, r)
		}
		return false
	}
	r.phase = phQueued
	var st models.Status
	if p.cfg.Ingest.Block {
		ph, parg := clock.Handler((*hBacklog)(p)), uint64(k)
		if !producer {
			ph, parg = (*hWake)(p), r.arg() // the arrival itself waits on put
		}
		_, st = in.queue.PutWait(now, (*hWorker)(p), r.arg(), ph, parg)
		if st == models.Blocked && producer {
			// The backlog producer resumes when the put completes; the
			// queue then holds the item.
			p.rec.Blocked(now, 1)
			in.blocked = r.arg() + 1
			return true
		}
	} else {
		_, st = in.queue.Put(now, (*hWorker)(p), r.arg())
	}
	switch st {
	case models.Granted:
		p.process(now, r)
	case models.Parked:
		p.rec.QueueIn(now)
	case models.Blocked:
		p.rec.Blocked(now, 1)
	case models.Full:
		if p.trace != nil {
			p.trace.refused(r, "client.queue_capacity", now)
		}
		p.end(now, r, metrics.RejectedIngest)
	}
	return false
}

// hWorker: a worker took the item from the ingest queue.
func (h *hWorker) Fire(now time.Duration, arg uint64) {
	p := (*pipeline)(h)
	r := p.lookup(arg)
	if r == nil {
		return
	}
	p.rec.QueueOut(now, r.since)
	if p.trace != nil {
		p.trace.span(r, "ingest queue", r.since, now, "")
	}
	p.process(now, r)
}

// process starts work on a request: the request deadline starts now (the
// article's crawler wraps each get in asyncio.timeout inside the worker).
func (p *pipeline) process(now time.Duration, r *request) {
	if c := p.cfg; c.Ingest == nil && !c.MaxParked.Admits(p.instances[r.instance].parked) {
		// One task per request, and MaxParked already wait on limiters:
		// the arrival is refused before it takes anything.
		if p.trace != nil {
			p.trace.refused(r, "client.max_waiting", now)
		}
		p.end(now, r, metrics.RejectedIngest)
		return
	}
	p.processAdmitted(now, r)
}

// processAdmitted is process once client.max_waiting admitted r.
func (p *pipeline) processAdmitted(now time.Duration, r *request) {
	r.started = now
	if c := &p.cfg.Retry; c.Budget > 0 {
		p.instances[r.instance].budget.request(now, c.BudgetWindow)
	}
	if d := p.cfg.RequestTimeout; d > 0 {
		r.deadline = p.eng.At(clock.Add(now, d), (*hDeadline)(p), r.arg())
	}
	p.attempt(now, r)
}
