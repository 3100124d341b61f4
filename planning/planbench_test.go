package planning

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// An M/M/c queue: Poisson arrivals at 3.6/s, a semaphore, exponential
// service of mean 1 s. Erlang C gives P(wait) = 0.197 at 6 permits and
// 0.086 at 7: the fewest permits keeping P(wait) under 0.14 is 7.
const erlangQueue = `name = "mmc"
[run]
requests = 20000
warmup = "200s"
[workload]
arrival = "poisson"
rate = 3.6
[[client.limiter]]
name = "sem"
kind = "semaphore"
permits = 4
[[upstream]]
host = "*"
latency = { dist = "exponential", mean = "1s" }
`

// plannerCase is a plan with a known answer.
type plannerCase struct {
	name        string
	scenario    string
	sets        []scenarios.Override
	sweeps      []Sweep
	objective   Objective
	constraints []metrics.Assertion
	want        map[string]float64
}

// spec is the case's plan of reps replications on workers.
func (c plannerCase) spec(tb testing.TB, reps, workers int) Spec {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), c.name+".toml")
	if err := os.WriteFile(p, []byte(c.scenario), 0o644); err != nil {
		tb.Fatal(err)
	}
	return Spec{Source: Source{Loader: scenarios.NewLoader(), Path: p, Sets: c.sets}, Name: c.name, Sweeps: c.sweeps,
		Objective: c.objective, Constraints: c.constraints, Replications: reps, Workers: workers, ReplicationWorkers: 1}
}

// span is the values from, from+step, … up to to.
func span(from, to, step float64) []float64 {
	var out []float64
	for i := 0; from+float64(i)*step <= to+1e-9; i++ {
		out = append(out, from+float64(i)*step)
	}
	return out
}

// shortRun is half the two instances' run.
var shortRun = []scenarios.Override{{Key: "run.duration", Value: "30s"}, {Key: "run.warmup", Value: "5s"}}

var rate429 = []metrics.Assertion{{Text: "rate_429<0.01", Path: "rate_429", Op: "<", Value: 0.01}}

// plannerCases are the planner's cases with known answers: the fewest
// semaphore permits for a wait probability, the per-instance rate of a
// shared quota, and a rate × burst grid.
var plannerCases = []plannerCase{
	{name: "erlang-permits", scenario: erlangQueue,
		sweeps:      []Sweep{{Key: "client.limiter.sem.permits", Values: span(4, 35, 1)}},
		objective:   Objective{Path: "client.limiter.sem.permits"},
		constraints: []metrics.Assertion{{Text: "limiters[sem].p_wait<0.14", Path: "limiters[sem].p_wait", Op: "<", Value: 0.14}},
		want:        map[string]float64{"client.limiter.sem.permits": 7}},
	{name: "quota-share", scenario: twoInstances, sets: shortRun,
		sweeps:      []Sweep{{Key: "client.limiter.bucket.rate", Values: span(20, 90, 1)}},
		objective:   Objective{Maximise: true, Path: "client.limiter.bucket.rate"},
		constraints: rate429,
		want:        map[string]float64{"client.limiter.bucket.rate": 50}},
	{name: "rate-burst", scenario: twoInstances, sets: shortRun,
		sweeps: []Sweep{{Key: "client.limiter.bucket.rate", Values: span(30, 70, 2.5)},
			{Key: "client.limiter.bucket.burst", Values: span(1, 9, 1)}},
		objective:   Objective{Maximise: true, Path: "client.limiter.bucket.rate"},
		constraints: rate429,
		want:        map[string]float64{"client.limiter.bucket.rate": 50, "client.limiter.bucket.burst": 1}},
}

// gridCase is a grid of n rates × n bursts × n instances on a short run:
// the highest rate with under 1% of 429s is 100/s, one instance taking
// the whole quota, at burst 1 (the first in grid order of the rates
// that tie).
func gridCase(n int) plannerCase {
	return plannerCase{name: "three-keys", scenario: twoInstances,
		sets: []scenarios.Override{{Key: "run.duration", Value: "2s"}, {Key: "run.warmup", Value: "500ms"}},
		sweeps: []Sweep{{Key: "client.limiter.bucket.rate", Values: span(20, 20*float64(n), 20)},
			{Key: "client.limiter.bucket.burst", Values: span(1, float64(n), 1)},
			{Key: "client.instances", Values: span(1, float64(n), 1)}},
		objective:   Objective{Maximise: true, Path: "client.limiter.bucket.rate"},
		constraints: rate429,
		want:        map[string]float64{"client.limiter.bucket.rate": 100, "client.limiter.bucket.burst": 1, "client.instances": 1}}
}

// sideBySide runs the case's exhaustive plan (every point, every
// replication) and its refined one (refinement and sequential
// replications), one after the other, timing each.
func sideBySide(tb testing.TB, c plannerCase, reps, workers int) (full, refined *Result, fullTime, refinedTime time.Duration) {
	tb.Helper()
	spec := c.spec(tb, reps, workers)
	grid := Grid(spec.Sweeps)
	spec.AllReplications = true
	start := time.Now()
	full = Run(spec, grid)
	fullTime = time.Since(start)
	spec.AllReplications = false
	start = time.Now()
	refined = RunRefined(spec, grid)
	refinedTime = time.Since(start)
	return full, refined, fullTime, refinedTime
}

// checkAnswer fails unless the exhaustive plan recommends the case's
// known answer and the refined plan the same, in at most share of the
// exhaustive plan's runs.
func checkAnswer(t *testing.T, c plannerCase, full, refined *Result, share float64) {
	t.Helper()
	if !reflect.DeepEqual(full.Recommended, c.want) {
		t.Fatalf("%s: the exhaustive plan recommends %v, want %v", c.name, full.Recommended, c.want)
	}
	if !reflect.DeepEqual(refined.Recommended, full.Recommended) {
		t.Fatalf("%s: the refined plan recommends %v, the exhaustive one %v", c.name, refined.Recommended, full.Recommended)
	}
	ratio := float64(refined.Cost.Runs) / float64(full.Cost.Runs)
	if ratio > share {
		t.Errorf("%s: the refined plan ran %d runs of the exhaustive plan's %d (%.1f%%), over %.0f%%", c.name, refined.Cost.Runs, full.Cost.Runs, 100*ratio, 100*share)
	}
	t.Logf("%s: %d runs of %d (%.1f%%), %d of %d points", c.name, refined.Cost.Runs, full.Cost.Runs, 100*ratio, len(refined.Points), len(full.Points))
}

// The planner's cases with known answers (the fewest permits for a wait
// probability, a shared quota's split, a rate × burst grid), each with
// five replications a point: refinement with sequential replications
// recommends what the exhaustive grid does in at most a quarter of its
// runs. Runs are counted, not timed: the counts are the same on any
// machine.
func TestPlannerCasesInAQuarterOfTheRuns(t *testing.T) {
	for _, c := range plannerCases {
		full, refined, _, _ := sideBySide(t, c, 5, 2)
		checkAnswer(t, c, full, refined, 0.25)
	}
}

// A 3-key grid (7 × 7 × 7 here; 10 × 10 × 10 in BenchmarkThreeKeyGrid)
// with five replications reaches the exhaustive grid's answer in at most
// 15% of its runs.
func TestThreeKeyGridInASeventhOfTheRuns(t *testing.T) {
	c := gridCase(7)
	full, refined, _, _ := sideBySide(t, c, 5, 2)
	checkAnswer(t, c, full, refined, 0.15)
}

// A refined plan with sequential replications is the same bytes on one
// worker as on three.
func TestRefinedSequentialPlanWhateverTheWorkers(t *testing.T) {
	c := plannerCases[0]
	var outs []string
	for _, workers := range []int{1, 3} {
		spec := c.spec(t, 5, workers)
		res := RunRefined(spec, Grid(spec.Sweeps))
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(data))
	}
	if outs[0] != outs[1] {
		t.Fatalf("the refined plan differs on 3 workers:\n%s\n%s", outs[0], outs[1])
	}
}

// reportSideBySide reports the refined plan's runs and wall time as
// shares of the exhaustive plan's, measured in the same iteration.
func reportSideBySide(b *testing.B, c plannerCase, reps, workers int) {
	var runs, runsFull int
	var took, tookFull time.Duration
	for range b.N {
		full, refined, fullTime, refinedTime := sideBySide(b, c, reps, workers)
		if !reflect.DeepEqual(refined.Recommended, full.Recommended) {
			b.Fatalf("%s: refined %v, exhaustive %v", c.name, refined.Recommended, full.Recommended)
		}
		runs, runsFull = runs+refined.Cost.Runs, runsFull+full.Cost.Runs
		took, tookFull = took+refinedTime, tookFull+fullTime
	}
	b.ReportMetric(float64(runs)/float64(runsFull), "runs/exhaustive")
	b.ReportMetric(took.Seconds()/tookFull.Seconds(), "time/exhaustive")
	b.ReportMetric(float64(runsFull)/float64(b.N), "exhaustive-runs")
}

// BenchmarkPlannerCases: each case with a known answer, five replications
// on two workers, refined against exhaustive.
func BenchmarkPlannerCases(b *testing.B) {
	for _, c := range plannerCases {
		b.Run(c.name, func(b *testing.B) { reportSideBySide(b, c, 5, 2) })
	}
}

// BenchmarkThreeKeyGrid: a 3-key grid of 1,000 points with five
// replications on two workers, refined against exhaustive.
func BenchmarkThreeKeyGrid(b *testing.B) {
	reportSideBySide(b, gridCase(10), 5, 2)
}
