package planning

import (
	"encoding/json"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// Sequential replications reach the exhaustive plan's answer with fewer
// runs: two instances sharing a 100/s quota, the bucket's rate swept
// from 20/s to 90/s each with five replications and a 429 constraint.
// Points far above the share are infeasible after a run or two and stop
// there; the others run all five, so every feasible point's figures, the
// recommendation and each point's verdict are those of the exhaustive
// plan, and the plan is the same bytes with one worker or three.
func TestSequentialReplicationsKeepTheAnswer(t *testing.T) {
	spec := rateSpec(t, 20, 30, 40, 50, 60, 70, 80, 90)
	spec.Replications = 5
	spec.Constraints = []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01}}
	grid := Grid(spec.Sweeps)
	spec.AllReplications = true
	full := Run(spec, grid)
	spec.AllReplications = false
	seq := Run(spec, grid)
	if full.Recommended == nil || seq.Recommended["client.limiter.bucket.rate"] != full.Recommended["client.limiter.bucket.rate"] {
		t.Fatalf("recommended %v sequentially, %v exhaustively", seq.Recommended, full.Recommended)
	}
	cut := 0
	for i, p := range seq.Points {
		f := full.Points[i]
		if p.Feasible != f.Feasible {
			t.Errorf("%v: feasible %v sequentially, %v exhaustively", p.Params, p.Feasible, f.Feasible)
		}
		switch {
		case p.Runs < f.Runs:
			cut++
			if p.Feasible {
				t.Errorf("%v: stopped after %d runs though feasible", p.Params, p.Runs)
			}
		case p.Metrics["goodput_rps"] != f.Metrics["goodput_rps"] || p.Metrics["rate_429.ci95"] != f.Metrics["rate_429.ci95"]:
			t.Errorf("%v ran every replication, yet its figures differ from the exhaustive plan's", p.Params)
		}
	}
	if cut == 0 || seq.Cost.Runs >= full.Cost.Runs {
		t.Errorf("%d points stopped early; runs %d sequentially, %d exhaustively", cut, seq.Cost.Runs, full.Cost.Runs)
	}
	t.Logf("%d of %d points stopped early: %d runs against %d", cut, len(seq.Points), seq.Cost.Runs, full.Cost.Runs)
	if seq.Cost.RunsFull != full.Cost.RunsFull {
		t.Errorf("runs_full %d sequentially, %d exhaustively: the same grid", seq.Cost.RunsFull, full.Cost.RunsFull)
	}
	spec.Workers, spec.ReplicationWorkers = 3, 3
	again := Run(spec, grid)
	a, _ := json.Marshal(seq)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("a sequential plan differs with 3 workers:\n%s\n%s", a, b)
	}
}

// A critical finding the plan does not allow decides a point after one
// run; allowed, it decides nothing. A constraint decides it only from two
// runs, on the near bound of its interval.
func TestDecidedInfeasible(t *testing.T) {
	spec := Spec{Objective: Objective{Maximise: true, Path: "goodput_rps"}, Constraints: []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01}}}
	herd := &metrics.Results{Rate429: 0.5, Diagnoses: []metrics.Diagnosis{{Code: "sustained_429", Severity: "critical"}}}
	calm := &metrics.Results{Rate429: 0.5}
	if !decidedInfeasible(spec, nil, []*metrics.Results{herd}) {
		t.Error("a critical finding does not decide a point")
	}
	if decidedInfeasible(spec, nil, []*metrics.Results{calm}) {
		t.Error("one run decided a constraint: it has no interval")
	}
	if !decidedInfeasible(spec, nil, []*metrics.Results{calm, {Rate429: 0.52}}) {
		t.Error("two runs far above the threshold do not decide it")
	}
	if decidedInfeasible(spec, nil, []*metrics.Results{{Rate429: 0}, {Rate429: 0.03}}) {
		t.Error("two runs whose interval spans the threshold decided it")
	}
	spec.AllowFindings = true
	if decidedInfeasible(spec, nil, []*metrics.Results{herd}) {
		t.Error("an allowed finding decided a point")
	}
}
