package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/models/retry"
	"github.com/limitsim/limitsim/sim/client"
	"github.com/limitsim/limitsim/upstream"
)

// Build turns a validated scenario into the client model's configuration.
func (sc *Scenario) Build() (*client.Config, error) {
	r, w, c := &sc.Run, &sc.Workload, &sc.Client
	cfg := &client.Config{
		Name: sc.Name,
		Run: client.RunSettings{Seed: r.Seed, Requests: r.Requests, Duration: time.Duration(r.Duration),
			Warmup: time.Duration(r.Warmup), Interval: time.Duration(r.Interval), Replications: r.Replications,
			MaxEvents: r.MaxEvents, MaxLiveRequests: r.MaxLiveRequests, MaxEventsPerInstant: r.MaxEventsPerInstant},
		Instances:       c.Instances,
		InstanceWeights: c.InstanceWeights,
		MaxParked:       bound(c.MaxWaiting),
		AcquireTimeout:  time.Duration(c.AcquireTimeout),
		RequestTimeout:  time.Duration(c.RequestTimeout),
		On429: client.On429{CheckAtSend: c.On429.PauseCheck == "send", LatestEnd: c.On429.PauseEnd == "latest", HonorRetryAfter: c.On429.HonorRetryAfter,
			Fallback: c.On429.Fallback.model(), ResumeJitter: c.On429.ResumeJitter.model()},
		Headers: headers(c.Headers),
		Retry: client.Retry{Attempts: c.Retry.Attempts, Backoff: c.Retry.backoff(),
			Budget: c.Retry.Budget, BudgetWindow: time.Duration(c.Retry.BudgetWindow),
			Tokens: c.Retry.Tokens, TokenRatio: c.Retry.TokenRatio, AttemptTimeout: time.Duration(c.Retry.AttemptTimeout)},
		Warnings: sc.Warnings,
	}
	c.Retry.sdk(&cfg.Retry)
	if c.OnLimit != nil {
		cfg.On429.Statuses = slices.Clone(c.OnLimit.Statuses)
	}
	switch c.On429.Pause {
	case "caller":
		cfg.On429.Pause = client.PauseCaller
	case "none":
		cfg.On429.Pause = client.PauseNone
	}
	if c.Ingest == "queue" {
		cfg.Ingest = &client.Ingest{Capacity: bound(c.QueueCapacity), Block: c.QueueFull == "block", Workers: c.Workers}
	}
	cfg.Workload = w.build()
	if r := c.Reserve; r != nil {
		cfg.Reserve = client.Reserve{Fixed: r.Fixed, Estimate: map[string]client.Estimate{
			"fixed": client.EstimateFixed, "p50": client.EstimateP50, "p90": client.EstimateP90}[r.Estimate]}
	}
	byName := map[string]int{}
	for i, l := range c.Limiters {
		cl, err := l.build()
		if err != nil {
			return nil, err
		}
		byName[l.Name] = i
		cfg.Limiters = append(cfg.Limiters, cl)
	}
	for _, p := range c.Paths {
		cp := client.Path{Name: p.Name, Weight: p.Weight, Method: p.Method}
		if p.Cost != nil {
			if n, ok := p.Cost.constant(); ok {
				cp.Cost = n
			} else {
				cp.CostDist = p.Cost.Spec()
			}
		}
		for _, n := range p.Limiters {
			cp.Limiters = append(cp.Limiters, byName[n])
		}
		cfg.Paths = append(cfg.Paths, cp)
	}
	ups, err := sc.upstreams()
	if err != nil {
		return nil, err
	}
	cfg.Upstreams = ups
	cfg.SharedQuotas = sc.shared()
	return cfg, nil
}

// build is the workload as the client model takes it: its arrivals,
// costs, hosts and tenants.
func (w *Workload) build() client.Workload {
	out := client.Workload{Backlog: w.Arrival == "backlog", RoundRobin: w.HostOrder == "round_robin",
		Arrivals: arrivals.Spec{Kind: arrivalKind(w.Arrival), Rate: w.Rate, RateTo: w.RateTo,
			Ramp: time.Duration(w.Ramp), On: time.Duration(w.On), Off: time.Duration(w.Off), Times: w.TraceTimes, Source: w.TraceStream}}
	if n, ok := w.Cost.constant(); ok {
		out.Cost = n
	} else {
		out.CostDist = w.Cost.Spec()
	}
	for _, h := range w.Hosts {
		out.Hosts = append(out.Hosts, client.Share{Name: h.Name, Weight: h.Weight})
	}
	for _, t := range w.Tenants {
		ct := client.Tenant{Share: client.Share{Name: t.Name, Weight: t.Weight}}
		if w.OwnArrivals() {
			ct.Arrivals = &arrivals.Spec{Kind: arrivalKind(t.Arrival), Rate: t.Rate, On: time.Duration(t.On), Off: time.Duration(t.Off)}
		}
		out.Tenants = append(out.Tenants, ct)
	}
	return out
}

// build is the limiter as the client model takes it.
func (l *Limiter) build() (client.LimiterConfig, error) {
	kind, err := models.LookupKind(l.Kind)
	if err != nil {
		return client.LimiterConfig{}, fmt.Errorf("%w: client.limiter %s: %w", ErrInvalid, l.Name, err)
	}
	cl := client.LimiterConfig{Name: l.Name, Kind: kind, Params: l.Params, CountsRequests: l.Unit == "requests"}
	switch l.Scope {
	case "host":
		cl.Scope, cl.Only = client.PerHost, l.Hosts
	case "tenant":
		cl.Scope, cl.Only = client.PerTenant, l.Tenants
	case "cluster":
		cl.Scope = client.Cluster
		cl.Store = &models.StoreConfig{RTT: l.StoreRTT.model(), Errors: l.StoreErrors, FailOpen: l.OnStoreError != "deny",
			SyncInterval: time.Duration(l.SyncInterval)}
	}
	return cl, nil
}

// upstreams resolves each workload host to its [[upstream]] block, or the
// "*" block.
func (sc *Scenario) upstreams() ([]upstream.Config, error) {
	byHost := map[string]*Upstream{}
	for i := range sc.Upstreams {
		byHost[sc.Upstreams[i].Host] = &sc.Upstreams[i]
	}
	var out []upstream.Config
	for _, h := range sc.Workload.Hosts {
		u := byHost[h.Name]
		if u == nil {
			u = byHost["*"]
		}
		if u == nil {
			return nil, fmt.Errorf("%w: no upstream for host %q", ErrInvalid, h.Name)
		}
		ra := upstream.RetryAfter{}
		switch u.RetryAfter {
		case "":
			ra.None = true
		case "reset":
			ra.Reset = true
		default:
			d, err := parseDuration(u.RetryAfter)
			if err != nil {
				return nil, fmt.Errorf("%w: upstream %s: retry_after: %w", ErrInvalid, u.Host, err)
			}
			ra.Fixed = d
		}
		var sched []upstream.LatencyStep
		for _, st := range u.LatencySchedule {
			sched = append(sched, upstream.LatencyStep{At: time.Duration(st.At), Latency: st.Latency.Dist})
		}
		uc := upstream.Config{Host: h.Name, Latency: u.Latency.Dist, Quotas: u.quotas(), RetryAfter: ra,
			RejectLatency: time.Duration(u.RejectLatency), Workers: u.Workers, LatencySchedule: sched}
		if u.ResponseCost != nil {
			uc.ResponseCost = u.ResponseCost.Spec()
		}
		uc.ResponseReserve = u.ResponseReserve
		uc.Refused = map[string]upstream.Refused{"": upstream.RefusedNone, "others": upstream.RefusedOthers, "all": upstream.RefusedAll}[u.RefusedCounts]
		out = append(out, uc)
	}
	return out, nil
}

// arrivalKind is the arrival process a workload or tenant names ("" and
// "backlog" read as Poisson: they bring no process of their own).
func arrivalKind(name string) arrivals.Kind {
	switch name {
	case "constant":
		return arrivals.KindConstant
	case "onoff":
		return arrivals.KindOnOff
	case "ramp":
		return arrivals.KindRamp
	case "trace":
		return arrivals.KindTrace
	}
	return arrivals.KindPoisson
}

// backoff is the back-off policy [client.retry] names.
func (r Retry) backoff() retry.Backoff {
	b := retry.Backoff{Base: time.Duration(r.Base), Cap: time.Duration(r.Cap), Multiplier: r.Multiplier}
	switch r.Backoff {
	case "constant":
		b.Kind = retry.Constant
	case "exponential":
		b.Kind = retry.Exponential
	}
	switch r.Jitter {
	case "full":
		b.Jitter = retry.FullJitter
	case "equal":
		b.Jitter = retry.EqualJitter
	case "decorrelated":
		b.Jitter = retry.DecorrelatedJitter
	}
	return b
}

// bound is an optional count as a waiting bound (nil: unbounded).
func bound(b *int) models.Bound {
	if b == nil {
		return models.Unbounded
	}
	return models.AtMost(*b)
}

// model is the jitter as the models package draws it.
func (j Jitter) model() models.Jitter {
	switch j.Kind {
	case "uniform":
		return models.Jitter{Kind: models.Uniform, A: j.A, B: j.B, Text: j.Text}
	case "exponential":
		return models.Jitter{Kind: models.Exponential, A: j.A, Text: j.Text}
	}
	return models.Jitter{Kind: models.Fixed, A: j.A, Text: j.Text}
}

// Simulate builds the scenario and runs it: every replication, through the
// client model, as `limitsim run` does before analysis and output.
func (sc *Scenario) Simulate(opts client.Options) (*client.Outcome, error) {
	cfg, err := sc.Build()
	if err != nil {
		return nil, err
	}
	return client.Run(cfg, opts)
}

// quotas returns the upstream's quotas for the model.
func (u *Upstream) quotas() []upstream.Quota {
	out := make([]upstream.Quota, len(u.Quota))
	for i, q := range u.Quota {
		out[i] = upstream.Quota(q)
	}
	return out
}

// headers is the client's use of rate-limit headers (none without a
// [client.headers] table).
func headers(h *Headers) client.Headers {
	if h == nil {
		return client.Headers{}
	}
	return client.Headers{PauseAtZero: h.PauseAtZero, SlowBelow: h.SlowBelow}
}
