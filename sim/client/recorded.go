package client

import (
	"time"

	"github.com/limitsim/limitsim/report/metrics"
)

// Recorded is a recorded workload that replaces the scenario's arrival
// process in a replay: arrivals one at a time, in time order, each with
// its own host, tenant, cost and latency. It is read as the run goes,
// never held whole.
type Recorded interface {
	// Next returns the next arrival, or ok = false at the end.
	Next() (a RecordedArrival, ok bool)
}

// RecordedArrival is one recorded request.
type RecordedArrival struct {
	At     time.Duration // since the run's start; no earlier than the previous
	Host   int           // index into Workload.Hosts
	Tenant int           // index into Workload.Tenants (0 without tenants)
	// Cost is the request's cost; 0 (not logged) takes the cost the
	// scenario gives the path drawn for it (a path's cost, else
	// workload.cost).
	Cost int64
	// Latency is the time the server takes to answer it when it admits
	// it; 0 takes the upstream's latency model.
	Latency time.Duration
	// Path is the index into Config.Paths of the path the request takes
	// when HasPath (its logged method and URL matched it); otherwise one
	// is drawn by the paths' weights, as for any arrival.
	Path    int
	HasPath bool
}

// Observer follows each request through the client, for a replay to set
// what the configuration did beside what production saw. Its methods are
// called in simulated-time order, from the run's own goroutine.
type Observer interface {
	// Sent: the first attempt of the request that arrived at arrived
	// left the client at now.
	Sent(now, arrived time.Duration, tenant int)
	// Refused: an attempt of it was refused by the upstream with status
	// (0 for a quota's 429).
	Refused(arrived time.Duration, tenant, status int)
	// Ended: the request ended with o.
	Ended(now, arrived time.Duration, tenant int, o metrics.RequestEnd)
}

// recording is the pipeline's part that a replay sets: its recorded
// arrivals and its observer.
type recording struct {
	recorded     Recorded
	nextRecorded RecordedArrival // the arrival the chain has scheduled
	arriving     time.Duration   // the recorded latency of the request arriving now
	// latencies holds each live request's recorded latency by its slot
	// in the slab (0: the model's): kept apart, so that the request
	// record every run reads stays four cache lines.
	latencies []time.Duration
	observer  Observer
}

// setLatency records r's recorded latency.
func (p *pipeline) setLatency(r *request, d time.Duration) {
	i := int(r.handle.Index())
	for len(p.latencies) <= i {
		p.latencies = append(p.latencies, 0)
	}
	p.latencies[i] = d
}

// nextRecordedAt draws the next recorded arrival and returns its instant.
func (p *pipeline) nextRecordedAt() (time.Duration, bool) {
	a, ok := p.recorded.Next()
	p.nextRecorded = a
	return a.At, ok
}

// fireRecorded is hArrival.Fire for a recorded arrival (counted): the
// next one scheduled, this one routed to its own host, tenant, cost
// (when logged) and path (when matched; else drawn as any arrival draws
// one), and its latency.
func (p *pipeline) fireRecorded(now time.Duration, c uint64) {
	a := p.nextRecorded // before the next arrival replaces it
	if p.arrived >= p.maxArrivals {
		p.stopArrivals()
	} else {
		p.scheduleArrival(p.chainAt[c], int(c))
	}
	rt := route{host: uint16(a.Host), tenant: uint16(a.Tenant), cost: a.Cost}
	if a.HasPath && a.Path >= 0 && a.Path < p.pathWeights.n() {
		rt.path = uint16(a.Path)
	} else { // the draw any arrival makes, so that a replay without matched paths draws as before
		rt.path = uint16(p.pathWeights.pick(p.pathRand))
	}
	if rt.cost <= 0 { // not logged: the cost the scenario gives its path
		if rt.cost = p.fixedCost; rt.cost == 0 {
			rt.cost = p.drawCost(int(rt.path))
		}
	}
	p.arriving = a.Latency
	p.arrive(now, p.pickInstance(), false, rt)
}

// The observe methods tell the observer, when there is one (the caller
// checks, so that a run without one pays a comparison, not a call), of a
// request's first attempt, of a refused attempt and of a request's end.

func (p *pipeline) observeSent(now time.Duration, r *request) {
	if r.attempt == 0 {
		p.observer.Sent(now, r.arrived, int(r.tenant))
	}
}

func (p *pipeline) observeRefused(r *request) {
	if !r.answer.OK {
		p.observer.Refused(r.arrived, int(r.tenant), r.answer.Status)
	}
}
