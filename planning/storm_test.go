package planning

import (
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// A plan constrains storm_share: over a sweep of the retry budget, the
// point without one (a storm in every replication) fails storm_share <
// 0.01 even where critical findings are allowed, and the plan recommends
// the budget.
func TestPlanConstrainsStormShare(t *testing.T) {
	spec := Spec{Source: Source{Loader: scenarios.NewLoader(), Path: "../scenarios/examples/fail-retry-storm.toml"}, Name: "storm",
		Sweeps:        []Sweep{{Key: "client.retry.budget", Values: []float64{0, 0.1}}},
		Objective:     Objective{Maximise: false, Path: "client.retry.budget"},
		Constraints:   []metrics.Assertion{mustAssert(t, "storm_share<0.01")},
		AllowFindings: true, KeepHorizon: true, Replications: 3, AllReplications: true, Workers: 2, ReplicationWorkers: 1}
	res := Run(spec, Grid(spec.Sweeps))
	if len(res.Points) != 2 {
		t.Fatalf("points %+v", res.Points)
	}
	none, budget := res.Points[0], res.Points[1]
	if none.Metrics["storm_share"] != 1 || none.Feasible {
		t.Fatalf("without a budget: storm_share %v, feasible %v (error %q); want 1, infeasible", none.Metrics["storm_share"], none.Feasible, none.Error)
	}
	if budget.Metrics["storm_share"] != 0 || !budget.Feasible {
		t.Fatalf("with a budget: storm_share %v, feasible %v (error %q); want 0, feasible", budget.Metrics["storm_share"], budget.Feasible, budget.Error)
	}
	if got := res.Recommended["client.retry.budget"]; got != 0.1 {
		t.Fatalf("recommended %v, want the budget 0.1", res.Recommended)
	}
	spec.Constraints = nil
	if got := Run(spec, Grid(spec.Sweeps)).Recommended["client.retry.budget"]; got != 0 {
		t.Fatalf("without the constraint: recommended %v, want 0 (findings allowed)", got)
	}
}
