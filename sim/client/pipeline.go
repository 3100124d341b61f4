package client

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
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
// producer's event arrives several, one after another).
type request struct {
	// The fields every stage reads come first, to share a cache line with
	// the slab's header.
	handle       slab.Handle // names the request in event arguments
	phase        uint8
	serverBusy   bool
	paced        bool // holds a paced send slot: send when woken
	expired      bool // the deadline passed as a grant was on its way
	inst         uint16
	host, tenant uint16
	path         uint16
	step         uint16 // next position in the path's limiter list
	attempt      uint16
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
	lims        [][]models.Limiter  // [limiter][scope]
	rels        [][]models.Releaser // [limiter][scope]: lims as releasers, for the limiters whose permits come back; nil rows for the others
	active      [][]uint64          // [limiter] bit set of the scopes that may be in use (see hSample)
	steps       [][]step            // [path] the path's limiters in order, as acquire and release take them
	scoped      [][]*step           // [path] the steps of steps whose limiter has a scope per host or tenant
	pausedUntil []time.Duration     // per host
	pace        []hostPace          // per host, when the client paces on rate-limit headers
	parked      int                 // requests parked on limiters (max_waiting)
	backlogLeft int64
	budget      budget  // requests and retries for Retry.Budget
	tokens      float64 // Retry.Tokens' bucket
	counts      metrics.InstanceStats
	blocked     uint64 // arg+1 of the backlog item whose put is blocked
	estimate    *costEstimator
}

// pipeline wires one scenario replication onto an engine.
type pipeline struct {
	cfg      *Config
	eng      engine
	rec      *metrics.Recorder
	insts    []*instance
	stores   []clusterStore     // by limiter: a cluster limiter's shared store, nil for the others
	newStore storeMaker         // builds cluster stores; nil: the model
	live     *liveClient        // live mode: attempts go over HTTP; nil in simulation
	servers  []*upstream.Server // by host
	serverQ  []*models.Queue    // by host; nil when unbounded
	paths    [][]int            // each path's limiters in order
	scopeOf  [][]int            // [limiter][host or tenant] → scope index, -1 = not applied; nil: the key itself (see scope)
	reqs     slab.Slab[request]
	arrivals arrivals.Process
	perTen   []arrivals.Process // tenants' own processes, when they bring them
	perRng   []*rand.Rand
	arrived  int64
	noMore   bool
	streams  int             // arrival chains still running
	chains   []clock.Timer   // each chain's pending arrival
	chainAt  []time.Duration // and its instant
	// run.requests and run.duration as the arrival chains compare with
	// them: the most arrivals (math.MaxInt64 when unlimited) and the
	// latest instant of one (just before run.duration, or clock.Never).
	maxArrivals int64
	// cutByDuration: an arrival chain ended because its next arrival fell
	// past run.duration, not because its process or run.requests ended.
	cutByDuration bool
	lastArrivalAt time.Duration

	lastEnd, lastArrival time.Duration
	inSystem             int64

	rArr, rRoute, rJitter, rRetry *rand.Rand
	// rInst and rPath draw an arrival's client instance and path: streams
	// of their own, so that a policy with more instances or paths sends
	// every arrival to the same host and tenant as one with fewer.
	rInst, rPath                  *rand.Rand
	cost                          upstream.Count // each request's cost
	costN                         int64          // the cost when it is constant, else 0
	rCost                         *rand.Rand     // the costs' stream, when they vary
	costs                         []*hostCost    // by host; nil for a host that counts no cost
	costed                        bool           // some host keeps cost statistics
	varies                        bool           // what some limiter takes varies by grant (costVaries)
	reserveRoom                   [][]sized      // by path, for learned reservations: the limiters that bound them; nil otherwise
	facts                         []limFacts     // by limiter: what each acquisition asks of its configuration
	reserveHeld, reserveHeldFirst int64          // attempts whose reservation was held, and the first one's estimate
	reserveHeldBy                 sized          // the limiter that held the first
	hostW, tenantW, pathW         weighted       // hosts, tenants and paths by weight
	oneRoute                      bool           // one host, tenant and path, and a constant cost: every arrival routes alike
	instW                         weighted       // no weights: instances share the workload evenly
	rr                            int
	ahead                         struct {
		next routed // the workload process's next arrival
		ok   bool   // next is drawn: the first arrival fired
	} // routed ahead (routeAhead)
	lookahead bool // arrivals are routed ahead: some table an arrival reaches is larger than lookaheadAbove

	limUsage, hostUsage, hostPaused []float64 // sample sums, then interval means
	samples                         int       // quota readings this interval
	hostReads                       int       // sample instants that read the quotas (hostRounds)
	limSamples, limRounds           []int     // readings this interval, and sample instants that read, per limiter
	limStride, limPhase             []int     // per limiter: readings that take each scope once, and the next reading's first scope (scopeStride)
	toRead                          []int     // the scopes a usage reading reads (sampleLimiter), kept for the next
	trace                           *tracer
	adaptive                        bool // some limiter adapts to the answers

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
	hArrival  pipeline
	hBacklog  pipeline
	hWorker   pipeline
	hGrant    pipeline
	hTimeout  pipeline
	hDeadline pipeline
	hWake     pipeline
	hServer   pipeline
	hResponse pipeline
	hTick     pipeline
	hSample   pipeline
	hFold     pipeline
)

// cumulative returns the running sums of the weights ws (positive and
// finite), normalised so that the last is 1. Weights whose sum overflows
// (two of 1e308) are first divided by the largest, which leaves their
// ratios; other weights are summed as given.
func cumulative(ws []float64) []float64 {
	out := make([]float64, len(ws))
	var t float64
	for i, w := range ws {
		t += w
		out[i] = t
	}
	if math.IsInf(t, 1) {
		top := slices.Max(ws)
		t = 0
		for i, w := range ws {
			t += w / top
			out[i] = t
		}
	}
	for i := range out {
		out[i] /= t
	}
	return out
}

// weighted draws indices 0…n−1 in proportion to their weights.
type weighted struct {
	cum  []float64 // cumulative weights, normalised: the last is 1
	even bool      // every weight is the same (and there are two or more)
}

func newWeighted(ws []float64) weighted {
	w := weighted{cum: cumulative(ws), even: len(ws) > 1}
	for _, x := range ws {
		w.even = w.even && x == ws[0]
	}
	return w
}

// n is the number of indices.
func (w *weighted) n() int { return len(w.cum) }

// pick draws an index: the first i with cum[i] ≥ a uniform draw.
func (w *weighted) pick(r *rand.Rand) int {
	if len(w.cum) == 1 { // one host, tenant or path: no draw (and the call inlines to this test)
		return 0
	}
	return w.draw(r)
}

// draw is pick among two or more indices; kept out of pick, whose call
// then inlines.
func (w *weighted) draw(r *rand.Rand) int { return w.at(r.Float64()) }

// evenGuard is how close, in units of one index, x·n may come to a whole
// number before an even pick looks at the cumulative weights: far more
// than their rounding, so that outside it the index from x·n alone is the
// one the cumulative weights give. The running sums of n equal weights
// drift from k·w by at most about n²·2⁻⁵⁴ of an index (2.4·10⁻⁷ for the
// 65,536 tenants or hosts a scenario may have; 6.6·10⁻⁸ measured with
// weights of 0.1), and x·n rounds by n·2⁻⁵³.
const evenGuard = 1e-4

// at returns the first i with cum[i] ≥ x, x in [0, 1). Among equal
// weights that is ⌊x·n⌋, read without touching cum (thousands of tenants
// or hosts: a cache miss an arrival) unless x·n is within evenGuard of a
// whole number. Otherwise it guesses i as if the weights were equal and
// walks a few steps from there, which finds it at once among near-equal
// weights, and falls back to a binary search. The index is the same
// every way.
func (w *weighted) at(x float64) int {
	cum := w.cum
	n := len(cum)
	f := x * float64(n)
	i := min(int(f), n-1)
	if w.even {
		if d := f - float64(i); d > evenGuard && d < 1-evenGuard {
			return i
		}
	}
	for range 4 {
		switch {
		case i > 0 && cum[i-1] >= x:
			i--
		case i < n-1 && cum[i] < x:
			i++
		default:
			return i
		}
	}
	return min(sort.SearchFloat64s(cum, x), n-1)
}

// limFacts is what the pipeline asks of a limiter's configuration at every
// acquisition, held together: the configuration itself is large, and each
// question of it a multiplication and a load from a different line.
type limFacts struct {
	scope      Scope
	releases   bool // a concurrency limiter: its permits come back
	countsCost bool // it takes a request's cost rather than one unit
}

// step is one limiter of a path in one client instance, with what taking
// and giving back its permits asks, gathered when the pipeline is built: a
// request's stage reads one record rather than the configuration, the
// facts and the instance's tables in turn.
type step struct {
	li         int
	scope      Scope
	keyScope   []int             // host or tenant → scope slot, -1 = not covered; nil: the key itself
	lims       []models.Limiter  // by scope slot
	rels       []models.Releaser // by scope slot; nil when the permits do not come back
	active     []uint64          // scope slots that may be in use (the instance's set, shared)
	countsCost bool              // takes the request's cost, not one unit
	ownBound   bool              // every object enforces its max_waiting itself (a Line)
}

// slot returns request r's scope slot at the step's limiter, or -1 when
// the limiter does not cover r (as pipeline.scope does).
func (st *step) slot(r *request) int { return st.slotOf(int(r.host), int(r.tenant)) }

func (st *step) slotOf(host, tenant int) int {
	var k int
	switch st.scope {
	case PerHost:
		k = host
	case PerTenant:
		k = tenant
	default: // one scope for everyone
		return 0
	}
	if st.keyScope != nil {
		return st.keyScope[k]
	}
	return k
}

// newSteps builds instance in's step table from its limiter tables.
func (p *pipeline) newSteps(in *instance) {
	in.steps = make([][]step, len(p.paths))
	for pi, lims := range p.paths {
		for _, li := range lims {
			st := step{li: li, scope: p.facts[li].scope, keyScope: p.scopeOf[li], lims: in.lims[li], rels: in.rels[li],
				active: in.active[li], countsCost: p.facts[li].countsCost, ownBound: true}
			for _, lim := range st.lims {
				if _, line := lim.(*models.Line); !line {
					st.ownBound = false
				}
			}
			in.steps[pi] = append(in.steps[pi], st)
		}
	}
	in.scoped = make([][]*step, len(p.paths))
	for pi := range in.steps {
		for i := range in.steps[pi] {
			if st := &in.steps[pi][i]; st.scope == PerHost || st.scope == PerTenant {
				in.scoped[pi] = append(in.scoped[pi], st)
			}
		}
	}
}

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
	n := max(p.tenantW.n(), p.hostW.n())
	for _, in := range p.insts {
		for _, row := range in.lims {
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

// newPipeline builds replication rep on a simulation engine.
func newPipeline(cfg *Config, rep int) (*pipeline, error) {
	eng := sim.New(cfg.Run.Seed + uint64(rep))
	p, err := buildPipeline(cfg, eng, nil)
	if err != nil {
		return nil, err
	}
	for li, l := range cfg.Limiters {
		eng.Watch(&limiterParker{p: p, li: li, name: l.Name})
	}
	eng.Watch(&queueParker{p})
	eng.ExplainStalls(p.explainStall)
	return p, nil
}

// buildPipeline builds a pipeline on eng, whose seed is the run's;
// newStore builds its cluster limiters' stores (nil: the model).
func buildPipeline(cfg *Config, eng engine, newStore storeMaker) (*pipeline, error) {
	if len(cfg.Limiters) > maxLimiters {
		return nil, fmt.Errorf("%w: at most %d client limiters, got %d", ErrConfig, maxLimiters, len(cfg.Limiters))
	}
	if len(cfg.Upstreams) != len(cfg.Workload.Hosts) {
		return nil, fmt.Errorf("%w: %d upstreams for %d hosts", ErrConfig, len(cfg.Upstreams), len(cfg.Workload.Hosts))
	}
	p := &pipeline{cfg: cfg, eng: eng, newStore: newStore}
	p.rArr = eng.Stream("arrivals")
	p.rRoute = eng.Stream("routing")
	p.rInst = eng.Stream("instance")
	p.rPath = eng.Stream("path")
	p.rJitter = eng.Stream("jitter")
	p.rRetry = eng.Stream("retry")
	w := &cfg.Workload
	if err := p.newCost(); err != nil {
		return nil, err
	}
	hosts, tenants := names(w.Hosts), make([]string, len(w.Tenants))
	var tw []float64
	for i, t := range w.Tenants {
		tenants[i], tw = t.Name, append(tw, t.Weight)
	}
	p.hostW, p.tenantW = newWeighted(weights(w.Hosts)), newWeighted(tw)
	var pw []float64
	_, p.paths = cfg.pathLimiters()
	for i := range p.paths {
		if len(cfg.Paths) > 0 {
			pw = append(pw, cfg.Paths[i].Weight)
		} else {
			pw = append(pw, 1)
		}
	}
	p.pathW = newWeighted(pw)
	p.oneRoute = p.hostW.n() == 1 && p.tenantW.n() == 1 && p.pathW.n() == 1 && p.costN != 0
	p.facts = make([]limFacts, len(cfg.Limiters))
	for li, l := range cfg.Limiters {
		p.facts[li] = limFacts{scope: l.Scope, releases: l.Kind.Releases(), countsCost: !l.Kind.Releases() && !l.CountsRequests}
		p.varies = p.varies || p.costVaries(li)
	}
	p.newReserveRoom()
	if err := p.newServers(); err != nil {
		return nil, err
	}
	p.newHostCosts()
	infos := p.newScopes(hosts, tenants)
	if err := p.newInstances(infos); err != nil {
		return nil, err
	}
	p.newArrivals()
	p.lookahead = p.largestTable() > lookaheadAbove
	p.rec = metrics.NewRecorder(metrics.Layout{Scenario: cfg.Name, Seed: eng.Seed(), Warmup: cfg.Run.Warmup,
		Interval: cfg.Run.Interval, Ingest: ingestName(cfg.Ingest), Limiters: infos, Hosts: hosts, Quotas: quotas(cfg.Upstreams, p.meanCostF()),
		QuotaSchedules: quotaSchedules(cfg.Upstreams), Tenants: tenants,
		RequestTimeout: cfg.RequestTimeout, AcquireTimeout: cfg.AcquireTimeout, Instances: cfg.Instances})
	if w := cfg.InstanceWeights; len(w) == cfg.Instances && cfg.Instances > 1 {
		p.instW = newWeighted(w)
	}
	p.limUsage = make([]float64, len(cfg.Limiters))
	p.limSamples = make([]int, len(cfg.Limiters))
	p.hostReads = p.hostRounds()
	p.limRounds = make([]int, len(cfg.Limiters))
	p.limStride, p.limPhase = make([]int, len(cfg.Limiters)), make([]int, len(cfg.Limiters))
	for li := range p.limRounds {
		p.limRounds[li] = p.sampleRounds(li)
		p.limStride[li] = p.scopeStride(li)
	}
	p.hostUsage = make([]float64, len(hosts))
	p.hostPaused = make([]float64, len(hosts))
	p.pauses = cfg.On429.Pause == PauseHost || cfg.Headers.PauseAtZero
	p.deadlines = cfg.AcquireTimeout > 0 || cfg.RequestTimeout > 0
	p.readsAnswer = p.adaptive || cfg.Headers.SlowBelow > 0 || cfg.Headers.PauseAtZero
	return p, nil
}

func names(ss []Share) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func weights(ss []Share) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.Weight
	}
	return out
}

// quotas describes each host's quotas for the recorder: the tightest rate
// or window quota's requests per second, and the fewest permits of a
// concurrency quota. A quota that counts cost admits its rate ÷ a
// request's mean cost (its own and its response's) requests per second.
func quotas(ups []upstream.Config, reqCost float64) []metrics.QuotaInfo {
	out := make([]metrics.QuotaInfo, len(ups))
	for i, u := range ups {
		perReq := reqCost
		if u.ResponseCost != nil {
			if c, err := upstream.NewCount(u.ResponseCost, 0); err == nil {
				perReq += c.Mean()
			}
		}
		for _, q := range u.Quotas {
			c, conc := q.Capacity()
			if q.CountsCost() {
				c /= max(1, perReq)
			}
			switch {
			case conc && (out[i].Permits == 0 || int64(c) < out[i].Permits):
				out[i].Permits = int64(c)
			case !conc && (out[i].PerSecond == 0 || c < out[i].PerSecond):
				out[i].PerSecond = c
			}
		}
	}
	return out
}

// quotaSchedules lists each host's quota rate changes for the recorder
// (those of its first quota with a schedule).
func quotaSchedules(ups []upstream.Config) [][]metrics.QuotaStep {
	out := make([][]metrics.QuotaStep, len(ups))
	for i, u := range ups {
		for _, q := range u.Quotas {
			if len(q.Schedule) == 0 || out[i] != nil {
				continue
			}
			for _, st := range q.Schedule {
				out[i] = append(out[i], metrics.QuotaStep{AtS: st.At.Seconds(), RPS: st.Rate})
			}
		}
	}
	return out
}

// ingestName is the ingest as the results name it.
func ingestName(in *Ingest) string {
	if in == nil {
		return "tasks"
	}
	return "queue"
}

// newServers builds one server per host, shared by every instance.
func (p *pipeline) newServers() error {
	for _, u := range p.cfg.Upstreams {
		u.Headers = p.cfg.Headers.read() // only a client that reads them needs the headers
		var costR *rand.Rand
		if u.ResponseCost != nil {
			costR = p.eng.Stream("response_cost/" + u.Host)
		}
		srv, err := upstream.NewServer(u, p.eng.Stream("latency/"+u.Host), costR)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		p.servers = append(p.servers, srv)
		var q *models.Queue
		if u.Workers > 0 {
			if q, err = models.NewQueue(p.eng, models.Unbounded, u.Workers); err != nil {
				return fmt.Errorf("%w: upstream %s: %w", ErrConfig, u.Host, err)
			}
		}
		p.serverQ = append(p.serverQ, q)
	}
	return nil
}

// newScopes maps each limiter's hosts or tenants to its scope slots and
// describes the limiters for the recorder.
func (p *pipeline) newScopes(hosts, tenants []string) []metrics.LimiterInfo {
	var infos []metrics.LimiterInfo
	for _, l := range p.cfg.Limiters {
		info := metrics.LimiterInfo{Name: l.Name, Kind: l.Kind.Name, Scope: l.Scope.String(), Releases: l.Kind.Releases(),
			Capacity: l.Kind.Capacity(l.Params), Cost: max(1, p.costN), Family: l.Kind.Family.String(), Adaptive: l.Kind.Adaptive}
		p.adaptive = p.adaptive || l.Kind.Adaptive
		if l.Kind.Releases() || l.CountsRequests {
			info.Cost = 1
		} else if p.costN == 0 || p.cfg.Reserve.Estimate != EstimateNone {
			info.Charged = true // the units vary by grant: recorded as taken
		}
		var keys []string
		var idx []int
		switch l.Scope {
		case Global:
			keys = []string{"global"}
			idx = make([]int, max(len(hosts), len(tenants)))
		case Cluster:
			keys = []string{"cluster"}
			idx = make([]int, max(len(hosts), len(tenants)))
		case PerHost:
			idx = scopeIndex(hosts, l.Only, &keys)
		case PerTenant:
			idx = scopeIndex(tenants, l.Only, &keys)
		}
		info.Scopes = keys
		infos = append(infos, info)
		if identity(idx) || l.Scope == Global || l.Scope == Cluster {
			idx = nil // the key is the scope: no table to read per request
		}
		p.scopeOf = append(p.scopeOf, idx)
	}
	return infos
}

// newInstances builds each client instance: its ingest queue and one
// limiter object per limiter scope.
func (p *pipeline) newInstances(infos []metrics.LimiterInfo) error {
	c := p.cfg
	stores := make([]clusterStore, len(c.Limiters)) // Cluster limiters: one store for every instance
	p.stores = stores
	for li, l := range c.Limiters {
		if l.Scope != Cluster {
			continue
		}
		if p.newStore != nil {
			st, err := p.newStore(l)
			if err != nil {
				return err
			}
			stores[li] = st
			continue
		}
		if l.Store == nil {
			return fmt.Errorf("%w: client.limiter %s: a cluster limiter needs its store", ErrConfig, l.Name)
		}
		core, err := models.NewGCRA(models.GCRAConfig{Rate: l.Params.Rate, Burst: int64(l.Params.Burst)})
		var st *models.Store
		if err == nil {
			st, err = models.NewStore(core, p.eng, p.eng.Stream("store/"+l.Name), *l.Store)
		}
		if err != nil {
			return fmt.Errorf("%w: client.limiter %s: %w", ErrConfig, l.Name, err)
		}
		stores[li] = st
	}
	for k := range c.Instances {
		in := &instance{pausedUntil: make([]time.Duration, len(c.Workload.Hosts)), tokens: c.Retry.Tokens,
			estimate: newCostEstimator(c.Reserve)}
		if c.Headers.SlowBelow > 0 {
			in.pace = make([]hostPace, len(c.Workload.Hosts))
		}
		if c.Ingest != nil {
			q, err := models.NewQueue(p.eng, c.Ingest.Capacity, c.Ingest.Workers)
			if err != nil {
				return fmt.Errorf("%w: ingest: %w", ErrConfig, err)
			}
			in.queue = q
		}
		for li, l := range c.Limiters {
			row := make([]models.Limiter, len(infos[li].Scopes))
			env := models.Env{Sched: p.eng}
			for s := range row {
				if st := stores[li]; st != nil {
					row[s] = st.Front(l.Params.MaxWaiting)
					continue
				}
				// Each object of a limiter draws from its own stream (the
				// first keeps the limiter's name): lags and probes of
				// different instances and scopes are independent. The name
				// is made only for an object that draws.
				env.Stream = func() *rand.Rand { return p.eng.Stream(lagStream(l.Name, k, s)) }
				lim, err := l.Kind.New(l.Params, env)
				if err != nil {
					return fmt.Errorf("%w: client.limiter %s: %w", ErrConfig, l.Name, err)
				}
				row[s] = lim
			}
			in.lims = append(in.lims, row)
			var rels []models.Releaser
			if l.Kind.Releases() {
				rels = make([]models.Releaser, len(row))
				for s, lim := range row {
					rel, ok := lim.(models.Releaser)
					if !ok {
						return fmt.Errorf("%w: client.limiter %s: a %s limiter that cannot release", ErrConfig, l.Name, l.Kind.Name)
					}
					rels[s] = rel
				}
			}
			in.rels = append(in.rels, rels)
			in.active = append(in.active, allScopes(len(row)))
		}
		p.newSteps(in)
		p.insts = append(p.insts, in)
	}
	if c.Workload.Backlog {
		n, k := c.Run.Requests, int64(c.Instances)
		for i, in := range p.insts {
			in.backlogLeft = n / k
			if int64(i) < n%k {
				in.backlogLeft++
			}
		}
		if w := c.InstanceWeights; len(w) == len(p.insts) {
			// Uneven shares: each instance's share of the backlog, the
			// remainder to the first.
			var total float64
			for _, x := range w {
				total += x
			}
			left := n
			for i, in := range p.insts {
				in.backlogLeft = int64(float64(n) * w[i] / total)
				left -= in.backlogLeft
			}
			p.insts[0].backlogLeft += left
		}
	}
	return nil
}

// newArrivals builds the arrival chains: the workload's process, or one per
// tenant that brings its own.
func (p *pipeline) newArrivals() {
	w := &p.cfg.Workload
	switch {
	case w.OwnArrivals():
		for _, t := range w.Tenants {
			p.perTen = append(p.perTen, t.Arrivals.New())
			p.perRng = append(p.perRng, p.eng.Stream("arrivals/"+t.Name))
		}
	case !w.Backlog:
		p.arrivals = w.Arrivals.New()
	}
	p.chains = make([]clock.Timer, len(p.perTen)+1)
	p.chainAt = make([]time.Duration, len(p.chains))
	p.maxArrivals, p.lastArrivalAt = math.MaxInt64, clock.Never
	if run := &p.cfg.Run; run.Requests > 0 {
		p.maxArrivals = run.Requests
	}
	if run := &p.cfg.Run; run.Duration > 0 {
		p.lastArrivalAt = run.Duration - 1
	}
}

// lagStream names the random stream of limiter name's object for scope s
// of instance k.
func lagStream(name string, k, s int) string {
	if k > 0 || s > 0 {
		return fmt.Sprintf("lag/%s/%d/%d", name, k, s)
	}
	return "lag/" + name
}

// identity reports whether idx maps each key to itself.
func identity(idx []int) bool {
	for i, s := range idx {
		if s != i {
			return false
		}
	}
	return true
}

// scope returns request r's scope at limiter li, or -1 when li does not
// cover r.
func (p *pipeline) scope(li int, r *request) int {
	if m := p.scopeOf[li]; m != nil {
		return m[p.scopeKey(li, r)]
	}
	return p.scopeKey(li, r)
}

// scopeIndex maps each of all (hosts or tenants) to its scope slot, or -1
// when only keys are limited and this one is not among them.
func scopeIndex(all, only []string, keys *[]string) []int {
	idx := make([]int, len(all))
	in := map[string]bool{}
	for _, k := range only {
		in[k] = true
	}
	for i, name := range all {
		if len(only) > 0 && !in[name] {
			idx[i] = -1
			continue
		}
		idx[i] = len(*keys)
		*keys = append(*keys, name)
	}
	return idx
}

// lookup returns the live request named by arg (a slab handle), or nil if
// it is stale or not yet under way.
func (p *pipeline) lookup(arg uint64) *request {
	_, r, ok := p.reqs.Lookup(slab.Handle(arg))
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
