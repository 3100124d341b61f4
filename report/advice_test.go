package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// The diagnoses' advice, held end to end: each case runs a scenario,
// reads the finding and, where it prints a fix, applies it and runs again.

// A line bounded at what the service clears within the acquisition
// timeout memory_growth advises fills under overload and stays full: no
// memory growth (the binding limiter's verdict says demand exceeds it).
// A bound three times as deep is "bounded but long", and its advised
// timeout, applied, clears the finding; so does it for the unbounded line.
// The token-bucket example ramps from 90/s to 130/s against 100/s, with a
// request timeout of 10 s, so the advised acquisition timeout is 1 s.
func TestMemoryGrowthSparesALineBoundedWithinTheTimeout(t *testing.T) {
	ramp := []string{"workload.arrival=ramp", "workload.rate=90", "workload.rate_to=130", "workload.ramp=177s",
		"run.duration=240s", "client.limiter.quota.rate=100", "client.limiter.quota.burst=100"}
	cases := []struct {
		name   string
		sets   []string
		growth bool
	}{
		{"bounded at 1 s of the rate", []string{"client.max_waiting=100"}, false},
		{"the same on a fresh seed", []string{"client.max_waiting=100", "run.seed=7"}, false},
		{"bounded at 3 s of the rate", []string{"client.max_waiting=300"}, true},
		{"its advised fix applied", []string{"client.max_waiting=300", "client.acquire_timeout=1s"}, false},
		{"unbounded", nil, true},
		{"the unbounded line's fix applied", []string{"client.acquire_timeout=1s"}, false},
	}
	for _, c := range cases {
		r := analyzeFile(t, "../scenarios/examples/token-bucket.toml", append(append([]string{}, ramp...), c.sets...)...)
		growth := diagnosis(r, "memory_growth")
		switch {
		case growth != nil && !c.growth:
			t.Errorf("%s: memory_growth: %s", c.name, growth.Cause)
		case growth == nil && c.growth:
			t.Errorf("%s: no memory_growth: %+v", c.name, r.Diagnoses)
		case growth != nil && growth.Fix.Set["client.acquire_timeout"] != "1s":
			t.Errorf("%s: the fix sets %v, want an acquisition timeout of 1s", c.name, growth.Fix.Set)
		}
	}
}

// Requests that time out without waiting in any line (fail-retry-storm
// with its retry budget: no client limiter, attempts abandoned at the
// attempt timeout while the upstream is slow) are not blamed on a
// limiter, and get no acquisition timeout, which cannot help them.
// (TestGoodputCollapseDiagnosedAndFixed holds the other side: timeouts
// after long waits in a limiter keep that fix, and it works.)
func TestRequestTimeoutsInFlightBlameNoLimiter(t *testing.T) {
	r := analyzeFile(t, "../scenarios/examples/fail-retry-storm.toml", "client.retry.budget=0.1")
	d := diagnosis(r, "request_timeouts")
	if d == nil {
		t.Fatalf("no request_timeouts diagnosis: %+v", r.Diagnoses)
	}
	if strings.Contains(d.Cause, "wait most of their budget") || !strings.Contains(d.Cause, "no client limiter") || !strings.Contains(d.Cause, "1s attempt timeout") {
		t.Errorf("cause %q", d.Cause)
	}
	if len(d.Fix.Set) != 0 || !strings.Contains(d.Fix.Text, "would not help") {
		t.Errorf("fix %+v: an acquisition timeout cannot help requests that never wait", d.Fix)
	}
}

// A limiter that counts cost drains its line by tokens, not requests: a
// bound on the requests waiting (what its grants per second suggest) lost
// 12% of goodput on api-llm-tokens's counting bucket and left the finding
// unfixed. Its critical acquisition timeouts get the fail-fast timeout
// instead, and applied, that clears them at the same goodput.
func TestCostLimiterTimeoutsGetAFailFastTimeout(t *testing.T) {
	counting := []string{"client.limiter.rpm.unit=cost", "client.limiter.rpm.rate=2400", "client.limiter.rpm.burst=144000",
		"client.reserve.estimate=p90", "client.reserve.fixed=659", "client.acquire_timeout=30s"}
	run := func(sets []string) *metrics.Results {
		return analyzeFile(t, "../scenarios/examples/api-llm-tokens.toml", sets...)
	}
	find := func(r *metrics.Results) *metrics.Diagnosis { return diagnosis(r, "acquire_timeouts") }
	before := run(counting)
	d := find(before)
	if d == nil || d.Severity != "critical" {
		t.Fatalf("no critical acquire_timeouts with a 30s timeout: %+v", before.Diagnoses)
	}
	timeout, ok := d.Fix.Set["client.acquire_timeout"].(string)
	if !ok || len(d.Fix.Set) != 1 || !strings.Contains(d.Fix.Text, "drains by cost") {
		t.Fatalf("fix %+v: want only a fail-fast acquisition timeout", d.Fix)
	}
	after := run(append(counting, "client.acquire_timeout="+timeout))
	d = find(after)
	if d == nil || !report.LoadShed(*d) {
		t.Fatalf("acquire_timeout=%s: want the excess shed as load shed, got %+v", timeout, d)
	}
	if strings.Contains(d.Fix.Text, "max_waiting") {
		t.Errorf("the load shed of a cost limiter still advises a bound on its line: %s", d.Fix.Text)
	}
	if g0, g1 := before.Throughput.GoodputRPS, after.Throughput.GoodputRPS; g1 < 0.95*g0 {
		t.Errorf("acquire_timeout=%s: goodput %.4g/s → %.4g/s", timeout, g0, g1)
	}
}

// analyzeText loads a scenario from its text, runs and analyses it.
func analyzeText(t *testing.T, text string, sets ...string) *metrics.Results {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return analyzeFile(t, path, sets...)
}

// analyzeFile loads the scenario at path with the overrides sets
// (KEY=VALUE), runs and analyses it. A run a guard stopped still gives
// its results.
func analyzeFile(t *testing.T, path string, sets ...string) *metrics.Results {
	t.Helper()
	var overrides []scenarios.Override
	for _, s := range sets {
		o, err := scenarios.ParseOverride(s)
		if err != nil {
			t.Fatal(err)
		}
		overrides = append(overrides, o)
	}
	sc, err := scenarios.LoadWith(path, overrides)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil && out == nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	report.Analyze(out.Results, out.Series)
	return out.Results
}

// diagnosis returns r's diagnosis of code, or nil.
func diagnosis(r *metrics.Results, code string) *metrics.Diagnosis {
	for i, d := range r.Diagnoses {
		if d.Code == code {
			return &r.Diagnoses[i]
		}
	}
	return nil
}

// A client line bounded within the timeout does not hide a backlog that
// grows elsewhere: a bucket at 450/s with 20 waiting at most feeds a
// server of 20 workers serving 400/s, whose queue (requests in flight,
// from the client) climbs by 50 a second. That is memory growth, and so
// is the same run stopped by the live-request guard.
func TestMemoryGrowthInFlightIsNotExcused(t *testing.T) {
	const serverBacklog = `name = "server-backlog"
[run]
seed = 1
duration = "120s"
warmup = "10s"
interval = "1s"
[workload]
arrival = "poisson"
rate = 500.0
[client]
request_timeout = "60s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 450.0
burst = 45
max_waiting = 20
[[upstream]]
host = "*"
latency = { dist = "constant", value = "50ms" }
workers = 20
`
	for _, sets := range [][]string{nil, {"run.max_live_requests=3000"}} {
		r := analyzeText(t, serverBacklog, sets...)
		if r.Requests.Rejected == 0 {
			t.Fatalf("%v: the client's line refused nothing: the scenario no longer bounds it", sets)
		}
		if diagnosis(r, "memory_growth") == nil {
			t.Errorf("%v: no memory_growth while the server's backlog grows: %+v", sets, r.Diagnoses)
		}
	}
}

// Request timeouts that the limiters explain keep the acquisition-timeout
// fix; those they do not (p99 waits in all under half the budget, or an
// ingest queue's wait, which the budget does not count) get the in-flight
// cause and no override.
func TestRequestTimeoutsCountOnlyTheLimitersWaits(t *testing.T) {
	const slow = `name = "slow-upstream"
[run]
seed = 1
duration = "120s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 15.0
[client]
ingest = "queue"
workers = 20
queue_capacity = 300
queue_full = "reject"
request_timeout = "2s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 100.0
burst = 100
[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "1.5s", sigma = 0.5 }
`
	r := analyzeText(t, slow)
	if r.Queue.WaitS.P99 < 1 {
		t.Fatalf("ingest queue p99 wait %v: the scenario no longer waits in its queue", r.Queue.WaitS.P99)
	}
	d := diagnosis(r, "request_timeouts")
	if d == nil {
		t.Fatalf("no request_timeouts: %+v", r.Diagnoses)
	}
	if !strings.Contains(d.Cause, "the limiters wait little") || len(d.Fix.Set) != 0 {
		t.Errorf("timeouts in flight behind an ingest queue: cause %q, fix %+v", d.Cause, d.Fix)
	}
}
