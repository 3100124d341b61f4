package client

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

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
	if err := checkShape(cfg); err != nil {
		return nil, err
	}
	p := &pipeline{cfg: cfg, eng: eng, newStore: newStore}
	p.arrivalRand = eng.Stream("arrivals")
	p.routeRand = eng.Stream("routing")
	p.instanceRand = eng.Stream("instance")
	p.pathRand = eng.Stream("path")
	p.jitterRand = eng.Stream("jitter")
	p.wakeRand = eng.Stream("wake")
	p.retryRand = eng.Stream("retry")
	p.sdk = cfg.Retry.SDK != NoSDK
	w := &cfg.Workload
	if err := p.newCost(); err != nil {
		return nil, err
	}
	hosts, tenants := names(w.Hosts), make([]string, len(w.Tenants))
	var tw []float64
	for i, t := range w.Tenants {
		tenants[i], tw = t.Name, append(tw, t.Weight)
	}
	p.hostWeights, p.tenantWeights = newWeighted(weights(w.Hosts)), newWeighted(tw)
	var pw []float64
	_, p.paths = cfg.pathLimiters()
	for i := range p.paths {
		if len(cfg.Paths) > 0 {
			pw = append(pw, cfg.Paths[i].Weight)
		} else {
			pw = append(pw, 1)
		}
	}
	p.pathWeights = newWeighted(pw)
	if err := p.newPathCosts(); err != nil {
		return nil, err
	}
	p.oneRoute = p.hostWeights.n() == 1 && p.tenantWeights.n() == 1 && p.pathWeights.n() == 1 && p.fixedCost != 0
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
		QuotaSchedules: quotaSchedules(cfg.Upstreams), Tenants: tenants, Triggers: triggers(cfg.Upstreams, cfg.SharedQuotas), StormSettle: stormSettle(cfg),
		RequestTimeout: cfg.RequestTimeout, AcquireTimeout: cfg.AcquireTimeout, AttemptTimeout: cfg.Retry.AttemptTimeout, Instances: cfg.Instances})
	if w := cfg.InstanceWeights; len(w) == cfg.Instances && cfg.Instances > 1 {
		p.instanceWeights = newWeighted(w)
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
			if c <= 0 { // a quota that adapts says no capacity
				continue
			}
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

// triggers lists the upstreams' transient losses of capacity: from a
// latency_schedule step whose mean is above the host's base latency's
// until the next step whose mean is not, and from a quota schedule step
// below the quota's base rate (an upstream's or a shared one) until the
// next step that is not. A loss that never ends has End 0.
func triggers(ups []upstream.Config, shared []upstream.SharedConfig) []metrics.Trigger {
	var out []metrics.Trigger
	quotaTriggers := func(q upstream.Quota) {
		out = appendTriggers(out, len(q.Schedule), func(i int) (time.Duration, time.Duration, bool) {
			return q.Schedule[i].At, 0, q.Schedule[i].Rate < q.Rate
		})
	}
	for _, sq := range shared {
		quotaTriggers(sq.Quota)
	}
	for _, u := range ups {
		if u.Latency != nil {
			base := u.Latency.Mean()
			out = appendTriggers(out, len(u.LatencySchedule), func(i int) (time.Duration, time.Duration, bool) {
				st := u.LatencySchedule[i]
				mean := st.Latency.Mean()
				return st.At, mean, mean > base
			})
		}
		for _, q := range u.Quotas {
			quotaTriggers(q)
		}
	}
	return out
}

// appendTriggers appends the triggers of a schedule of n steps, step(i)
// giving step i's instant, its mean latency (0 for a rate) and whether it
// lowers the capacity.
func appendTriggers(out []metrics.Trigger, n int, step func(i int) (at, latency time.Duration, lowers bool)) []metrics.Trigger {
	open := false
	for i := range n {
		at, latency, lowers := step(i)
		switch {
		case lowers && !open:
			out, open = append(out, metrics.Trigger{Start: at, Latency: latency}), true
		case lowers:
			out[len(out)-1].Latency = max(out[len(out)-1].Latency, latency)
		case open:
			out[len(out)-1].End, open = at, false
		}
	}
	return out
}

// stormSettle is three times the longest a request lasts after a trigger
// ends: its request timeout, else its retries' longest back-off and, with
// an attempt timeout, its attempts' longest wait for an answer.
func stormSettle(cfg *Config) time.Duration {
	const most = time.Duration(math.MaxInt64)
	last := cfg.RequestTimeout
	if last == 0 {
		retries := time.Duration(cfg.Retry.Attempts - 1)
		backoff := saturatingMul(retries, cfg.Retry.Backoff.Cap)
		waits := saturatingMul(retries+1, cfg.Retry.AttemptTimeout)
		last = most
		if backoff <= most-waits {
			last = backoff + waits
		}
	}
	return saturatingMul(metrics.StormSettleTimes, last)
}

// saturatingMul is n × d for n, d ≥ 0, or the longest duration when
// that overflows.
func saturatingMul(n, d time.Duration) time.Duration {
	if n > 0 && d > time.Duration(math.MaxInt64)/n {
		return time.Duration(math.MaxInt64)
	}
	return n * d
}

// ingestName is the ingest as the results name it.
func ingestName(in *Ingest) string {
	if in == nil {
		return "tasks"
	}
	return "queue"
}

// newServers builds one server per host, shared by every instance, and
// the shared quotas, each given to the servers of the hosts it counts.
func (p *pipeline) newServers() error {
	shared := make([][]*upstream.SharedQuota, len(p.cfg.Upstreams))
	for _, sc := range p.cfg.SharedQuotas {
		sq, err := upstream.NewSharedQuota(sc)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		p.shared = append(p.shared, sq)
		for _, h := range sc.Hosts {
			if h < 0 || h >= len(shared) {
				return fmt.Errorf("%w: quota %s: no host %d", ErrConfig, sc.Name, h)
			}
			shared[h] = append(shared[h], sq)
		}
	}
	for i, u := range p.cfg.Upstreams {
		u.Headers = p.cfg.Headers.read() // only a client that reads them needs the headers
		u.Shared = shared[i]
		var costR *rand.Rand
		if u.ResponseCost != nil {
			costR = p.eng.Stream("response_cost/" + u.Host)
		}
		srv, err := upstream.NewServerWith(u, upstream.Streams{Latency: p.eng.Stream("latency/" + u.Host), Cost: costR,
			Jitter: p.eng.Stream("adaptive_concurrency/" + u.Host)})
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
		p.serverQueues = append(p.serverQueues, q)
	}
	return nil
}

// newInstances builds each client instance: its ingest queue and one
// limiter object per limiter scope.
func (p *pipeline) newInstances(infos []metrics.LimiterInfo) error {
	if err := p.newStores(); err != nil {
		return err
	}
	for k := range p.cfg.Instances {
		in, err := p.newInstance(k, infos)
		if err != nil {
			return err
		}
		p.newSteps(in)
		p.instances = append(p.instances, in)
	}
	if p.cfg.Workload.Backlog {
		p.shareBacklog()
	}
	return nil
}

// newStores builds the cluster limiters' stores, one for every instance;
// other limiters have none.
func (p *pipeline) newStores() error {
	c := p.cfg
	stores := make([]clusterStore, len(c.Limiters))
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
	return nil
}

// newInstance builds client instance k: its ingest queue and its limiter
// tables, a row of objects per limiter (one per scope of infos).
func (p *pipeline) newInstance(k int, infos []metrics.LimiterInfo) (*instance, error) {
	c := p.cfg
	in := &instance{pausedUntil: make([]time.Duration, len(c.Workload.Hosts)), tokens: c.Retry.Tokens,
		estimate: newCostEstimator(c.Reserve)}
	if c.Retry.SDK != NoSDK {
		in.sdk = make([]sdkState, len(c.Workload.Hosts))
		for h := range in.sdk {
			in.sdk[h] = newSDKState(&c.Retry)
		}
	}
	if c.Headers.SlowBelow > 0 {
		in.pace = make([]hostPace, len(c.Workload.Hosts))
	}
	if c.Ingest != nil {
		q, err := models.NewQueue(p.eng, c.Ingest.Capacity, c.Ingest.Workers)
		if err != nil {
			return nil, fmt.Errorf("%w: ingest: %w", ErrConfig, err)
		}
		in.queue = q
	}
	for li, l := range c.Limiters {
		row, err := p.newLimiterRow(k, li, len(infos[li].Scopes))
		if err != nil {
			return nil, err
		}
		in.limiters = append(in.limiters, row)
		var rels []models.Releaser
		if l.Kind.Releases() {
			rels = make([]models.Releaser, len(row))
			for s, lim := range row {
				rel, ok := lim.(models.Releaser)
				if !ok {
					return nil, fmt.Errorf("%w: client.limiter %s: a %s limiter that cannot release", ErrConfig, l.Name, l.Kind.Name)
				}
				rels[s] = rel
			}
		}
		in.releasers = append(in.releasers, rels)
		in.active = append(in.active, allScopes(len(row)))
	}
	return in, nil
}

// newLimiterRow builds limiter li's objects of instance k, one for each of
// its scopes: fronts of its store for a cluster limiter.
func (p *pipeline) newLimiterRow(k, li, scopes int) ([]models.Limiter, error) {
	l := p.cfg.Limiters[li]
	row := make([]models.Limiter, scopes)
	env := models.Env{Sched: p.eng}
	for s := range row {
		if st := p.stores[li]; st != nil {
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
			return nil, fmt.Errorf("%w: client.limiter %s: %w", ErrConfig, l.Name, err)
		}
		row[s] = lim
	}
	return row, nil
}

// shareBacklog shares run.requests among the instances as their backlogs:
// evenly, the remainder one each to the first, or by the instance
// weights, the remainder to the first.
func (p *pipeline) shareBacklog() {
	c := p.cfg
	n, k := c.Run.Requests, int64(c.Instances)
	for i, in := range p.instances {
		in.backlogLeft = n / k
		if int64(i) < n%k {
			in.backlogLeft++
		}
	}
	if w := c.InstanceWeights; len(w) == len(p.instances) {
		// Uneven shares: each instance's share of the backlog, the
		// remainder to the first.
		var total float64
		for _, x := range w {
			total += x
		}
		left := n
		for i, in := range p.instances {
			in.backlogLeft = int64(float64(n) * w[i] / total)
			left -= in.backlogLeft
		}
		p.instances[0].backlogLeft += left
	}
}

// checkShape refuses a Config the pipeline cannot be built from: too
// many limiters, an upstream count that is not the hosts', tenants that
// mix their own and shared arrivals.
func checkShape(cfg *Config) error {
	if len(cfg.Limiters) > maxLimiters {
		return fmt.Errorf("%w: at most %d client limiters, got %d", ErrConfig, maxLimiters, len(cfg.Limiters))
	}
	if len(cfg.Upstreams) != len(cfg.Workload.Hosts) {
		return fmt.Errorf("%w: %d upstreams for %d hosts", ErrConfig, len(cfg.Upstreams), len(cfg.Workload.Hosts))
	}
	return checkTenantArrivals(cfg.Workload.Tenants)
}

// checkTenantArrivals refuses tenants of which some bring their own
// arrival process and others do not: the workload's process drives every
// tenant, or each tenant drives its own.
func checkTenantArrivals(tenants []Tenant) error {
	for _, t := range tenants[min(1, len(tenants)):] {
		if (t.Arrivals != nil) != (tenants[0].Arrivals != nil) {
			return fmt.Errorf("%w: tenant %s: every tenant brings its own arrivals, or none does (tenant %s %s)",
				ErrConfig, t.Name, tenants[0].Name, ownOrShared(tenants[0].Arrivals != nil))
		}
	}
	return nil
}

// ownOrShared says whether a tenant brings its own arrivals.
func ownOrShared(own bool) string {
	if own {
		return "does"
	}
	return "does not"
}

// newArrivals builds the arrival chains: the workload's process, or one per
// tenant that brings its own.
func (p *pipeline) newArrivals() {
	w := &p.cfg.Workload
	switch {
	case w.OwnArrivals():
		for _, t := range w.Tenants {
			p.tenantArrivals = append(p.tenantArrivals, t.Arrivals.New())
			p.tenantRands = append(p.tenantRands, p.eng.Stream("arrivals/"+t.Name))
		}
	case !w.Backlog:
		p.arrivals = w.Arrivals.New()
	}
	p.chains = make([]clock.Timer, len(p.tenantArrivals)+1)
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
