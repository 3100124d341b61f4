package planning

import (
	"os"
	"path/filepath"
	"strings"
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

// burstScenario: a client bucket (burst 1) before a 100/s quota whose
// burst of 1,000 outlasts a 60 s run at 110/s.
const burstScenario = `name = "burst"
[run]
duration = "60s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 150.0
[client]
acquire_timeout = "1s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 100.0
burst = 1
[[upstream]]
host = "*"
latency = { dist = "constant", value = "20ms" }
quota = { kind = "token_bucket", rate = 100.0, burst = 1000 }
`

// A server bucket whose burst outlasts the run: 1,000 requests of burst
// on a 100/s quota take 100 s to spend at 110/s, longer than the 60 s
// run. On the run as given every rate up to 110/s shows no 429; the plan
// runs the overdrawn points again for long enough (or refuses them) and
// recommends the quota's long-run rate, which holds on a run four times
// longer.
func TestPlanRecommendsNothingAboveTheLongRunQuota(t *testing.T) {
	src := writeSource(t, "burst", burstScenario)
	spec := Spec{Source: src, Name: "burst",
		Sweeps:      []Sweep{{Key: "client.limiter.bucket.rate", Values: []float64{90, 100, 110, 120, 130}}},
		Objective:   Objective{Maximise: true, Path: "client.limiter.bucket.rate"},
		Constraints: []metrics.Assertion{mustAssert(t, "rate_429<0.01")}, Replications: 1, Workers: 2, ReplicationWorkers: 1}
	short := spec
	short.KeepHorizon = true
	res := Run(short, Grid(spec.Sweeps))
	if got := res.Recommended["client.limiter.bucket.rate"]; got != 100 {
		t.Fatalf("--keep-horizon: recommended %v, want 100 (the points above the quota refused)", res.Recommended)
	}
	if h := res.Points[2].Horizon; h == nil || !h.Refused || h.NeededS < 900 {
		t.Fatalf("110/s: horizon %+v, want refused with a need of about 1,000 s", h)
	}
	res = Run(spec, Grid(spec.Sweeps))
	if got := res.Recommended["client.limiter.bucket.rate"]; got != 100 {
		t.Fatalf("recommended %v, want 100: %v", res.Recommended, res.Warnings)
	}
	for _, pt := range res.Points[2:] {
		if pt.Horizon == nil || pt.Horizon.Lengthened == 0 || pt.Metrics["rate_429"] < 0.01 {
			t.Errorf("%v: horizon %+v, 429 rate %v: want a lengthened run showing the 429s", pt.Params, pt.Horizon, pt.Metrics["rate_429"])
		}
		// Its warm-up spends the burst: goodput is the quota's long-run
		// rate, not more.
		if g := pt.Metrics["goodput_rps"]; g > 100.5 {
			t.Errorf("%v: goodput %v/s above the 100/s quota", pt.Params, g)
		}
	}
	if len(res.Warnings) == 0 || !strings.HasPrefix(res.Warnings[0], "horizon: 3 of 5 points") {
		t.Errorf("warnings %q", res.Warnings)
	}
	long, err := spec.Source.Simulate([]scenarios.Override{{Key: "client.limiter.bucket.rate", Value: 100.0}, {Key: "run.duration", Value: "240s"}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if long.Rate429 >= 0.01 {
		t.Fatalf("the recommendation on a run four times longer: 429 rate %v", long.Rate429)
	}
}

// A recommendation at either end of a swept range says so and how far to
// extend the sweep; one inside it, or on a key swept at one value, does
// not. Below a range of positive values the suggestion stays positive (0
// permits, a rate of 0 are refused), and whole for whole numbers.
func TestEdgeWarnings(t *testing.T) {
	for _, c := range []struct {
		key   string
		swept []float64
		at    float64
		want  string
	}{
		// Above a key with a greatest value the suggestion stops there,
		// and at that value there is nothing above.
		{"client.limiter.b.initial_fill", []float64{0, 0.3, 0.6, 0.9}, 0.9,
			"edge: client.limiter.b.initial_fill=0.9 is the top of its swept range; the best may lie above it: extend the sweep to 1, the most it may be"},
		{"client.limiter.b.initial_fill", []float64{0, 0.5, 1}, 1, ""},
		{"client.limiter.s.store_errors", []float64{0.2, 0.4}, 0.4,
			"edge: client.limiter.s.store_errors=0.4 is the top of its swept range; the best may lie above it: extend the sweep to 0.8 or beyond"},
		{"client.instances", []float64{5000, 10000}, 10000, ""},
		{"", []float64{10, 20, 30}, 30, "edge: a=30 is the top of its swept range; the best may lie above it: extend the sweep to 50 or beyond"},
		{"", []float64{10, 20, 30}, 10, "edge: a=10 is the bottom of its swept range; the best may lie below it: extend the sweep down to 5"},
		{"", []float64{10, 20, 30}, 20, ""},
		{"", []float64{60, 70, 80}, 60, "edge: a=60 is the bottom of its swept range; the best may lie below it: extend the sweep down to 40"},
		{"", []float64{20, 40}, 20, "edge: a=20 is the bottom of its swept range; the best may lie below it: extend the sweep down to 10"},
		{"", []float64{3, 5, 7}, 3, "edge: a=3 is the bottom of its swept range; the best may lie below it: extend the sweep down to 1"},
		{"", []float64{1, 2, 3}, 1, ""}, // 1 is the least whole positive value
		{"", []float64{0.5, 1.5}, 0.5, "edge: a=0.5 is the bottom of its swept range; the best may lie below it: extend the sweep down to 0.25"},
		{"", []float64{-10, 0, 10}, -10, "edge: a=-10 is the bottom of its swept range; the best may lie below it: extend the sweep down to -30"},
		{"", []float64{0, 10}, 0, ""}, // nothing below 0 for a key swept from it
	} {
		if c.key == "" {
			c.key = "a"
		}
		res := &Result{Keys: []string{c.key, "b"}}
		for _, a := range c.swept {
			res.Points = append(res.Points, Point{Params: map[string]float64{c.key: a, "b": 5}})
		}
		res.Recommended = map[string]float64{c.key: c.at, "b": 5}
		got := strings.Join(edgeWarnings(res), "; ")
		if got != c.want {
			t.Errorf("swept %v, recommended a=%v: %q, want %q", c.swept, c.at, got, c.want)
		}
	}
}

// A shard is i/n with 0 ≤ i < n; an empty i reads JOB_COMPLETION_INDEX,
// and a bad value there is named as the variable's, not as --shard's.
func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		s, index    string
		part, parts int
		wantErr     string
	}{
		{"1/3", "", 1, 3, ""},
		{"/3", "2", 2, 3, ""},
		{"3/3", "", 0, 0, "want i/n"},
		{"/3", "abc", 0, 0, `JOB_COMPLETION_INDEX="abc"`},
		{"/3", "", 0, 0, "JOB_COMPLETION_INDEX is not set"},
		{"2", "", 0, 0, "want i/n"},
	} {
		part, parts, err := ParseShard(c.s, c.index)
		switch {
		case c.wantErr == "" && (err != nil || part != c.part || parts != c.parts):
			t.Errorf("%q (%q): %d/%d, %v", c.s, c.index, part, parts, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q (%q): %v, want an error with %q", c.s, c.index, err, c.wantErr)
		}
	}
}
