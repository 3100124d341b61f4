package planning

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// Two instances share a 100/s quota; constant latency, ample demand: 50/s
// each is the quota's share, and above it the upstream answers 429s.
const twoInstances = `name = "two"
[run]
duration = "60s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 300.0
[client]
instances = 2
acquire_timeout = "1s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 10.0
burst = 1
[[upstream]]
host = "*"
latency = { dist = "constant", value = "20ms" }
quota = { kind = "token_bucket", rate = 100.0, burst = 5 }
`

func twoSource(t *testing.T) Source {
	t.Helper()
	p := filepath.Join(t.TempDir(), "two.toml")
	if err := os.WriteFile(p, []byte(twoInstances), 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{Loader: scenarios.NewLoader(), Path: p}
}

func rateSpec(t *testing.T, values ...float64) Spec {
	return Spec{Source: twoSource(t), Name: "two", Sweeps: []Sweep{{Key: "client.limiter.bucket.rate", Values: values}},
		Objective: Objective{Maximise: true, Path: "client.limiter.bucket.rate"}, Replications: 1, Workers: 1, ReplicationWorkers: 1}
}

// A plan stopped part way keeps the points that finished, is marked
// incomplete and recommends nothing, even where a finished point meets
// every constraint.
func TestInterruptedPlanRecommendsNothing(t *testing.T) {
	spec := rateSpec(t, 30, 40, 45, 50)
	var stop atomic.Bool
	finished := 0
	spec.Interrupt = &stop
	spec.Progress = func() {
		if finished++; finished == 2 {
			stop.Store(true)
		}
	}
	res := Run(spec, Grid(spec.Sweeps))
	if res.Complete || res.Recommended != nil || len(res.Points) != 2 {
		t.Fatalf("complete %v, recommended %v, %d points: want an incomplete plan of the 2 points that finished, recommending nothing",
			res.Complete, res.Recommended, len(res.Points))
	}
	for _, p := range res.Points {
		if p.Error != "" || !p.Feasible {
			t.Errorf("point %v: error %q, feasible %v: a finished point keeps its figures", p.Params, p.Error, p.Feasible)
		}
	}
	// Merge refuses a part that was stopped.
	spec.Parts, spec.Part = 2, 0
	stop.Store(true)
	part := Run(spec, Grid(spec.Sweeps))
	spec.Part = 1
	stop.Store(false)
	other := Run(spec, Grid(spec.Sweeps))
	if part.Complete || !other.Complete {
		t.Fatalf("parts complete %v and %v", part.Complete, other.Complete)
	}
	if _, err := Merge([]*Result{part, other}); err == nil {
		t.Fatal("an incomplete part merged")
	}
}

// A point whose runs have a critical finding (here sustained 429s: 70/s
// each against a 100/s quota shared by two) is never recommended, however
// good its objective, unless findings are allowed.
func TestPointWithCriticalFindingNotRecommended(t *testing.T) {
	spec := rateSpec(t, 40, 70)
	res := Run(spec, Grid(spec.Sweeps))
	hot := res.Points[1]
	if len(hot.Findings) == 0 || hot.Findings[0] != "sustained_429" || hot.Feasible {
		t.Fatalf("70/s: findings %v, feasible %v: want sustained_429 and infeasible", hot.Findings, hot.Feasible)
	}
	if got := res.Recommended["client.limiter.bucket.rate"]; got != 40 {
		t.Fatalf("recommended %v, want 40", res.Recommended)
	}
	for _, path := range []string{"success_ratio", "requests.acquire_timeouts", "requests.timed_out", "requests.rejected"} {
		if _, ok := hot.Metrics[path]; !ok {
			t.Errorf("a point lacks its health figure %s", path)
		}
	}
	spec.AllowFindings = true
	if res := Run(spec, Grid(spec.Sweeps)); res.Recommended["client.limiter.bucket.rate"] != 70 {
		t.Fatalf("with findings allowed: recommended %v, want 70", res.Recommended)
	}
}

// A bisection follows the constraints alone and checks the findings only
// at the value it finds: the fewest per-instance requests a second giving
// 60/s of goodput is 30, although every value above 50 has sustained 429s.
func TestSearchChecksFindingsAtTheEnd(t *testing.T) {
	spec := rateSpec(t)
	spec.Objective.Maximise = false
	spec.Constraints = []metrics.Assertion{mustAssert(t, "goodput_rps>=60")}
	res := Search(spec, Bisection{Key: "client.limiter.bucket.rate", Low: 10, High: 90, Tolerance: 1, integerBoundary: true})
	if got := res.Recommended["client.limiter.bucket.rate"]; got != 30 {
		t.Fatalf("recommended %v (closest %q), want 30", res.Recommended, res.Closest)
	}
	// The largest rate with goodput at least 60/s is 90, which has
	// sustained 429s: nothing is recommended, and the output says why.
	spec.Objective.Maximise = true
	res = Search(spec, Bisection{Key: "client.limiter.bucket.rate", Low: 10, High: 90, Tolerance: 1, integerBoundary: true})
	if res.Recommended != nil || res.Closest == "" {
		t.Fatalf("recommended %v, closest %q: want none, with the findings named", res.Recommended, res.Closest)
	}
}

func mustAssert(t *testing.T, s string) metrics.Assertion {
	t.Helper()
	a, err := metrics.ParseAssertion(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
