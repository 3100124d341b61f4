package report_test

import (
	"strings"
	"testing"
)

// Requests refused at once are named where they were refused: shed load
// (a warning) when the limits admit most of what they can, critical when
// next to nothing gets through, and the limiter that refuses, far from
// its limit, reads as over its quota, not "not binding". The reference
// model sheds 41% at its client bound; a bucket of 1e-9/s that never
// waits refuses everything; the token bucket as bundled refuses nothing.
func TestRefusalsAreDiagnosed(t *testing.T) {
	const ref, bucket = "../scenarios/examples/reference-model.toml", "../scenarios/examples/token-bucket.toml"
	shed := analyzeFile(t, ref, "run.requests=20000")
	d := diagnosis(shed, "refusals")
	if d == nil || d.Severity != "warning" || !strings.Contains(d.Evidence, "by the client's bound on waiting requests (client.max_waiting)") {
		t.Fatalf("reference model: refusals %+v", d)
	}
	none := analyzeFile(t, bucket, "client.limiter.quota.max_waiting=0", "client.limiter.quota.initial_fill=0",
		"client.limiter.quota.rate=1e-9", "client.limiter.quota.burst=1")
	d = diagnosis(none, "refusals")
	if d == nil || d.Severity != "critical" || !strings.Contains(d.Evidence, "by quota's full waiting line") {
		t.Fatalf("a bucket that admits nothing: refusals %+v", d)
	}
	for _, v := range none.Verdicts {
		if v.Limiter == "quota" && (v.Verdict != "demand exceeds quota" || !strings.Contains(v.Why, "refused")) {
			t.Errorf("the refusing bucket reads %q: %s", v.Verdict, v.Why)
		}
	}
	if d := diagnosis(analyzeFile(t, bucket), "refusals"); d != nil {
		t.Errorf("the bundled token bucket refuses nothing, yet: %s", d.Evidence)
	}
}

// Requests waiting out a long acquisition timeout under steady overload
// get a line bounded at what the limiter grants in the alert line (a
// tenth of the 10 s budget): applied, the timeouts are gone, end-to-end
// p99 stays near a second instead of 8 s, and goodput holds. Arrivals in
// bursts (on 5 s, off 10 s) keep the deep line a burst needs, or the
// lull after it would go unused.
func TestLineBoundFollowsTheArrivals(t *testing.T) {
	const bucket = "../scenarios/examples/token-bucket.toml"
	steady := []string{"workload.rate=120", "client.acquire_timeout=8s"}
	before := analyzeFile(t, bucket, steady...)
	d := diagnosis(before, "acquire_timeouts")
	if d == nil || d.Fix.Set["client.limiter.quota.max_waiting"] != int64(90) {
		t.Fatalf("steady overload: fix %+v, want quota's line bounded at 90 (1 s of its 90/s)", d)
	}
	for _, more := range [][]string{nil, {"run.seed=7", "workload.rate=140"}} {
		after := analyzeFile(t, bucket, append(withFix(t, steady, d.Fix), more...)...)
		if got := diagnosis(after, "acquire_timeouts"); got != nil {
			t.Errorf("%v: the bound applied still finds %s", more, got.Evidence)
		}
		if after.RequestS.P99 > 2 || after.Throughput.GoodputRPS < 0.95*before.Throughput.GoodputRPS {
			t.Errorf("%v: p99 %.3gs, goodput %.4g/s (before %.4g/s)", more, after.RequestS.P99, after.Throughput.GoodputRPS, before.Throughput.GoodputRPS)
		}
	}
	// A ramp's rising mean is no burst; four instances each bound their
	// own line, at a quarter of what the limiter grants in all.
	for _, c := range []struct {
		sets  []string
		bound int64
	}{
		{[]string{"workload.arrival=ramp", "workload.rate=50", "workload.rate_to=300", "client.acquire_timeout=10s", "client.request_timeout=30s"}, 263},
		{[]string{"workload.rate=480", "client.instances=4", "upstream.*.quota.rate=400", "upstream.*.quota.burst=400", "client.acquire_timeout=10s", "client.request_timeout=30s"}, 270},
	} {
		d := diagnosis(analyzeFile(t, bucket, c.sets...), "acquire_timeouts")
		if d == nil {
			t.Fatalf("%v: no acquire_timeouts", c.sets)
		}
		if got, _ := d.Fix.Set["client.limiter.quota.max_waiting"].(int64); got < c.bound-3 || got > c.bound+3 {
			t.Errorf("%v: bound %v, want about %d: %s", c.sets, d.Fix.Set, c.bound, d.Fix.Text)
		}
	}
	onOff := []string{"workload.arrival=onoff", "workload.rate=400", "workload.on=5s", "workload.off=10s", "client.acquire_timeout=30s", "client.request_timeout="}
	d = diagnosis(analyzeFile(t, bucket, onOff...), "acquire_timeouts")
	if d == nil || d.Severity != "critical" {
		t.Fatalf("on/off overload: %+v", d)
	}
	if bound, _ := d.Fix.Set["client.limiter.quota.max_waiting"].(int64); bound < 1000 || !strings.Contains(d.Fix.Text, "in bursts") {
		t.Errorf("on/off arrivals: fix %+v, want the line of 0.9 of the 30 s timeout", d.Fix)
	}
}

// Memory growth's evidence does not average goodput over a collapse:
// fail-sustained-429 serves 100/s until its line of retries takes over,
// then next to nothing, and says so; fail-unbounded-waiting serves its
// 90/s throughout while the line grows, and says that.
func TestMemoryGrowthEvidenceShowsACollapse(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"fail-sustained-429", "while goodput falls from 99.93/s in the first quarter of the steady state to"},
		{"fail-unbounded-waiting", "while goodput stays at 89.95/s"},
	} {
		d := diagnosis(analyzeFile(t, "../scenarios/examples/"+c.name+".toml"), "memory_growth")
		if d == nil || !strings.Contains(d.Evidence, c.want) {
			t.Errorf("%s: memory_growth %+v, want evidence with %q", c.name, d, c.want)
		}
	}
}

// fetch_all over 200,000 URLs parks every task on the semaphore at once:
// a warning whose fix (a bounded ingest queue and as many workers as the
// semaphore's permits), applied, serves as fast with nothing parked. The
// seed's own 5,000 URLs stay under the threshold, as the article means.
func TestTaskFloodFromAFetchAllOfManyURLs(t *testing.T) {
	const path = "../scenarios/examples/fetch-all-semaphore.toml"
	if d := diagnosis(analyzeFile(t, path), "task_flood"); d != nil {
		t.Errorf("5,000 URLs: %s", d.Evidence)
	}
	many := []string{"run.requests=200000"}
	before := analyzeFile(t, path, many...)
	d := diagnosis(before, "task_flood")
	if d == nil || d.Fix.Set["client.workers"] != int64(20) {
		t.Fatalf("200,000 URLs: %+v", d)
	}
	after := analyzeFile(t, path, withFix(t, many, d.Fix)...)
	if got := diagnosis(after, "task_flood"); got != nil || after.Throughput.GoodputRPS < 0.99*before.Throughput.GoodputRPS {
		t.Errorf("the fix applied: %+v, goodput %.4g/s → %.4g/s", got, before.Throughput.GoodputRPS, after.Throughput.GoodputRPS)
	}
	for _, l := range after.Limiters {
		if l.MaxWaiting > 20 {
			t.Errorf("the fix applied: %d parked on %s", l.MaxWaiting, l.Name)
		}
	}
	// Four instances, each with its semaphore of 20: 20 workers each.
	if d := diagnosis(analyzeFile(t, path, "run.requests=200000", "client.instances=4"), "task_flood"); d == nil || d.Fix.Set["client.workers"] != int64(20) {
		t.Errorf("four instances: %+v", d)
	}
}
