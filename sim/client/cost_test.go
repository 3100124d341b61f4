package client

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/upstream"
)

// pauseOnCost reads the tokens family of an answer: at zero remaining (the
// quota spent, or in debt for a response charged after the fact) the host
// pauses for the whole reset, which includes the debt; with some tokens
// left but fewer than the request takes, for the share of the reset the
// shortfall is of everything missing; with enough left, not at all. The
// pause counts from when the server answered (now − After). It catches a
// debt read as a small shortfall (a resume before the quota admits again)
// and a pause that ignores the reset.
func TestPauseOnCostReadsTheTokensFamily(t *testing.T) {
	cfg := dd1(1)
	cfg.Headers.PauseAtZero = true
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, r, _ := p.requests.Alloc()
	r.instance, r.host = 0, 0
	now := 10 * time.Second
	for _, c := range []struct {
		remaining, limit int64
		reset            time.Duration
		need             int64
		want             time.Duration // the pause's end
	}{
		{0, 1000, 9 * time.Second, 400, now - ms + 9*time.Second},   // zero (a debt of 900 at 100/s): the whole reset
		{200, 1000, 8 * time.Second, 400, now - ms + 2*time.Second}, // 200 short of 800 missing: a quarter of the reset
		{500, 1000, 5 * time.Second, 400, 0},                        // enough: no pause
		{-1, 0, 0, 400, 0},                                          // no tokens family
	} {
		p.instances[0].pausedUntil[0] = 0
		r.answer = upstream.Answer{OK: true, After: ms, RemainingCost: c.remaining, LimitCost: c.limit, ResetCost: c.reset}
		p.pauseOnCost(now, r, c.need)
		if got := p.instances[0].pausedUntil[0]; got != c.want {
			t.Errorf("%d of %d left, reset %v, need %d: paused until %v, want %v", c.remaining, c.limit, c.reset, c.need, got, c.want)
		}
	}
}

// A reservation's estimate is learnt from the answers of hosts that reveal
// a cost only: an answer from a host without response_cost (cost 0) leaves
// the p50 at its starting value, and the model's answers set it. Learning
// from every answer, the zeros of a busier plain host would drag the
// estimate to 0.
func TestEstimateLearnsFromHostsThatRevealACost(t *testing.T) {
	cfg := dd1(1)
	cfg.Limiters = nil
	cfg.Workload.Hosts = []Share{{Name: "llm", Weight: 1}, {Name: "plain", Weight: 3}}
	cfg.Upstreams = []upstream.Config{
		{Host: "llm", Latency: upstream.Constant{Value: ms}, ResponseCost: upstream.Constant{Value: 500}},
		{Host: "plain", Latency: upstream.Constant{Value: ms}},
	}
	cfg.Reserve = Reserve{Estimate: EstimateP50, Fixed: 7}
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, r, _ := p.requests.Alloc()
	answer := func(host uint16, cost int64) int64 {
		r.instance, r.host, r.path, r.reserved = 0, host, 0, p.instances[0].estimate.current
		r.answer = upstream.Answer{OK: true, Cost: cost}
		p.reconcile(time.Second, r)
		return p.instances[0].estimate.current
	}
	for range 5 {
		if est := answer(1, 0); est != 7 {
			t.Fatalf("after a plain host's answer the estimate is %d, want the starting 7", est)
		}
	}
	if est := answer(0, 500); est < 495 || est > 500 {
		t.Errorf("after the model's answer of 500 the estimate is %d, want 500 (within the sketch's 1%%)", est)
	}
}

// A reservation settled on a scope that a reading found at rest puts the
// scope back among those read: the debt its response's cost leaves shows
// in the next reading rather than waiting for the scope's next
// acquisition.
func TestSettleReactivatesScope(t *testing.T) {
	cfg := dd1(0)
	tb, err := models.LookupKind("token_bucket")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Limiters = []LimiterConfig{{Name: "tokens", Kind: tb, Scope: PerTenant,
		Params: models.Params{Rate: 100, Burst: 100}}}
	cfg.Workload.Tenants = []Tenant{{Share: Share{Name: "a", Weight: 1}}, {Share: Share{Name: "b", Weight: 1}}}
	cfg.Reserve = Reserve{Estimate: EstimateFixed}
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := p.instances[0]
	p.sampleLimiter(0, 0) // both buckets full, nobody waiting: at rest
	if in.active[0][0] != 0 {
		t.Fatalf("full buckets stay in the read set: %b", in.active[0][0])
	}
	_, r, _ := p.requests.Alloc()
	r.tenant, r.lim = 0, -1
	r.answer = upstream.Answer{OK: true, Cost: 150} // reserved 0, revealed 150
	p.reconcile(time.Second, r)
	if in.active[0][0]&1 == 0 {
		t.Fatal("the settled scope is not read again")
	}
	p.sampleLimiter(0, time.Second) // tenant a's bucket is 50 in debt: usage 1
	if got := p.limUsage[0]; got != 0.5 {
		t.Fatalf("the readings sum %v over two readings, want 0 + (1 + 0)/2", got)
	}
}

// The learned estimate is the quantile its policy names: responses costing
// 1 … 1,000 evenly give a p50 near 500 and a p90 near 900, within the
// sketch's 1%, read at every one of the first observations and every 32nd
// after. A policy reading the wrong quantile, or an estimate never read
// again after the first observations, fails.
func TestEstimateReadsItsQuantile(t *testing.T) {
	for _, c := range []struct {
		e    Estimate
		want float64
	}{{EstimateP50, 500}, {EstimateP90, 900}} {
		est := newCostEstimator(Reserve{Estimate: c.e, Fixed: 7})
		if est.current != 7 {
			t.Fatalf("before any response the estimate is %d, want the fixed 7", est.current)
		}
		for k := range 4000 {
			est.observe(int64(k*7919%1000 + 1)) // 1 … 1000, each four times, in a scrambled order
		}
		if got := float64(est.current); got < c.want*0.98 || got > c.want*1.02 {
			t.Errorf("estimate %v: %v after 4,000 responses, want %v within 2%%", c.e, got, c.want)
		}
	}
	fixed := newCostEstimator(Reserve{Estimate: EstimateFixed, Fixed: 7})
	fixed.observe(1000)
	if fixed.current != 7 {
		t.Errorf("a fixed estimate moved to %d", fixed.current)
	}
}

// Path costs: paths that all cost the same constant keep the fixed cost
// (no draw per arrival, the fast path); paths of different costs draw
// each arrival's from its path, and a request's mean cost is the paths'
// weighted by their shares (0.7 × 1 + 0.3 × 5 = 2.2), which the hosts'
// cost quotas are read against. A path without a cost keeps the
// workload's.
func TestPathCosts(t *testing.T) {
	for _, c := range []struct {
		name       string
		paths      []Path
		fixed      int64
		mean       float64
		perPathSet bool
	}{
		{"same constant", []Path{{Name: "a", Weight: 1, Cost: 3}, {Name: "b", Weight: 1, CostDist: upstream.Constant{Value: 3}}}, 3, 3, false},
		{"points", []Path{{Name: "read", Weight: 0.7, Cost: 1}, {Name: "write", Weight: 0.3, Cost: 5}}, 0, 2.2, true},
		{"one keeps the workload's", []Path{{Name: "read", Weight: 1}, {Name: "write", Weight: 1, Cost: 5}}, 0, 3, true},
		{"none", []Path{{Name: "read", Weight: 1}, {Name: "write", Weight: 3}}, 1, 1, false},
	} {
		cfg := dd1(1)
		cfg.Limiters = nil
		cfg.Paths = c.paths
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.fixedCost != c.fixed || (p.pathCosts != nil) != c.perPathSet || math.Abs(p.meanCostF()-c.mean) > 1e-12 {
			t.Errorf("%s: fixed cost %d, per-path costs %v, mean %v; want %d, %v, %v", c.name, p.fixedCost, p.pathCosts != nil, p.meanCostF(), c.fixed, c.perPathSet, c.mean)
		}
		if c.perPathSet {
			for path := range c.paths {
				want := c.paths[path].Cost
				if want == 0 {
					want = 1
				}
				if got := p.drawCost(path); got != want {
					t.Errorf("%s: path %d drew %d, want %d", c.name, path, got, want)
				}
			}
		}
	}
}
