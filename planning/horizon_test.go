package planning

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

func writeSource(t testing.TB, name, src string) Source {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{Loader: scenarios.NewLoader(), Path: p}
}

// horizonOf runs src with the overrides and reads its horizon.
func horizonOf(t *testing.T, src Source, overrides ...scenarios.Override) Horizon {
	t.Helper()
	r, err := src.Simulate(overrides, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := src.Load(overrides...)
	if err != nil {
		t.Fatal(err)
	}
	return HorizonOf(sc, r)
}

// A server bucket is overdrawn only by what the steady state sends above
// its rate: four hosts at 80/s each under one "*" block (a quota of
// 100/s each) overdraw none, and a client sized exactly to the quota,
// with a second of burst of its own, does not either; at 110/s, a burst
// of 1,000 is spent in about 100 s and ten of those are needed.
func TestHorizonOfOverdrawnBuckets(t *testing.T) {
	hosts := writeSource(t, "hosts", `name = "hosts"
[run]
duration = "30s"
warmup = "5s"
[workload]
arrival = "poisson"
rate = 320.0
hosts = [{ name = "a" }, { name = "b" }, { name = "c" }, { name = "d" }]
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 200
[[upstream]]
host = "*"
latency = { dist = "constant", value = "50ms" }
quota = { kind = "token_bucket", rate = 100.0, burst = 20000 }
`)
	if h := horizonOf(t, hosts); h.Short() || h.NeededS != 0 {
		t.Errorf("four hosts under their own quotas: %+v, want no need", h)
	}
	one := writeSource(t, "one", burstScenario)
	hundred := scenarios.Override{Key: "client.limiter.bucket.burst", Value: 100.0}
	// The client's own bucket (offered 150/s) is overdrawn: its burst of
	// 100 is spent in 2 s, well within the run; the quota is not.
	if h := horizonOf(t, one, hundred); h.Short() || strings.Contains(h.Why, "quota") {
		t.Errorf("a client at exactly the quota: %+v, want no overdraw of the quota", h)
	}
	h := horizonOf(t, one, hundred, scenarios.Override{Key: "client.limiter.bucket.rate", Value: 110.0})
	if !h.Short() || h.NeededS < 900 || h.NeededS > 1100 || !strings.Contains(h.Why, "quota burst of 1,000") {
		t.Errorf("at 110/s: %+v, want about 10 × 100 s from the quota's burst", h)
	}
}

// Lengthening never moves the warm-up past a schedule's first step, and
// a lengthened point must hold on the run as given too: a quota cut from
// 100/s to 40/s between 60 s and 120 s makes 90/s fail there, however
// little the cut weighs in a long run.
func TestLengthenedPointHoldsOnTheRunAsGiven(t *testing.T) {
	src := writeSource(t, "cut", `name = "cut"
[run]
duration = "180s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 80.0
[client]
acquire_timeout = "2s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 90.0
burst = 90
[[client.limiter]]
name = "window"
kind = "sliding_window"
limit = 1000000
window = "2m"
[[upstream]]
host = "*"
latency = { dist = "constant", value = "50ms" }
quota = { kind = "token_bucket", rate = 100.0, burst = 100, schedule = [{ at = "60s", rate = 40.0 }, { at = "120s", rate = 100.0 }] }
`)
	spec := Spec{Source: src, Name: "cut", Sweeps: []Sweep{{Key: "client.limiter.bucket.rate", Values: []float64{30, 90}}},
		Objective: Objective{Maximise: true, Path: "client.limiter.bucket.rate"}, AllowFindings: true,
		Constraints: []metrics.Assertion{mustAssert(t, "rate_429<0.01")}, Replications: 1, Workers: 2, ReplicationWorkers: 1}
	res := Run(spec, Grid(spec.Sweeps))
	hot := res.Points[1]
	if hot.Horizon == nil || hot.Horizon.Lengthened == 0 || hot.Horizon.WarmupS > 60 {
		t.Fatalf("90/s: horizon %+v, want a longer run whose warm-up ends by the cut at 60 s", hot.Horizon)
	}
	if hot.Feasible || res.Recommended["client.limiter.bucket.rate"] != 30 {
		t.Fatalf("90/s feasible %v, recommended %v: the cut's 429s on the run as given must count", hot.Feasible, res.Recommended)
	}
}

// A trace that ends before run.duration ends the run: its quiet tail is
// not part of the steady window, so offered load is the trace's own.
func TestTraceEndingEarlyKeepsItsRate(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 2000 { // 50/s for 40 s
		fmt.Fprintf(&b, "%g\n", float64(i)*0.02)
	}
	if err := os.WriteFile(filepath.Join(dir, "tr.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "trace.toml")
	if err := os.WriteFile(p, []byte(`name = "trace"
[run]
duration = "60s"
warmup = "5s"
[workload]
arrival = "trace"
trace = "tr.csv"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 60.0
burst = 60
[[upstream]]
host = "*"
latency = { dist = "constant", value = "20ms" }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Source{Path: p}.Simulate(nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.ElapsedS > 45 || r.Throughput.OfferedRPS < 49 || r.Throughput.OfferedRPS > 51 {
		t.Fatalf("elapsed %v s, offered %v/s: want the trace's 40 s at 50/s", r.ElapsedS, r.Throughput.OfferedRPS)
	}
}

// A global bucket sees its own instance's load: with instances weighted
// 70/10/10/10, the busiest one offers 70/s of 100/s to a bucket of 40/s,
// whose burst of 4,000 then lasts 133 s; split evenly, no instance
// overdraws it.
func TestHorizonOfTheBusiestInstance(t *testing.T) {
	sc := &scenarios.Scenario{}
	sc.Client.Limiters = []scenarios.Limiter{{Name: "b", Kind: "token_bucket", Scope: "global", Params: models.Params{Rate: 40, Burst: 4000}}}
	r := &metrics.Results{Instances: 4}
	r.Throughput.OfferedRPS, r.Throughput.WindowS = 100, 120
	for _, w := range []float64{0.7, 0.1, 0.1, 0.1} {
		r.PerInstance = append(r.PerInstance, metrics.InstanceStats{Weight: w})
	}
	if h := HorizonOf(sc, r); !h.Short() || h.NeededS < 1333 || h.NeededS > 1334 {
		t.Fatalf("weighted: %+v, want 10 × 4000/30 s", h)
	}
	for i := range r.PerInstance {
		r.PerInstance[i].Weight = 0.25
	}
	if h := HorizonOf(sc, r); h.NeededS != 0 {
		t.Fatalf("even: %+v, want no overdraw", h)
	}
}
