package scenarios

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

// Request phases.
const (
	phFree      uint8 = iota
	phQueued          // in the ingest queue (or its producer blocked)
	phPausing         // sleeping out a 429 pause
	phAcquiring       // parked on a limiter
	phBackoff         // sleeping before a retry
	phServerQ         // waiting for a server worker
	phInFlight        // sent, awaiting the response
	phDone            // ended; slot kept until the server finishes
)

// request is one simulated request; requests live in a slab and are named
// by (index, generation) in event arguments.
type request struct {
	gen          uint32
	seq          uint32 // arrival number (for traces)
	phase        uint8
	inst         uint16
	host, tenant uint16
	path         uint16
	step         uint16 // next position in the path's limiter list
	attempt      uint16
	serverBusy   bool
	expired      bool   // the deadline passed as a grant was on its way
	held         uint64 // bit i: holds a permit of limiter i
	arrived      time.Duration
	started      time.Duration // processing began (the request deadline's origin)
	since        time.Duration // entry into the current stage
	sentAt       time.Duration
	waited       time.Duration // total time parked on limiters
	prevBackoff  time.Duration
	lim, scope   int32 // limiter parked on
	ticket       models.Ticket
	deadline     clock.Timer
	timer        clock.Timer // acquisition timeout, pause or back-off sleep
	answer       upstream.Answer
}

type instance struct {
	queue       *models.Queue
	lims        [][]models.Limiter // [limiter][scope]
	pausedUntil []time.Duration    // per host
	parked      int                // requests parked on limiters (max_waiting)
	backlogLeft int64
	blocked     uint64 // arg+1 of the backlog item whose put is blocked
}

type pathDef struct {
	lims []int
}

// pipeline wires one scenario replication onto an engine.
type pipeline struct {
	sc       *Scenario
	eng      *sim.Engine
	rec      *report.Recorder
	insts    []*instance
	servers  []*upstream.Server // by host
	serverQ  []*models.Queue    // by host; nil when unbounded
	paths    []pathDef
	scopeOf  [][]int // [limiter][host or tenant] → scope index, -1 = not applied
	reqs     []request
	free     []uint32
	arrivals models.Arrivals
	perTen   []models.Arrivals // tenants' own processes, when they bring them
	perRng   []*rand.Rand
	arrived  int64
	noMore   bool
	streams  int           // arrival chains still running
	chains   []clock.Timer // each chain's pending arrival

	lastEnd, lastArrival time.Duration
	inSystem             int64

	rArr, rRoute, rJitter, rRetry *rand.Rand
	hostCum, tenantCum, pathCum   []float64
	rr                            int

	limUsage, hostUsage, hostPaused []float64 // sample sums, then interval means
	samples                         int
	trace                           *tracer
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
)

func cumulative(ws []float64) []float64 {
	out := make([]float64, len(ws))
	var t float64
	for i, w := range ws {
		t += w
		out[i] = t
	}
	for i := range out {
		out[i] /= t
	}
	return out
}

func pick(cum []float64, r *rand.Rand) int {
	if len(cum) == 1 {
		return 0
	}
	i := sort.SearchFloat64s(cum, r.Float64())
	return min(i, len(cum)-1)
}

func jitterFn(j Jitter, r *rand.Rand) func() time.Duration {
	if j.IsZero() {
		return nil
	}
	return func() time.Duration { return sample(j, r) }
}

func sample(j Jitter, r *rand.Rand) time.Duration {
	switch j.Kind {
	case "uniform":
		if j.B <= j.A {
			return j.A
		}
		return j.A + time.Duration(r.Int64N(int64(j.B-j.A)+1))
	case "exponential":
		return time.Duration(r.ExpFloat64() * float64(j.A))
	}
	return j.A
}

// newPipeline builds the run for replication rep.
func newPipeline(sc *Scenario, rep int) (*pipeline, error) {
	seed := sc.Run.Seed + uint64(rep)
	eng := sim.New(seed)
	p := &pipeline{sc: sc, eng: eng}
	p.rArr = eng.Stream("arrivals")
	p.rRoute = eng.Stream("routing")
	p.rJitter = eng.Stream("jitter")
	p.rRetry = eng.Stream("retry")
	w, c := &sc.Workload, &sc.Client

	var hw, tw, pw []float64
	hosts := make([]string, len(w.Hosts))
	for i, h := range w.Hosts {
		hosts[i], hw = h.Name, append(hw, h.Weight)
	}
	tenants := make([]string, len(w.Tenants))
	for i, t := range w.Tenants {
		tenants[i], tw = t.Name, append(tw, t.Weight)
	}
	p.hostCum, p.tenantCum = cumulative(hw), cumulative(tw)

	_, order := sc.PathLimiters()
	for i, o := range order {
		p.paths = append(p.paths, pathDef{lims: o})
		if len(c.Paths) > 0 {
			pw = append(pw, c.Paths[i].Weight)
		} else {
			pw = append(pw, 1)
		}
	}
	p.pathCum = cumulative(pw)
	if len(c.Limiters) > 64 {
		return nil, fmt.Errorf("%w: at most 64 client limiters, got %d", ErrInvalid, len(c.Limiters))
	}

	// Servers, one per host, shared by all instances.
	byHost := map[string]*Upstream{}
	for i := range sc.Upstreams {
		byHost[sc.Upstreams[i].Host] = &sc.Upstreams[i]
	}
	for _, h := range hosts {
		u := byHost[h]
		if u == nil {
			u = byHost["*"]
		}
		ra := upstream.RetryAfter{}
		switch u.RetryAfter {
		case "":
			ra.None = true
		case "reset":
			ra.Reset = true
		default:
			ra.Fixed, _ = parseDuration(u.RetryAfter)
		}
		srv, err := upstream.NewServer(upstream.Config{Host: h, Latency: u.Latency, Quota: u.Quota, RetryAfter: ra,
			RejectLatency: time.Duration(u.RejectLatency), Workers: u.Workers}, eng.Stream("latency/"+h))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		p.servers = append(p.servers, srv)
		var q *models.Queue
		if u.Workers > 0 {
			q, _ = models.NewQueue(eng, -1, u.Workers)
		}
		p.serverQ = append(p.serverQ, q)
	}

	// Scope keys per limiter.
	var infos []report.LimiterInfo
	for _, l := range c.Limiters {
		info := report.LimiterInfo{Name: l.Name, Kind: l.Kind, Scope: l.Scope, Releases: l.Releases()}
		var keys []string
		var idx []int
		switch l.Scope {
		case "global":
			keys = []string{"global"}
			idx = make([]int, max(len(hosts), len(tenants)))
		case "host":
			idx = scopeIndex(hosts, l.Hosts, &keys)
		case "tenant":
			idx = scopeIndex(tenants, l.Tenants, &keys)
		}
		info.Scopes = keys
		infos = append(infos, info)
		p.scopeOf = append(p.scopeOf, idx)
	}
	for i := 0; i < c.Instances; i++ {
		in := &instance{pausedUntil: make([]time.Duration, len(hosts))}
		if c.Ingest == "queue" {
			q, err := models.NewQueue(eng, Bound(c.QueueCapacity), c.Workers)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			in.queue = q
		}
		for li, l := range c.Limiters {
			row := make([]models.Limiter, len(infos[li].Scopes))
			for s := range row {
				lim, err := p.newLimiter(l)
				if err != nil {
					return nil, fmt.Errorf("%w: client.limiter %s: %v", ErrInvalid, l.Name, err)
				}
				row[s] = lim
			}
			in.lims = append(in.lims, row)
		}
		p.insts = append(p.insts, in)
	}
	if w.Arrival == "backlog" {
		n, k := sc.Run.Requests, int64(c.Instances)
		for i, in := range p.insts {
			in.backlogLeft = n / k
			if int64(i) < n%k {
				in.backlogLeft++
			}
		}
	}
	if w.OwnArrivals() {
		for _, t := range w.Tenants {
			var a models.Arrivals
			switch t.Arrival {
			case "constant":
				a = models.Constant{Rate: t.Rate}
			case "onoff":
				a = models.OnOff{Rate: t.Rate, On: time.Duration(t.On), Off: time.Duration(t.Off)}
			default:
				a = models.Poisson{Rate: t.Rate}
			}
			p.perTen = append(p.perTen, a)
			p.perRng = append(p.perRng, eng.Stream("arrivals/"+t.Name))
		}
	} else {
		p.arrivals = newArrivals(w)
	}
	p.chains = make([]clock.Timer, len(p.perTen)+1)

	ingest := c.Ingest
	p.rec = report.NewRecorder(report.Layout{Scenario: sc.Name, Seed: seed, Warmup: time.Duration(sc.Run.Warmup),
		Interval: time.Duration(sc.Run.Interval), Ingest: ingest, Limiters: infos, Hosts: hosts, Tenants: tenants,
		RequestTimeout: time.Duration(c.RequestTimeout), AcquireTimeout: time.Duration(c.AcquireTimeout), Instances: c.Instances})
	p.limUsage = make([]float64, len(c.Limiters))
	p.hostUsage = make([]float64, len(hosts))
	p.hostPaused = make([]float64, len(hosts))
	for li, l := range c.Limiters {
		eng.Watch(&limiterParker{p: p, li: li, name: l.Name})
	}
	eng.Watch(&queueParker{p})
	eng.ExplainStalls(p.explainStall)
	return p, nil
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

func newArrivals(w *Workload) models.Arrivals {
	switch w.Arrival {
	case "constant":
		return models.Constant{Rate: w.Rate}
	case "onoff":
		return models.OnOff{Rate: w.Rate, On: time.Duration(w.On), Off: time.Duration(w.Off)}
	case "ramp":
		return models.Ramp{From: w.Rate, To: w.RateTo, Over: time.Duration(w.Ramp)}
	case "trace":
		return &models.Trace{Times: w.TraceTimes}
	case "backlog":
		return nil
	}
	return models.Poisson{Rate: w.Rate}
}

func (p *pipeline) newLimiter(l Limiter) (models.Limiter, error) {
	e := p.eng
	bound := Bound(l.MaxWaiting)
	switch l.Kind {
	case "token_bucket", "polling_bucket", "locked_bucket":
		b, err := models.NewTokenBucket(l.Rate, l.Burst, l.Fill(), 0)
		if err != nil {
			return nil, err
		}
		switch l.Kind {
		case "polling_bucket":
			return models.NewPollingBucket(b, e, jitterFn(l.Lag, p.eng.Stream("lag/"+l.Name))), nil
		case "locked_bucket":
			return models.NewLockedBucket(b, e, jitterFn(l.Lag, p.eng.Stream("lag/"+l.Name)), time.Duration(l.Handoff)), nil
		}
		return models.NewLine(b, e, bound), nil
	case "gcra":
		g, err := models.NewGCRA(l.Rate, int64(l.Burst), 0)
		if err != nil {
			return nil, err
		}
		return models.NewLine(g, e, bound), nil
	case "xrate":
		return models.NewXRate(l.Rate, int(l.Burst), e)
	case "sliding_window":
		c, err := models.NewSlidingLog(l.Limit, time.Duration(l.Window))
		if err != nil {
			return nil, err
		}
		return models.NewLine(c, e, bound), nil
	case "sliding_window_counter":
		c, err := models.NewSlidingCounter(l.Limit, time.Duration(l.Window))
		if err != nil {
			return nil, err
		}
		return models.NewLine(c, e, bound), nil
	case "fixed_window":
		c, err := models.NewFixedWindow(l.Limit, time.Duration(l.Window))
		if err != nil {
			return nil, err
		}
		return models.NewLine(c, e, bound), nil
	case "semaphore":
		c, err := models.NewSemaphore(l.Permits)
		if err != nil {
			return nil, err
		}
		return models.NewLine(c, e, bound), nil
	}
	return nil, errors.New("unknown kind " + l.Kind)
}

// --- request slab ---

func (p *pipeline) alloc() uint32 {
	if n := len(p.free); n > 0 {
		i := p.free[n-1]
		p.free = p.free[:n-1]
		return i
	}
	p.reqs = append(p.reqs, request{})
	return uint32(len(p.reqs) - 1)
}

func (p *pipeline) release(i uint32) {
	r := &p.reqs[i]
	gen := r.gen + 1
	*r = request{gen: gen}
	p.free = append(p.free, i)
}

func argOf(i uint32, gen uint32) uint64 { return uint64(gen)<<32 | uint64(i) }

// lookup returns the live request named by arg, or nil if it is stale.
func (p *pipeline) lookup(arg uint64) (uint32, *request) {
	i := uint32(arg)
	if int(i) >= len(p.reqs) {
		return 0, nil
	}
	r := &p.reqs[i]
	if r.gen != uint32(arg>>32) || r.phase == phFree {
		return 0, nil
	}
	return i, r
}

func (p *pipeline) arg(i uint32) uint64 { return argOf(i, p.reqs[i].gen) }
