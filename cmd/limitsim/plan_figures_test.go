package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// With replications, feasibility is judged on the confidence bound, so
// the recommended point still meets its constraint on fresh seeds.
func TestPlanRecommendationHoldsOnFreshSeeds(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	code, out, errOut := cli("plan", sc, "--sweep", "client.limiter.bucket.rate=40:60:5", "--constraint", "rate_429<0.01",
		"--objective", "max:client.limiter.bucket.rate", "--replications", "3", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res planning.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	rate, ok := res.Recommended["client.limiter.bucket.rate"]
	if !ok || res.Replications != 3 {
		t.Fatalf("recommended %v, replications %d", res.Recommended, res.Replications)
	}
	for _, p := range res.Points {
		if _, ok := p.Metrics["rate_429.ci95"]; !ok && p.Runs > 1 {
			t.Fatalf("point %v ran %d times and lacks a confidence interval", p.Params, p.Runs)
		}
		if p.Runs < 3 && p.Feasible { // stopped early: decided infeasible
			t.Errorf("point %v stopped after %d runs, yet it is feasible", p.Params, p.Runs)
		}
	}
	for seed := 21; seed <= 25; seed++ {
		if code, _, errOut := cli("run", sc, "--set", fmt.Sprintf("client.limiter.bucket.rate=%g", rate),
			"--set", fmt.Sprintf("run.seed=%d", seed), "--assert", "rate_429<0.01"); code != exitOK {
			t.Errorf("seed %d: the recommended %g/s fails: %s", seed, rate, errOut)
		}
	}
}

// The terminal's plan table writes figures as plan.md does: a 429 rate of
// 0.9989% beside a constraint of 1% reads 0.999%, not 0.009989 or 1.0%;
// with replications, its half-width in the same unit.
func TestPlanTableFiguresInTheirUnits(t *testing.T) {
	p := planning.Point{Metrics: map[string]float64{"rate_429": 0.009989, "goodput_rps": 2666.6667, "limiters[b].wait_s.p99": 0.25}}
	for path, want := range map[string]string{"rate_429": "0.999%", "goodput_rps": "2,667", "limiters[b].wait_s.p99": "250ms"} {
		if got := withInterval(p, path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	p.Metrics["rate_429.ci95"] = 0.0021
	if got := withInterval(p, "rate_429"); got != "0.999% ± 0.21%" {
		t.Errorf("with replications: %q", got)
	}
}
