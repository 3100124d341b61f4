package client

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// Request phases.
const (
	phNew       uint8 = iota // allocated, not yet in a stage
	phQueued                 // in the ingest queue (or its producer blocked)
	phPausing                // sleeping out a 429 pause
	phAcquiring              // parked on a limiter
	phBackoff                // sleeping before a retry
	phServerQ                // waiting for a server worker
	phInFlight               // sent, awaiting the response
	phDone                   // ended; slot kept until the server finishes
)

// request is one simulated request; requests live in a slab and are named
// by their slab handle in event arguments. A *request is passed from stage
// to stage within one event; it stays valid until the next allocation, and
// only arrive allocates, before any stage holds a record (a backlog
// producer's event arrives several, one after another), and an attempt
// timeout, which moves its request to a new record (leaveToServer).
type request struct {
	// The fields every stage reads come first, to share a cache line with
	// the slab's header.
	handle       slab.Handle // names the request in event arguments
	phase        uint8
	serverBusy   bool
	paced        bool // holds a paced send slot: send when woken
	expired      bool // the deadline passed as a grant was on its way
	instance     uint16
	host, tenant uint16
	path         uint16
	step         uint16 // next position in the path's limiter list
	attempt      uint16
	quotaCost    uint16        // what the request's last retry took from the AWS retry quota
	traced       bool          // followed by the trace
	seq          uint32        // arrival number (for traces)
	lim, scope   int32         // limiter parked on
	held         uint64        // bit i: holds a permit of limiter i
	cost         int64         // the request's own cost (its input tokens)
	since        time.Duration // entry into the current stage
	timer        clock.Timer   // acquisition timeout, pause or back-off sleep
	reserved     int64         // the attempt's reservation for its response's cost
	reservedAt   time.Duration // when the attempt began taking its limiters (no later than any of its grants)
	arrived      time.Duration
	started      time.Duration // processing began (the request deadline's origin)
	sentAt       time.Duration
	waited       time.Duration // total time parked on limiters
	deadline     clock.Timer
	ticket       models.Ticket
	prevBackoff  time.Duration
	answer       upstream.Answer
}

type instance struct {
	queue       *models.Queue
	limiters    [][]models.Limiter  // [limiter][scope]
	releasers   [][]models.Releaser // [limiter][scope]: limiters as releasers, for the limiters whose permits come back; nil rows for the others
	active      [][]uint64          // [limiter] bit set of the scopes that may be in use (see hSample)
	steps       [][]step            // [path] the path's limiters in order, as acquire and release take them
	scoped      [][]*step           // [path] the steps of steps whose limiter has a scope per host or tenant
	pausedUntil []time.Duration     // per host
	pace        []hostPace          // per host, when the client paces on rate-limit headers
	parked      int                 // requests parked on limiters (max_waiting)
	backlogLeft int64
	budget      budget     // requests and retries for Retry.Budget
	tokens      float64    // Retry.Tokens' bucket
	sdk         []sdkState // per host, for Retry.SDK; nil without one
	counts      metrics.InstanceStats
	blocked     uint64 // arg+1 of the backlog item whose put is blocked
	estimate    *costEstimator
}

// pipeline wires one scenario replication onto an engine.
type pipeline struct {
	cfg          *Config
	eng          engine
	rec          *metrics.Recorder
	instances    []*instance
	stores       []clusterStore          // by limiter: a cluster limiter's shared store, nil for the others
	newStore     storeMaker              // builds cluster stores; nil: the model
	live         *liveClient             // live mode: attempts go over HTTP; nil in simulation
	servers      []*upstream.Server      // by host
	serverQueues []*models.Queue         // by host; nil when unbounded
	shared       []*upstream.SharedQuota // the quotas several hosts count, as declared
	paths        [][]int                 // each path's limiters in order
	scopeOf      [][]int                 // [limiter][host or tenant] → scope index, -1 = not applied; nil: the key itself (see scope)
	requests     slab.Slab[request]

	// The state of the stages that keep their own, each beside its code.
	arrivalChains // arrivals.go
	router        // arrivals.go
	costing       // cost.go
	sampling      // sample.go
	recording     // recorded.go
	drawnAhead    // drawahead.go

	lastEnd, lastArrival time.Duration
	inSystem             int64
	jitterRand           *rand.Rand
	wakeRand             *rand.Rand // the wake order at a pause's end (resumeAt)
	retryRand            *rand.Rand
	facts                []limFacts // by limiter: what each acquisition asks of its configuration
	trace                *tracer
	adaptive             bool // some limiter adapts to the answers
	sdk                  bool // the retry policy is an SDK's (Retry.SDK)

	// What every request asks of the configuration, worked out once.
	pauses      bool // a host pause can apply: on_429.pause = "host", or headers.pause_at_zero (pausedUntil)
	deadlines   bool // an acquisition or request timeout bounds acquisitions (deadlineOf)
	readsAnswer bool // an adaptive limiter or the rate-limit headers read each answer (answered)

	progress *atomic.Int64 // Options.Progress
	// progressDone is what this replication has added to progress.
	progressDone int64
	lastRep      *latestRep    // Options.lastRep
	clock        *atomic.Int64 // Options.Clock
	rep          int           // the replication running
}

type (
	hArrival        pipeline
	hBacklog        pipeline
	hWorker         pipeline
	hGrant          pipeline
	hTimeout        pipeline
	hDeadline       pipeline
	hAttemptTimeout pipeline
	hWake           pipeline
	hServer         pipeline
	hResponse       pipeline
	hTick           pipeline
	hSample         pipeline
	hFold           pipeline
)

// lookaheadAbove is the size of the largest table of tenants, hosts or
// limiter scopes above which the workload's arrivals are routed ahead
// (routeAhead). Each entry's state, over its records and its limiter, is
// a few hundred bytes: beyond a few thousand entries it outgrows a core's
// second-level cache and an arrival's first reads miss, which prefetching
// one arrival ahead hides; below, the entries stay in cache and the work
// of routing ahead is not paid back.
const lookaheadAbove = 4096

// largestTable returns the most tenants, hosts or scopes of one limiter an
// arrival chooses among.
func (p *pipeline) largestTable() int {
	n := max(p.tenantWeights.n(), p.hostWeights.n())
	for _, in := range p.instances {
		for _, row := range in.limiters {
			n = max(n, len(row))
		}
	}
	return n
}

// maxLimiters is how many limiters a request can hold at once (a bit each).
const maxLimiters = 64

// heldBit is limiter li's bit in request.held. li is below maxLimiters;
// the mask spares the shift the check a larger count would need.
func heldBit(li int) uint64 { return 1 << (li & (maxLimiters - 1)) }

// engine is what a pipeline runs on: sim.Engine in virtual time, or a
// wall-clock loop in live mode (see RunLive).
type engine interface {
	clock.Scheduler
	// Stream returns the named random stream of the run's seed.
	Stream(name string) *rand.Rand
	// Pending returns the number of scheduled events.
	Pending() int
	// Events returns the number of events fired so far.
	Events() uint64
	// Abort stops the run with err.
	Abort(err error)
	// Seed is the run's seed.
	Seed() uint64
}

// lookup returns the live request named by arg (a slab handle), or nil if
// it is stale or not yet under way.
func (p *pipeline) lookup(arg uint64) *request {
	_, r, ok := p.requests.Lookup(slab.Handle(arg))
	if !ok || r.phase == phNew {
		return nil
	}
	return r
}

// arg is the event argument naming r: its slab handle.
func (r *request) arg() uint64 { return uint64(r.handle) }

// cancel cancels t if it names a timer: most requests hold none, and the
// engine is reached through an interface.
func (p *pipeline) cancel(t clock.Timer) {
	if !t.IsZero() {
		p.eng.Cancel(t)
	}
}
