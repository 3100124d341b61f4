package planning

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/upstream"
)

// genPoints draws GitHub-style points: a read costs 1, a write (share
// writes) 5.
func genPoints(writes float64) func(*rand.Rand) int64 {
	return func(rng *rand.Rand) int64 {
		if rng.Float64() < writes {
			return 5
		}
		return 1
	}
}

// genCostWindow is a fixed window of limit units of cost per window
// (seconds), aligned to the epoch: a request is admitted if its cost
// fits in what the window has left.
func genCostWindow(limit int64, window float64) func(float64, int64) bool {
	win, used := -1.0, int64(0)
	return func(t float64, cost int64) bool {
		if w := math.Floor(t / window); w != win {
			win, used = w, 0
		}
		if used+cost > limit {
			return false
		}
		used += cost
		return true
	}
}

// genTenants draws tenant a with share, b otherwise.
func genTenants(share float64) func(*rand.Rand) string {
	return func(rng *rand.Rand) string {
		if rng.Float64() < share {
			return "a"
		}
		return "b"
	}
}

var costMapping = logs.Mapping{Host: "host", Cost: "cost", Tenant: "tenant"}

// A server that counts points (1 a read, 5 a write) a minute: with the
// cost logged, the calibration infers a fixed window that counts cost,
// with its limit, writes the points' distribution into the workload, and
// trusts the model.
func TestCalibrateCostWindow(t *testing.T) {
	path := writeGeneratedLog(t, 31, start, 600,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, cost: genPoints(0.3), admitCost: genCostWindow(4000, 60)})
	c, text := calibrateMapped(t, path, logs.Mapping{Host: "host", Cost: "cost"})
	q := c.Hosts[0].Quota
	if q.Kind != kindname.QuotaFixedWindow || q.Unit != upstream.UnitCost || q.Window != "1m0s" {
		t.Fatalf("quota = %+v, want a fixed window of 1m counting cost", q)
	}
	within(t, "limit", float64(q.Limit), 4000, 0.10)
	if !c.Trusted {
		t.Errorf("errors %+v, verdict %q: want trusted\n%s", c.Errors, c.Verdict, text)
	}
	if !strings.Contains(text, `unit = "cost"`) {
		t.Errorf("the scenario's quota does not count cost:\n%s", text)
	}
	k := c.Cost
	if k == nil || k.Distinct != 2 || k.P50 != 1 || k.Max != 5 {
		t.Fatalf("cost %+v, want 1s and 5s", k)
	}
	within(t, "mean cost", k.Mean, 1+4*0.3, 0.05)
	// The scenario's cost draws 5 as often as the log shows it.
	cfg := buildScenario(t, "calibrated.toml", text)
	count, err := upstream.NewCount(cfg.Workload.CostDist, 1)
	if err != nil {
		t.Fatalf("workload cost %v: %v", cfg.Workload.CostDist, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var fives, n float64
	for range 20000 {
		switch v := count.Sample(rng); v {
		case 5:
			fives++
		case 1:
		default:
			t.Fatalf("the scenario's cost drew %d, want 1 or 5", v)
		}
		n++
	}
	within(t, "share of writes drawn", fives/n, (k.Mean-1)/4, 0.05)
	best := nextUnitScore(q)
	t.Logf("quota %s %d/%s unit %s (score %.3f, best counting requests %.3f); cost %+v; errors %+v", q.Kind, q.Limit, q.Window, q.Unit, bestScore(q), best, k, c.Errors)
}

// nextUnitScore is the best agreement of a candidate counting requests.
func nextUnitScore(q QuotaInference) float64 {
	best := 0.0
	for _, c := range q.Candidates {
		if c.Unit == "" {
			best = max(best, c.Score)
		}
	}
	return best
}

// Costs logged beside a server that counts requests: the calibration
// keeps the quota counting requests.
func TestCalibrateCostLoggedRequestQuota(t *testing.T) {
	path := writeGeneratedLog(t, 37, start, 300,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, cost: genPoints(0.3), admit: genFixedWindow(1800, 60)})
	c, text := calibrateMapped(t, path, logs.Mapping{Host: "host", Cost: "cost"})
	q := c.Hosts[0].Quota
	if q.Kind != kindname.QuotaFixedWindow || q.Unit != "" || q.Limit != 1800 {
		t.Fatalf("quota = %+v, want a fixed window of 1800 requests", q)
	}
	if !c.Trusted {
		t.Errorf("errors %+v, verdict %q: want trusted\n%s", c.Errors, c.Verdict, text)
	}
}

// Two tenants at 70/30: the scenario has both with their shares, and the
// check reports each tenant's answers and 429s beside the log's.
func TestCalibrateTenants(t *testing.T) {
	path := writeGeneratedLog(t, 41, start, 600,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, cost: genPoints(0.3), admitCost: genCostWindow(4000, 60),
			tenant: genTenants(0.7)})
	c, text := calibrateMapped(t, path, costMapping)
	if len(c.Tenants) != 2 {
		t.Fatalf("tenants %+v, want a and b", c.Tenants)
	}
	a, b := c.Tenants[0], c.Tenants[1]
	if a.Tenant != "a" || b.Tenant != "b" {
		a, b = b, a
	}
	within(t, "a's share", a.Share, 0.7, 0.05)
	within(t, "b's share", b.Share, 0.3, 0.05)
	sc, err := scenarios.Parse("calibrated.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	shares := map[string]float64{}
	for _, tn := range sc.Workload.Tenants {
		shares[tn.Name] = tn.Weight
	}
	if len(shares) != 2 {
		t.Fatalf("the scenario's tenants are %+v, want a and b\n%s", sc.Workload.Tenants, text)
	}
	within(t, "a's weight", shares["a"]/(shares["a"]+shares["b"]), 0.7, 0.05)
	within(t, "b's weight", shares["b"]/(shares["a"]+shares["b"]), 0.3, 0.05)
	for _, tn := range []TenantCalibration{a, b} {
		within(t, tn.Tenant+"'s answers in the model", float64(tn.SimGoodput), float64(tn.LogGoodput), 0.05)
		within(t, tn.Tenant+"'s 429s in the model", float64(tn.SimRefused), float64(tn.LogRefused), 0.15)
	}
	if q := c.Hosts[0].Quota; q.Unit != upstream.UnitCost || !c.Trusted {
		t.Errorf("quota %+v, verdict %q: want one counting cost, trusted", q, c.Verdict)
	}
	var out strings.Builder
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tenant a: ") || !strings.Contains(out.String(), "cost: ") {
		t.Errorf("the text lists no tenant or cost:\n%s", out.String())
	}
	t.Logf("shares a %.4g, b %.4g; a answered %d (model %d), 429s %d (model %d); b answered %d (model %d), 429s %d (model %d)",
		a.Share, b.Share, a.LogGoodput, a.SimGoodput, a.LogRefused, a.SimRefused, b.LogGoodput, b.SimGoodput, b.LogRefused, b.SimRefused)
}

// A tenant whose requests come in bursts (on 20 s, off 40 s) beside a
// steady one: each tenant brings its own process to the scenario, the
// bursty one on and off, as its fit found.
func TestCalibrateTenantsOwnArrivals(t *testing.T) {
	path := writeGeneratedLog(t, 43, start, 600,
		genHost{name: "api", rate: 20, median: 0.1, sigma: 0.4, tenant: func(*rand.Rand) string { return "steady" }},
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, tenant: func(*rand.Rand) string { return "batch" }, on: 20, off: 40})
	c, text := calibrateMapped(t, path, logs.Mapping{Host: "host", Tenant: "tenant"})
	byName := map[string]TenantCalibration{}
	for _, tn := range c.Tenants {
		byName[tn.Tenant] = tn
	}
	batch, steady := byName["batch"].Arrivals, byName["steady"].Arrivals
	if batch.Process != "onoff" || steady.Process != "poisson" {
		t.Fatalf("batch arrivals %+v, steady %+v: want onoff and poisson", batch, steady)
	}
	sc, err := scenarios.Parse("calibrated.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]scenarios.Weighted{}
	for _, tn := range sc.Workload.Tenants {
		own[tn.Name] = tn
	}
	if b := own["batch"]; b.Arrival != "onoff" || math.Abs(time.Duration(b.On).Seconds()-20) > 2 || math.Abs(time.Duration(b.Off).Seconds()-40) > 4 {
		t.Errorf("the scenario's batch tenant is %+v, want its own onoff, on 20s, off 40s\n%s", b, text)
	}
	within(t, "batch's rate while on", own["batch"].Rate, 40, 0.10)
	if s := own["steady"]; s.Arrival != "poisson" {
		t.Errorf("the scenario's steady tenant is %+v, want its own poisson\n%s", s, text)
	}
	within(t, "steady's rate", own["steady"].Rate, 20, 0.10)
	if sc.Workload.Rate != 0 || !strings.Contains(c.Hosts[0].Arrivals.InScenario, "tenants' own") {
		t.Errorf("workload rate %g, host arrivals %q: want the tenants' own processes alone", sc.Workload.Rate, c.Hosts[0].Arrivals.InScenario)
	}
	if _, err := sc.Build(); err != nil {
		t.Fatal(err)
	}
	t.Logf("batch %+v; steady %+v", batch, steady)
}

// genCostBucket is a token bucket of rate and burst units of cost, full
// at the first request: a request is admitted if the bucket holds its
// cost.
func genCostBucket(rate, burst float64) func(float64, int64) bool {
	tokens, last := burst, math.NaN()
	return func(t float64, cost int64) bool {
		if !math.IsNaN(last) {
			tokens = math.Min(burst, tokens+rate*(t-last))
		}
		last = t
		if tokens < float64(cost) {
			return false
		}
		tokens -= float64(cost)
		return true
	}
}

// A server with a bucket of points: the calibration infers a token
// bucket that counts cost, with its rate and burst.
func TestCalibrateCostBucket(t *testing.T) {
	path := writeGeneratedLog(t, 47, start, 600,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, cost: genPoints(0.3), admitCost: genCostBucket(70, 150)})
	c, text := calibrateMapped(t, path, logs.Mapping{Host: "host", Cost: "cost"})
	q := c.Hosts[0].Quota
	if q.Kind != kindname.QuotaTokenBucket || q.Unit != upstream.UnitCost {
		t.Fatalf("quota = %+v, want a token bucket counting cost", q)
	}
	within(t, "rate", q.Rate, 70, 0.10)
	within(t, "burst", q.Burst, 150, 0.10)
	if !c.Trusted {
		t.Errorf("errors %+v, verdict %q: want trusted\n%s", c.Errors, c.Verdict, text)
	}
	t.Logf("quota %s %.4g/s burst %.4g unit %s (score %.3f, best counting requests %.3f); errors %+v", q.Kind, q.Rate, q.Burst, q.Unit, bestScore(q), nextUnitScore(q), c.Errors)
}
