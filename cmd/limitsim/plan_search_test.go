package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// searchJSON runs `plan --json` with a search and reads its
// recommendation and warnings.
func searchJSON(t *testing.T, args ...string) (plan struct {
	Recommended map[string]float64 `json:"recommended"`
	Warnings    []string           `json:"warnings"`
	Points      []struct {
		Params map[string]float64 `json:"params"`
	} `json:"points"`
}) {
	t.Helper()
	code, out, errOut := cli(append(append([]string{"plan"}, args...), "--json", "--quiet")...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// A search of permits, a key of whole numbers, with a tolerance of half a
// permit is refused before any run (every probe between whole numbers
// would be refused and read as infeasible); with whole bounds and the
// default tolerance every probe is whole.
func TestSearchOfWholeKeyProbesWholeValues(t *testing.T) {
	base := []string{"token-bucket", "--set", "workload.rate=150", "--set", "run.duration=20s", "--set", "client.limiter.quota.rate=95",
		"--constraint", "limiters[conns].wait_s.p99<0.2", "--objective", "min:client.limiter.conns.permits"}
	code, _, errOut := cli(append([]string{"plan"}, append(base, "--search", "client.limiter.conns.permits=5:40:0.5")...)...)
	if code != exitUsage || !strings.Contains(errOut, "client.limiter.conns.permits takes whole numbers") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	plan := searchJSON(t, append(base, "--search", "client.limiter.conns.permits=5:40")...)
	for _, p := range plan.Points {
		if v := p.Params["client.limiter.conns.permits"]; v != float64(int(v)) {
			t.Errorf("probed %v permits", v)
		}
	}
	if got := plan.Recommended["client.limiter.conns.permits"]; got <= 5 || got >= 40 {
		t.Errorf("recommended %v permits: want the threshold inside the range", got)
	}
}

// With max:permits (the search's default objective) the wait constraint
// fails at the low end and holds at the high one: the search says the
// constraints hold on the other side of the threshold and recommends the
// high end, rather than "no point meets every constraint".
func TestSearchTheOtherWayRoundSaysSo(t *testing.T) {
	plan := searchJSON(t, "token-bucket", "--set", "workload.rate=150", "--set", "run.duration=20s", "--set", "client.limiter.quota.rate=95",
		"--constraint", "limiters[conns].wait_s.p99<0.2", "--search", "client.limiter.conns.permits=5:40")
	warned := strings.Join(plan.Warnings, "\n")
	if plan.Recommended["client.limiter.conns.permits"] != 40 || !strings.Contains(warned, "direction: the constraints hold at client.limiter.conns.permits=40, not at 5") ||
		!strings.Contains(warned, "min:client.limiter.conns.permits finds the threshold") || strings.Contains(warned, "edge:") {
		t.Errorf("recommended %v; warnings:\n%s", plan.Recommended, warned)
	}
}

// A search whose answer is the end it started from, with the next probe
// failing, is not "the end of the range, which holds all the way": the
// edge warning is for a far end that held.
func TestSearchEdgeWarningOnlyWhenTheFarEndHeld(t *testing.T) {
	plan := searchJSON(t, "token-bucket", "--set", "workload.rate=150", "--search", "client.limiter.quota.rate=101:150", "--constraint", "rate_429<0.01")
	if plan.Recommended["client.limiter.quota.rate"] != 101 {
		t.Fatalf("recommended %v", plan.Recommended)
	}
	if warned := strings.Join(plan.Warnings, "\n"); strings.Contains(warned, "edge:") {
		t.Errorf("warnings:\n%s", warned)
	}
	plan = searchJSON(t, "token-bucket", "--set", "workload.rate=150", "--search", "client.limiter.quota.rate=20:60", "--constraint", "rate_429<0.01")
	if warned := strings.Join(plan.Warnings, "\n"); plan.Recommended["client.limiter.quota.rate"] != 60 || !strings.Contains(warned, "edge: client.limiter.quota.rate=60 is the end of the searched range 20:60") {
		t.Errorf("recommended %v; warnings:\n%s", plan.Recommended, warned)
	}
}

// A share searched from 0 to 1 is searched to a 64th of the range, not to
// 1 (which ran only the two ends).
func TestSearchOfAShareBetweenWholeBounds(t *testing.T) {
	plan := searchJSON(t, "fail-burst-at-start", "--search", "client.limiter.bucket.initial_fill=0:1", "--constraint", "rate_429<0.01", "--allow-findings")
	got := plan.Recommended["client.limiter.bucket.initial_fill"]
	if len(plan.Points) < 6 || got <= 0 || got >= 1 {
		t.Errorf("%d points, recommended %v: want a bisection inside 0:1", len(plan.Points), got)
	}
}

// Every swept value is checked before anything runs, not only the first:
// a share swept past 1 or a permit count between whole numbers, anywhere
// in the sweep, is refused with the value named (exit 2), rather than run
// as a point that errs and shows zeros.
func TestPlanChecksEverySweptValueFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fail-burst-at-start", "--sweep", "client.limiter.bucket.initial_fill=0.5:1.5:0.5", "--allow-findings"}, "initial_fill=1.5"},
		{[]string{"token-bucket", "--sweep", "client.limiter.conns.permits=10,22.5,30"}, "permits=22.5"},
		{[]string{"token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--sweep", "client.limiter.conns.permits=40,0"}, "permits=0"},
	} {
		code, out, errOut := cli(append([]string{"plan"}, c.args...)...)
		if code != exitInvalid || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "nothing was run") || out != "" {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
}

// A search whose starting end errs (a deadlock stops the run) learns
// nothing of which side of the threshold the constraints hold on: no
// direction warning, no recommendation. A searched value the key refuses
// at either end is refused before anything runs.
func TestSearchStartThatErrsIsNotReversed(t *testing.T) {
	code, out, errOut := cli("plan", "fail-deadlock", "--search", "client.limiter.db.permits=2:8", "--constraint", "success_ratio>0.99", "--quiet")
	if code != exitOK || strings.Contains(out, "direction:") || strings.Contains(out, "recommended:") {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = cli("plan", "fail-burst-at-start", "--search", "client.limiter.bucket.initial_fill=0:1.5", "--objective", "min:client.limiter.bucket.initial_fill", "--constraint", "rate_429<0.01")
	if code != exitInvalid || !strings.Contains(errOut, "initial_fill=1.5") || out != "" {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
}
