package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// An objective on a scenario key that is not swept says to sweep it,
// rather than that the results have no field "client".
func TestObjectiveOnAnUnsweptKeySaysToSweepIt(t *testing.T) {
	code, _, errOut := cli("plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--objective", "max:client.limiter.conns.permits")
	if code != exitUsage || !strings.Contains(errOut, "a scenario key is an objective only when it is swept: add --sweep client.limiter.conns.permits=") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = cli("plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--objective", "max:goodput")
	if code != exitUsage || !strings.Contains(errOut, `no field "goodput"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// The --set and --constraint flags read back as written, which is how a
// resumed plan's changed flags are named (not as Go structs).
func TestFlagValuesReadBackAsWritten(t *testing.T) {
	var a assertions
	for _, s := range []string{"rate_429<0.01", "success_ratio>=0.99"} {
		if err := a.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.String(); got != "rate_429<0.01, success_ratio>=0.99" {
		t.Errorf("constraints read %q", got)
	}
	o := overrides{{Key: "run.duration", Value: "5s"}, {Key: "client.limiter.bucket.rate", Value: int64(90)},
		{Key: "client.limiter.bucket"}, {Key: "client.path.all.limiters", Value: []any{"a", "b"}}, {Key: "x", Value: ""}, {Key: "y", Value: "a b"}}
	if got := o.String(); got != `run.duration=5s client.limiter.bucket.rate=90 client.limiter.bucket= client.path.all.limiters=["a", "b"] x="" y="a b"` {
		t.Errorf("overrides read %q", got)
	}
}

// cost.runs_full is what the exhaustive plan runs: a sequential plan that
// cut points short, each run again on a longer horizon, reports the full
// grid's runs, horizon reruns of every replication included, as the
// exhaustive plan spends them.
func TestRunsFullIsWhatTheExhaustivePlanRuns(t *testing.T) {
	args := []string{"plan", "token-bucket", "--set", "workload.rate=150", "--set", "run.duration=20s", "--replications", "3",
		"--sweep", "client.limiter.quota.rate=80:130:10", "--constraint", "rate_429<0.01", "--json", "--quiet"}
	cost := func(extra ...string) (runs, full int) {
		c, _ := planCost(t, append(slices.Clone(args), extra...)...)
		return c.Runs, c.RunsFull
	}
	runs, full := cost()
	allRuns, allFull := cost("--all-replications")
	if allRuns != allFull || full != allFull || runs >= full {
		t.Errorf("sequential: %d runs of %d; exhaustive: %d of %d", runs, full, allRuns, allFull)
	}
}

// A merged round of a sharded refined plan is waiting for its next round,
// not stopped: its verdict says so, and its refined line how many points
// the next round runs, not INCOMPLETE.
func TestMergedRoundSaysWhatRunsNext(t *testing.T) {
	res := &planning.Result{Keys: []string{"k"}, Objective: "max:k", Points: []planning.Point{{Params: map[string]float64{"k": 1}}},
		Refined: &planning.Refined{Rounds: 1, Pending: 12}}
	var b strings.Builder
	if err := writePlan(&b, res, nil); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "INCOMPLETE") || !strings.Contains(out, "merged: 1 round(s) of the refined plan; nothing is recommended until its last round") || !strings.Contains(out, "the next round runs 12 more (--from-merged)") {
		t.Errorf("%s", out)
	}
}

// The note over a replicated plan's table says points stop early only
// when one did: with every replication run (--all-replications) it says
// so plainly.
func TestReplicationNoteSaysWhetherPointsStoppedEarly(t *testing.T) {
	for _, c := range []struct {
		runs []int
		want string
	}{
		{[]int{3, 3}, "means over each point's runs (3 replications)"},
		{[]int{3, 1}, "(at most 3 replications; one decided infeasible stops early)"},
	} {
		res := &planning.Result{Keys: []string{"k"}, Objective: "max:k", Replications: 3, Complete: true}
		for i, n := range c.runs {
			res.Points = append(res.Points, planning.Point{Params: map[string]float64{"k": float64(i)}, Runs: n, Metrics: map[string]float64{}})
		}
		var b strings.Builder
		if err := writePlan(&b, res, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("runs %v: %s", c.runs, b.String())
		}
	}
}

// The table's feasible column says why a point is not: the constraints it
// misses on their far bound, then its critical findings; a point that
// misses none says only what left it out.
func TestFeasibleColumnNamesMissedConstraints(t *testing.T) {
	res := &planning.Result{Keys: []string{"k"}, Objective: "max:k", Complete: true, Constraints: []string{"rate_429<0.01", "success_ratio>0.5"},
		Points: []planning.Point{
			{Params: map[string]float64{"k": 1}, Metrics: map[string]float64{"rate_429": 0.09, "success_ratio": 0.7}, Findings: []string{"sustained_429"}},
			{Params: map[string]float64{"k": 2}, Metrics: map[string]float64{"rate_429": 0.001, "success_ratio": 0.7}, Findings: []string{"memory_growth"}},
			{Params: map[string]float64{"k": 3}, Metrics: map[string]float64{"rate_429": 0.001, "success_ratio": 0.7}, Feasible: true},
		}}
	var b strings.Builder
	if err := writePlan(&b, res, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no: rate_429<0.01; sustained_429\n", "  no: memory_growth\n", "  yes\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// A point whose run stopped early (a deadlock) still cost its run: the
// plan counts it, up to the first failure in seed order, so the count is
// the same on one worker and on two.
func TestCostCountsRunsThatStoppedEarly(t *testing.T) {
	var want string
	for _, workers := range []string{"1", "2"} {
		c, out := planCost(t, "plan", "fail-deadlock", "--sweep", "client.limiter.db.permits=2,4", "--replications", "3", "--all-replications",
			"--constraint", "success_ratio>0.99", "--workers", workers, "--json", "--quiet")
		if c.Runs != 2 || c.Requests == 0 {
			t.Errorf("--workers %s: cost %+v, want the 2 deadlocked runs counted", workers, c)
		}
		if want == "" {
			want = out
		} else if out != want {
			t.Errorf("--workers %s: another plan.json", workers)
		}
	}
}

// planCost runs a plan (args give --json) and reads its cost, with its
// output.
func planCost(t *testing.T, args ...string) (cost struct {
	Runs     int   `json:"runs"`
	RunsFull int   `json:"runs_full"`
	Requests int64 `json:"requests"`
}, out string) {
	t.Helper()
	code, out, errOut := cli(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var plan struct {
		Cost json.RawMessage `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(plan.Cost, &cost); err != nil {
		t.Fatal(err)
	}
	return cost, out
}
