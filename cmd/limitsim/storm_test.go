package main

import (
	"encoding/json"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// stormShareOf runs fail-retry-storm over ten seeds with args added and
// returns its storm_share and its verified fix's set.
func stormShareOf(t *testing.T, args ...string) (float64, map[string]any) {
	t.Helper()
	code, out, errOut := cli(append([]string{"run", "fail-retry-storm", "--json", "--quiet", "--set", "run.replications=10"}, args...)...)
	if code != exitOK && code != exitModel {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var r struct {
		Replications struct {
			StormShare *float64 `json:"storm_share"`
		} `json:"replications"`
		Fix *struct {
			Status string         `json:"status"`
			Set    map[string]any `json:"set"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if r.Replications.StormShare == nil {
		t.Fatalf("%v: no storm_share", args)
	}
	if r.Fix == nil || r.Fix.Status != "verified" {
		return *r.Replications.StormShare, nil
	}
	return *r.Replications.StormShare, r.Fix.Set
}

// The fix the run prints for the retry storm, applied as printed, ends
// the storm on every one of the ten seeds it was found on.
func TestPrintedStormFixEndsTheStorm(t *testing.T) {
	before, set := stormShareOf(t)
	if before < 0.8 || set == nil {
		t.Fatalf("storm_share %v, verified fix %v: want a storm in most seeds and a verified fix", before, set)
	}
	if set["client.retry.budget"] == nil {
		t.Fatalf("the fix %v does not set the retry budget", set)
	}
	if after, _ := stormShareOf(t, setArgs(set)...); after != 0 {
		t.Fatalf("with the printed fix %v: storm_share %v, want 0", set, after)
	}
}

// plan --constraint 'storm_share<0.01' refuses the point without a retry
// budget (a storm in every replication) and recommends the budget, which
// the cheapest-budget objective would otherwise pass over.
func TestPlanConstrainsTheStorm(t *testing.T) {
	args := []string{"plan", "fail-retry-storm", "--json", "--quiet", "--sweep", "client.retry.budget=0,0.1",
		"--objective", "min:client.retry.budget", "--replications", "3", "--allow-findings"}
	for _, c := range []struct {
		constraint []string
		want       float64
	}{{[]string{"--constraint", "storm_share<0.01"}, 0.1}, {nil, 0}} {
		code, out, errOut := cli(append(args, c.constraint...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.constraint, code, errOut)
		}
		var res planning.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if got := res.Recommended["client.retry.budget"]; got != c.want {
			t.Errorf("%v: recommended %v, want client.retry.budget %v", c.constraint, res.Recommended, c.want)
		}
	}
}
