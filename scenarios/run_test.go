package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// runSource simulates a scenario given as text.
func runSource(t *testing.T, src string) *client.Outcome {
	t.Helper()
	sc, err := Parse("scenario.toml", []byte(src))
	return mustSimulate(t, sc, err)
}

// mustSimulate simulates a scenario that loaded without error.
func mustSimulate(t *testing.T, sc *Scenario, err error) *client.Outcome {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out, err := simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runExample simulates a bundled scenario, with overrides if any.
func runExample(t *testing.T, name string, sets ...Override) *client.Outcome {
	t.Helper()
	sc, err := LoadWith("examples/"+name+".toml", sets)
	return mustSimulate(t, sc, err)
}

func limiter(t *testing.T, r *metrics.Results, name string) metrics.LimiterStats {
	t.Helper()
	for _, l := range r.Limiters {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no limiter %q", name)
	return metrics.LimiterStats{}
}

func col(t *testing.T, s *metrics.Series, name string) []float64 {
	t.Helper()
	c := s.Column(name)
	if c == nil {
		t.Fatalf("no column %q in %v", name, s.Columns)
	}
	return c
}

func rate429(r *metrics.Results) float64 {
	var a, th int64
	for _, u := range r.Upstreams {
		a += u.Attempts
		th += u.Throttled
	}
	if a == 0 {
		return 0
	}
	return float64(th) / float64(a)
}

// Every request ends in exactly one outcome, and Little's Law holds in every
// stage of a run that drains.
func checkAccounting(t *testing.T, r *metrics.Results) {
	t.Helper()
	q := r.Requests
	sum := q.Succeeded + q.Throttled429 + q.Failed + q.Rejected + q.AcquireTimeouts + q.TimedOut + q.InProgress
	if sum != q.Arrived {
		t.Errorf("outcomes add to %d, arrived %d: %+v", sum, q.Arrived, q)
	}
	if q.Rejected != q.RejectedIngest+q.RejectedLimiter {
		t.Errorf("rejections %d != ingest %d + limiter %d", q.Rejected, q.RejectedIngest, q.RejectedLimiter)
	}
	if r.Complete {
		for _, l := range r.Little {
			if l.RelError > 1e-9 {
				t.Errorf("Little's Law off in %s: L %.6g vs λW %.6g", l.Stage, l.L, l.Lambda*l.W)
			}
		}
	}
	// One 429 rate: every verdict quotes the run's, and a single host's
	// equals it.
	for _, v := range r.Verdicts {
		if v.Rate429 != r.Rate429 {
			t.Errorf("verdict %s quotes a 429 rate of %v, the run's is %v", v.Limiter, v.Rate429, r.Rate429)
		}
	}
	if len(r.Upstreams) == 1 && r.Upstreams[0].Rate429 != r.Rate429 {
		t.Errorf("the only host's 429 rate %v differs from the run's %v", r.Upstreams[0].Rate429, r.Rate429)
	}
	if r.Rate429 < 0 || r.Rate429 > 1 {
		t.Errorf("429 rate %v outside [0, 1]", r.Rate429)
	}
	for _, l := range r.Limiters {
		if l.PWait < 0 || l.PWait > 1 || (l.WaitS.Max == 0 && l.PWait != 0) {
			t.Errorf("limiter %s: p_wait %v with a longest wait of %v", l.Name, l.PWait, l.WaitS.Max)
		}
		if l.WaitGrantedS.Count > l.WaitS.Count || l.WaitGrantedS.Max > l.WaitS.Max {
			t.Errorf("limiter %s: granted-only waits %+v exceed all waits %+v", l.Name, l.WaitGrantedS, l.WaitS)
		}
	}
}

// checkIntervals: no interval counts more 429s than attempts started in it.
func checkIntervals(t *testing.T, s *metrics.Series, hosts []metrics.UpstreamStats) {
	t.Helper()
	starts, th := s.Column("starts"), s.Column("responses_429")
	for i := range starts {
		if th[i] > starts[i] {
			t.Errorf("interval %d: %v 429s for %v starts", i, th[i], starts[i])
		}
	}
	for _, h := range hosts {
		hs, hth := s.Column(h.Host+".starts"), s.Column(h.Host+".responses_429")
		for i := range hs {
			if hth[i] > hs[i] {
				t.Errorf("host %s, interval %d: %v 429s for %v starts", h.Host, i, hth[i], hs[i])
			}
		}
	}
}

func TestSeedCrawlerHealthy(t *testing.T) {
	r := runExample(t, "seed-crawler").Results
	checkAccounting(t, r)
	if r.Requests.Succeeded != 3000 || rate429(r) != 0 {
		t.Fatalf("crawler: %d ok, 429 rate %.4f; want all 3000 ok and no 429", r.Requests.Succeeded, rate429(r))
	}
	b := limiter(t, r, "bucket")
	if b.Saturation < 0.9 || r.Throughput.GoodputRPS < 85 || r.Throughput.GoodputRPS > 90.5 {
		t.Fatalf("bucket should bind at 90/s: saturation %.3f goodput %.2f", b.Saturation, r.Throughput.GoodputRPS)
	}
	if r.Queue.MaxDepth != 500 {
		t.Fatalf("bounded ingest queue peaked at %d, want its capacity 500", r.Queue.MaxDepth)
	}
}

// The seed's polling bucket and a FIFO bucket on the same arrivals and
// latencies: same throughput, but the polling one's waiters race, so its
// wait tail is longer.
func TestPollingVersusFIFOCrawler(t *testing.T) {
	poll := runExample(t, "seed-crawler").Results
	fifo := runExample(t, "seed-crawler-fifo").Results
	pw, fw := limiter(t, poll, "bucket").WaitS, limiter(t, fifo, "bucket").WaitS
	if pw.Max < 2*fw.Max || pw.P99 < 1.5*fw.P99 {
		t.Fatalf("polling wait p99 %.3fs max %.3fs vs FIFO p99 %.3fs max %.3fs: not measurably unfair", pw.P99, pw.Max, fw.P99, fw.Max)
	}
}

func TestSustained429(t *testing.T) {
	r := runExample(t, "fail-sustained-429").Results
	checkAccounting(t, r)
	if got := rate429(r); got < 0.05 {
		t.Fatalf("429 rate %.4f, want well above 1%%", got)
	}
}

func TestSharedQuota(t *testing.T) {
	r := runExample(t, "fail-shared-quota").Results
	checkAccounting(t, r)
	if got := rate429(r); got < 0.3 {
		t.Fatalf("429 rate %.3f with 10 instances at full quota, want most rejected", got)
	}
	if s := limiter(t, r, "bucket").Saturation; s > 0.2 {
		t.Fatalf("per-instance buckets should not bind (saturation %.2f)", s)
	}
	if g := r.Throughput.GoodputRPS; g < 95 || g > 101 {
		t.Fatalf("goodput %.1f/s, want pinned at the shared 100/s quota", g)
	}
}

func TestLockHeldSerialises(t *testing.T) {
	r := runExample(t, "fail-lock-held").Results
	checkAccounting(t, r)
	if g := r.Throughput.GoodputRPS; g < 230 || g > 255 {
		t.Fatalf("goodput %.1f/s, want pinned near one per 4 ms hand-over (250/s)", g)
	}
	if r.Requests.AcquireTimeouts == 0 {
		t.Fatal("no acquisition timeouts behind a serialised limiter")
	}
}

func TestUnboundedWaitingGrows(t *testing.T) {
	out := runExample(t, "fail-unbounded-waiting")
	r := out.Results
	checkAccounting(t, r)
	w := col(t, out.Series, "bucket.waiting")
	// The line grows by about 60 a second while arrivals last (120 s).
	if w[29] < 1200 || w[99] < 5000 || w[99] < 3*w[29] {
		t.Fatalf("waiting line at 30 s %.0f, at 100 s %.0f: not growing with the arrival rate", w[29], w[99])
	}
	if g := r.Throughput.GoodputRPS; g < 85 || g > 91 {
		t.Fatalf("throughput %.1f/s, want flat at the bucket's 90/s", g)
	}
}

func TestDeadlockReportsCycle(t *testing.T) {
	out := runExample(t, "fail-deadlock")
	if out.Stall == nil {
		t.Fatal("deadlock not reported")
	}
	cyc := strings.Join(out.Stall.Cycle, " → ")
	if cyc != "cache → db → cache" && cyc != "db → cache → db" {
		t.Fatalf("cycle %q", cyc)
	}
	msg := out.Stall.Error()
	for _, want := range []string{"path reads", "path writes", "deadlock cycle"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stall message lacks %q: %s", want, msg)
		}
	}
	if out.Results.Complete || out.Results.Requests.InProgress == 0 {
		t.Fatal("a deadlocked run must be marked incomplete with requests in progress")
	}
	// The stuck requests are in the wait figures, with the time they had
	// waited when the run stopped.
	var counted int64
	for _, l := range out.Results.Limiters {
		counted += l.WaitS.Count - l.WaitGrantedS.Count
		if l.WaitS.Max < 20 {
			t.Errorf("limiter %s: longest wait %v s, want the stuck requests' (over 20 s)", l.Name, l.WaitS.Max)
		}
	}
	if counted < out.Results.Requests.InProgress {
		t.Errorf("%d ungranted waits counted for %d stuck requests", counted, out.Results.Requests.InProgress)
	}
	checkAccounting(t, out.Results)
}

func TestTenantStarvation(t *testing.T) {
	r := runExample(t, "fail-tenant-starvation").Results
	checkAccounting(t, r)
	var inter metrics.TenantStats
	for _, tn := range r.Tenants {
		if tn.Name == "interactive" {
			inter = tn
		}
	}
	// 5/s is a twentieth of the bucket, yet it waits behind every batch burst.
	if inter.WaitS.P99 < 10 || inter.Share > 0.06 {
		t.Fatalf("interactive tenant: p99 wait %.2fs, admitted share %.3f", inter.WaitS.P99, inter.Share)
	}
}

func TestBurstAtStart(t *testing.T) {
	out := runExample(t, "fail-burst-at-start")
	checkAccounting(t, out.Results)
	th := col(t, out.Series, "responses_429")
	var early, late float64
	for i, v := range th {
		if i < 2 { // first second (500 ms intervals)
			early += v
		} else {
			late += v
		}
	}
	if early < 50 || late > early/4 {
		t.Fatalf("429s in the first second %v, afterwards %v: want a spike right after rollout", early, late)
	}
}

func TestThunderingHerd(t *testing.T) {
	out := runExample(t, "fail-thundering-herd")
	checkAccounting(t, out.Results)
	starts := col(t, out.Series, "starts")
	var peak, sum float64
	for _, s := range starts {
		peak = max(peak, s)
		sum += s
	}
	mean := sum / float64(len(starts))
	if peak < 5*mean {
		t.Fatalf("peak starts %v per interval vs mean %.1f: no synchronised spike", peak, mean)
	}
	if rate429(out.Results) < 0.5 {
		t.Fatalf("429 rate %.3f: the herd should keep tripping the quota", rate429(out.Results))
	}
}

// Jitter on resume breaks the herd: same arrivals, far fewer 429s.
func TestResumeJitterBreaksHerd(t *testing.T) {
	sc, err := Load("examples/fail-thundering-herd.toml")
	if err != nil {
		t.Fatal(err)
	}
	herd, _ := simulate(sc)
	sc.Client.On429.ResumeJitter, _ = parseJitter("5s", true)
	fixed, _ := simulate(sc)
	if a, b := rate429(herd.Results), rate429(fixed.Results); b > a/10 {
		t.Fatalf("429 rate with jitter %.3f vs without %.3f", b, a)
	}
}

func TestPatterns(t *testing.T) {
	for _, name := range []string{"fetch-all-semaphore", "token-bucket", "sliding-window", "composed-limits", "handling-429"} {
		t.Run(name, func(t *testing.T) {
			out := runExample(t, name)
			r := out.Results
			checkAccounting(t, r)
			if !r.Complete {
				t.Fatalf("incomplete: %s", r.Stop)
			}
			switch name {
			case "fetch-all-semaphore":
				// Little: 20 in flight at ~226 ms mean latency → ~88/s.
				if r.InFlight.Max != 20 || r.Throughput.GoodputRPS < 80 {
					t.Fatalf("in flight peak %d, goodput %.1f", r.InFlight.Max, r.Throughput.GoodputRPS)
				}
				if l := limiter(t, r, "limit"); l.MaxWaiting < 4900 {
					t.Fatalf("the whole backlog should wait on the semaphore: peak %d", l.MaxWaiting)
				}
			case "token-bucket", "sliding-window", "composed-limits":
				if rate429(r) != 0 || r.Requests.Succeeded == 0 {
					t.Fatalf("429 rate %v, ok %d", rate429(r), r.Requests.Succeeded)
				}
			case "handling-429":
				if r.Requests.Throttled429 > r.Requests.Arrived/100 || r.Requests.Retries == 0 {
					t.Fatalf("retries %d should recover nearly every 429 (final 429s %d)", r.Requests.Retries, r.Requests.Throttled429)
				}
			}
		})
	}
}

func TestDeterministicJSON(t *testing.T) {
	render := func(seed uint64) string {
		sc, err := Load("examples/composed-limits.toml")
		if err != nil {
			t.Fatal(err)
		}
		sc.Run.Seed = seed
		out, err := simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		metrics.WriteJSON(&b, out.Results)
		out.Series.WriteCSV(&b)
		return b.String()
	}
	a, b, c := render(1), render(1), render(2)
	if a != b {
		t.Fatal("same scenario and seed gave different bytes")
	}
	if a == c {
		t.Fatal("different seeds gave identical output")
	}
}

func TestReplicationsConfidence(t *testing.T) {
	sc, err := Load("examples/token-bucket.toml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Run.Replications = 5
	out, err := simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	rp := out.Results.Replications
	if rp == nil || rp.N != 5 || rp.GoodputRPS.CI95 <= 0 || rp.GoodputRPS.Min == rp.GoodputRPS.Max {
		t.Fatalf("replications %+v", rp)
	}
	// Offered 80/s: the mean goodput over replications brackets it.
	if g := rp.GoodputRPS; g.Mean-3*g.CI95 > 80 || g.Mean+3*g.CI95 < 80 {
		t.Fatalf("goodput %.2f ± %.2f does not cover the offered 80/s", g.Mean, g.CI95)
	}
}

// Each failure-mode scenario is diagnosed as its row of the seed's table;
// the healthy ones raise no critical diagnosis.
func TestDiagnoses(t *testing.T) {
	want := map[string]string{
		"fail-sustained-429":     "sustained_429",
		"fail-shared-quota":      "sustained_429",
		"fail-lock-held":         "serialised",
		"fail-unbounded-waiting": "memory_growth",
		"fail-deadlock":          "deadlock",
		"fail-tenant-starvation": "tenant_starvation",
		"fail-burst-at-start":    "burst_at_start",
		"fail-thundering-herd":   "thundering_herd",
		"fail-retry-storm":       "retry_storm",
		"seed-crawler":           "",
		"seed-crawler-fifo":      "",
		"token-bucket":           "",
		"sliding-window":         "",
		"composed-limits":        "",
		"handling-429":           "sustained_429",
		"fetch-all-semaphore":    "",
	}
	for name, code := range want {
		t.Run(name, func(t *testing.T) {
			r := runExample(t, name).Results
			var codes []string
			for _, d := range r.Diagnoses {
				codes = append(codes, d.Code)
				if code == "" {
					t.Errorf("healthy scenario diagnosed %s: %s", d.Code, d.Evidence)
				}
			}
			if code != "" && !strings.Contains(strings.Join(codes, ","), code) {
				t.Fatalf("diagnoses %v, want %s", codes, code)
			}
			if len(r.Verdicts) != len(r.Limiters) {
				t.Fatalf("%d verdicts for %d limiters", len(r.Verdicts), len(r.Limiters))
			}
		})
	}
}

// Each diagnosis names the numbers behind it and a fix made concrete for
// the scenario: the rate to set, the tenant that starves, the stuck
// requests.
func TestDiagnosesAreConcrete(t *testing.T) {
	find := func(name, code string) metrics.Diagnosis {
		t.Helper()
		for _, d := range runExample(t, name).Results.Diagnoses {
			if d.Code == code {
				return d
			}
		}
		t.Fatalf("%s: no %s diagnosis", name, code)
		return metrics.Diagnosis{}
	}
	cases := []struct {
		name, code string
		want       []string // in title, evidence, cause or fix
	}{
		{"fail-shared-quota", "sustained_429", []string{"10 instances", "set bucket to 9/s = quota 100/s × 0.9 ÷ 10 instances"}},
		{"fail-sustained-429", "sustained_429", []string{"bucket at 130/s against 100/s", "set bucket to 90/s = quota 100/s × 0.9"}},
		{"handling-429", "sustained_429", []string{"429s do the limiting: no client-side rate limiter", "token bucket \"rate\" at 90/s"}},
		{"fail-tenant-starvation", "tenant_starvation", []string{"Tenant interactive starves behind batch", "3.5% of the requests", "Jain's index", "per_tenant with scope = \"tenant\" at 80.3/s each (the 90/s shared allows, less the 4.83/s the 1 light tenant(s) ask"}},
		{"fail-tenant-starvation", "acquire_timeouts", []string{"6,431 requests (26%)", "limiter shared"}},
		{"fail-deadlock", "deadlock", []string{"1,208 requests stuck", "last request completed by", "cache and db"}},
	}
	for _, c := range cases {
		d := find(c.name, c.code)
		text := strings.Join([]string{d.Title, d.Evidence, d.Cause, d.Fix.Text}, " | ")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s lacks %q:\n%s", c.name, c.code, w, text)
			}
		}
	}
	for _, v := range runExample(t, "fail-deadlock").Results.Verdicts {
		if v.Verdict != "deadlocked" {
			t.Errorf("limiter %s in the deadlock reads %q", v.Limiter, v.Verdict)
		}
	}
}

// Every bundled scenario: outcomes add up, one 429 rate everywhere, waits
// and p_wait within their bounds, and no interval with more 429s than
// starts (the herd and shared-quota runs once showed 205%).
func TestEveryExampleIsConsistent(t *testing.T) {
	exs, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		t.Run(ex.Name, func(t *testing.T) {
			out := runExample(t, ex.Name)
			checkAccounting(t, out.Results)
			checkIntervals(t, out.Series, out.Results.Upstreams)
			checkFailedColumn(t, out.Series, out.Results.Requests.Failed)
		})
	}
}

// checkFailedColumn: the failed column counts each failed request once,
// in the interval it ended in, so it sums to requests.failed.
func checkFailedColumn(t *testing.T, s *metrics.Series, failed int64) {
	t.Helper()
	var sum float64
	for _, v := range s.Column("failed") {
		sum += v
	}
	if sum != float64(failed) {
		t.Errorf("the failed column sums to %v, requests.failed is %d", sum, failed)
	}
}

// Applying a diagnosis's own fix (its fix.set overrides) to the bundled
// scenario clears that diagnosis. Fixes no change of keys can make carry
// no overrides and say what to do instead.
func TestDiagnosisFixesClear(t *testing.T) {
	noOverride := map[string]bool{"deadlock": true, "acquire_timeouts": true, "lock_order": true, "acquire_order": true, "refusals": true}
	exs, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, ex := range exs {
		out := runExample(t, ex.Name)
		for _, d := range out.Results.Diagnoses {
			if len(d.Fix.Set) == 0 {
				if !noOverride[d.Code] {
					t.Errorf("%s: %s has no overrides and does not say why: %s", ex.Name, d.Code, d.Fix.Text)
				}
				continue
			}
			var ovs []Override
			for k, v := range d.Fix.Set {
				ovs = append(ovs, Override{Key: k, Value: v})
			}
			sc, err := ParseWith("examples/"+ex.Name+".toml", ex.Source, ovs)
			if err != nil {
				t.Errorf("%s: the fix of %s does not load: %v", ex.Name, d.Code, err)
				continue
			}
			fixed, err := simulate(sc)
			if err != nil {
				t.Fatal(err)
			}
			applied++
			for _, d2 := range fixed.Results.Diagnoses {
				if d2.Code == d.Code {
					t.Errorf("%s: after %v, still %s: %s", ex.Name, d.Fix.Set, d.Code, d2.Evidence)
				}
			}
		}
	}
	if applied < 5 {
		t.Fatalf("only %d fixes applied", applied)
	}
}

// A diagnosis's fix names a limiter whose name holds a dot in brackets,
// which --set reads whole: applied, it loads and clears the diagnosis.
func TestDiagnosisFixNamesDottedLimiters(t *testing.T) {
	for _, name := range []string{"fail-sustained-429", "fail-burst-at-start"} {
		src, err := bundled.ReadFile("examples/" + name + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		src = []byte(strings.Replace(string(src), `name = "bucket"`, `name = "bucket.v2"`, 1))
		sc0, err := Parse(name+".toml", src)
		out := mustSimulate(t, sc0, err)
		fixes := 0
		for _, d := range out.Results.Diagnoses {
			if len(d.Fix.Set) == 0 {
				continue
			}
			var ovs []Override
			for k, v := range d.Fix.Set {
				if strings.Contains(k, "bucket") && !strings.Contains(k, "[bucket.v2]") {
					t.Errorf("%s: %s names the limiter as %s", name, d.Code, k)
				}
				ovs = append(ovs, Override{Key: k, Value: v})
			}
			sc, err := ParseWith(name+".toml", src, ovs)
			if err != nil {
				t.Fatalf("%s: the fix of %s does not load: %v", name, d.Code, err)
			}
			fixed := mustSimulate(t, sc, nil)
			for _, d2 := range fixed.Results.Diagnoses {
				if d2.Code == d.Code {
					t.Errorf("%s: after %v, still %s", name, d.Fix.Set, d.Code)
				}
			}
			fixes++
		}
		if fixes == 0 {
			t.Errorf("%s: no fix with overrides", name)
		}
	}
}

// The shared-quota fix alone leaves 300/s offered against 90/s admitted:
// a FIFO line then grants requests near the end of their budget, which
// time out in flight and goodput collapses. That is diagnosed, and the
// diagnosis's own fix (fail fast) brings goodput back to the limit.
func TestGoodputCollapseDiagnosedAndFixed(t *testing.T) {
	src, err := ExampleSource("fail-shared-quota")
	if err != nil {
		t.Fatal(err)
	}
	base := []Override{{Key: "client.limiter.bucket.rate", Value: 9.0}, {Key: "client.limiter.bucket.burst", Value: 9.0}}
	run := func(ovs []Override) *metrics.Results {
		sc, err := ParseWith("fail-shared-quota.toml", src, ovs)
		if err != nil {
			t.Fatal(err)
		}
		out, err := simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		return out.Results
	}
	r := run(base)
	var fix metrics.Fix
	for _, d := range r.Diagnoses {
		if d.Code == "request_timeouts" {
			fix = d.Fix
		}
	}
	if fix.Set == nil || r.Throughput.GoodputRPS > 20 {
		t.Fatalf("goodput %.3g/s with no request_timeouts diagnosis: %+v", r.Throughput.GoodputRPS, r.Diagnoses)
	}
	for k, v := range fix.Set {
		base = append(base, Override{Key: k, Value: v})
	}
	if fixed := run(base); fixed.Throughput.GoodputRPS < 85 {
		t.Fatalf("after %v goodput is %.3g/s, want near the 90/s the buckets admit", fix.Set, fixed.Throughput.GoodputRPS)
	}
}

// The AIMD limiter of adaptive-aimd follows a quota that moves (100/s, 40/s
// from 60 s, 100/s from 180 s): within 5 s of the cut it is below 1.2× the
// new quota, within 20 s of the restore above 0.8× it; once settled, its
// time-average limit is within ±25% of each quota and the admitted rate
// within ±15%, with 429s on under 2% of attempts.
func TestAIMDFollowsAMovingQuota(t *testing.T) {
	sc, err := Load("examples/adaptive-aimd.toml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Series
	tt, limit, starts, r429 := s.Column("t_s"), s.Column("adaptive.limit"), s.Column("starts"), s.Column("responses_429")
	if limit == nil {
		t.Fatal("timeseries.csv has no adaptive.limit column")
	}
	window := func(from, to float64) (lim, rate, share429 float64) {
		var n, st, th float64
		for k, ts := range tt {
			if ts > from && ts <= to {
				lim += limit[k]
				st += starts[k]
				th += r429[k]
				n++
			}
		}
		return lim / n, st / n, th / max(1, st)
	}
	for _, c := range []struct{ from, to, quota float64 }{{20, 60, 100}, {70, 180, 40}, {200, 300, 100}} {
		lim, rate, share := window(c.from, c.to)
		if math.Abs(lim-c.quota) > 0.25*c.quota || math.Abs(rate-c.quota) > 0.15*c.quota || share > 0.02 {
			t.Errorf("%v–%vs (quota %v/s): mean limit %.1f/s, started %.1f/s, 429s on %.1f%% of attempts", c.from, c.to, c.quota, lim, rate, 100*share)
		}
	}
	settled := func(from, to float64, ok func(float64) bool) bool {
		for k, ts := range tt {
			if ts > from && ts <= to && ok(limit[k]) {
				return true
			}
		}
		return false
	}
	if !settled(60, 65, func(v float64) bool { return v < 1.2*40 }) {
		t.Error("the limit did not come down below 48/s within 5 s of the cut to 40/s")
	}
	if !settled(180, 200, func(v float64) bool { return v > 0.8*100 }) {
		t.Error("the limit did not climb above 80/s within 20 s of the restore to 100/s")
	}
	// metrics.json says the same: settled within 5 s and 20 s, each mean
	// within ±25% of its quota, a sawtooth narrower than the quota.
	a := out.Results.Limiters[0].Adaptation
	if a == nil || len(a.Changes) != 2 {
		t.Fatalf("adaptation %+v, want two quota changes", a)
	}
	for k, c := range a.Changes {
		limit := []float64{5, 20}[k]
		if c.SettleS == nil || *c.SettleS > limit || math.Abs(c.LimitMean-c.QuotaRPS) > 0.25*c.QuotaRPS || c.Oscillation > 1 {
			t.Errorf("change at %vs to %v/s: settled after %v s (want ≤ %v), mean %.1f, oscillation %.2f", c.AtS, c.QuotaRPS, c.SettleS, limit, c.LimitMean, c.Oscillation)
		}
	}
}

// A retry budget of 10% holds the thundering herd's retries to a tenth of
// its requests (12,470 retries of 4,826 requests without it), counting
// the refused ones, and so cuts the load it puts on the upstream.
func TestRetryBudgetCapsRetries(t *testing.T) {
	run := func(sets ...Override) *client.Outcome { return runExample(t, "fail-thundering-herd", sets...) }
	free := run().Results.Requests
	capped := run(Override{Key: "client.retry.budget", Value: 0.1}).Results.Requests
	if free.Retries < free.Arrived {
		t.Fatalf("the herd retries %d times for %d requests: not the storm this test needs", free.Retries, free.Arrived)
	}
	// The budget counts per window, so allow one window's slack of 10%.
	if limit := 0.1*float64(capped.Arrived) + 0.1*float64(capped.Arrived)/6; float64(capped.Retries) > limit {
		t.Errorf("%d retries for %d requests with a 10%% budget, want at most %.0f", capped.Retries, capped.Arrived, limit)
	}
	if capped.RetriesDenied == 0 || free.RetriesDenied != 0 {
		t.Errorf("retries denied: %d with the budget, %d without", capped.RetriesDenied, free.RetriesDenied)
	}
	if capped.Attempts >= free.Attempts/2 {
		t.Errorf("%d attempts with the budget against %d without: the budget did not cut the load", capped.Attempts, free.Attempts)
	}
}

// One limit shared through the store lets four instances with uneven
// traffic (70/10/10/10) use all of it: goodput at the cluster limit of
// 90/s, where dividing it statically (22.5/s each) wastes a quarter. A
// failing store that fails open admits past the limit and the quota
// answers 429s; one that fails closed keeps the limit.
func TestClusterLimitSharedAcrossInstances(t *testing.T) {
	run := func(sets ...Override) *client.Outcome { return runExample(t, "cluster-shared-limit", sets...) }
	shared := run().Results
	static := run(Override{Key: "client.limiter.shared.scope", Value: "global"}, Override{Key: "client.limiter.shared.rate", Value: 22.5},
		Override{Key: "client.limiter.shared.burst", Value: int64(23)}, Override{Key: "client.limiter.shared.store_rtt"},
		Override{Key: "client.limiter.shared.store_errors"}, Override{Key: "client.limiter.shared.on_store_error"}).Results
	open := run(Override{Key: "client.limiter.shared.store_errors", Value: 0.3}).Results
	closed := run(Override{Key: "client.limiter.shared.store_errors", Value: 0.3}, Override{Key: "client.limiter.shared.on_store_error", Value: "deny"}).Results
	if g := shared.Throughput.GoodputRPS; math.Abs(g-90) > 0.05*90 || shared.Rate429 > 0 {
		t.Errorf("shared limit: goodput %.1f/s, 429 rate %.3f; want 90/s ± 5%% and none", g, shared.Rate429)
	}
	if g := static.Throughput.GoodputRPS; g > 0.8*shared.Throughput.GoodputRPS {
		t.Errorf("static division: goodput %.1f/s, want well below the shared limit's %.1f/s", g, shared.Throughput.GoodputRPS)
	}
	if open.Rate429 < 0.1 || open.Throughput.StartedRPS <= 100 {
		t.Errorf("fail open: started %.1f/s with 429 rate %.3f; want past the 100/s quota, answered with 429s", open.Throughput.StartedRPS, open.Rate429)
	}
	if closed.Rate429 > 0 || closed.Throughput.StartedRPS > 91 {
		t.Errorf("fail closed: started %.1f/s with 429 rate %.3f; want the limit held", closed.Throughput.StartedRPS, closed.Rate429)
	}
	if len(shared.PerInstance) != 4 || shared.PerInstance[0].Succeeded < 5*shared.PerInstance[1].Succeeded {
		t.Errorf("per instance %+v: the busy instance should get most of the shared limit", shared.PerInstance)
	}
	// A local copy synced every 100 ms holds the limit with a call per
	// instance and interval (4 × 10/s over about 102 s) instead of one per
	// attempt; synced every 5 s, the stale copies admit over the quota.
	synced := run(Override{Key: "client.limiter.shared.sync_interval", Value: "100ms"}).Results
	stale := run(Override{Key: "client.limiter.shared.sync_interval", Value: "5s"}).Results
	if g := synced.Throughput.GoodputRPS; math.Abs(g-90) > 0.05*90 || synced.Rate429 > 0 {
		t.Errorf("synced every 100 ms: goodput %.1f/s, 429 rate %.3f; want 90/s ± 5%% and none", g, synced.Rate429)
	}
	direct, cached := shared.Limiters[0].Store, synced.Limiters[0].Store
	if direct == nil || cached == nil || cached.Calls > 4*10*125 || direct.Calls < 100*cached.Calls {
		t.Errorf("store calls: %+v direct, %+v synced every 100 ms; want about 4 × 10 per second synced, and far more direct", direct, cached)
	}
	if stale.Rate429 < 0.005 {
		t.Errorf("synced every 5 s: 429 rate %.4f; stale copies should overshoot the quota", stale.Rate429)
	}
	// The static division is diagnosed (a quarter of the limit wasted) and
	// the diagnosis's own fix, one shared limit, clears it; with traffic
	// spread evenly the same division wastes nothing and is not diagnosed.
	var split *metrics.Diagnosis
	for i, d := range static.Diagnoses {
		if d.Code == "static_split_wastes_quota" {
			split = &static.Diagnoses[i]
		}
	}
	if split == nil {
		t.Fatalf("static division with a 70/10/10/10 split: no static_split_wastes_quota in %v", static.Diagnoses)
	}
	if !strings.Contains(split.Evidence, "22.7/s (25% of the limit)") {
		t.Errorf("evidence %q: want the 22.5/s the quiet instances leave (less their 15/s), a quarter of 90/s", split.Evidence)
	}
	fix := []Override{{Key: "client.limiter.shared.scope", Value: "global"}, {Key: "client.limiter.shared.rate", Value: 22.5},
		{Key: "client.limiter.shared.burst", Value: int64(23)}}
	for k, v := range split.Fix.Set {
		fix = append(fix, Override{Key: k, Value: v})
	}
	fixed := run(fix...).Results
	if hasCode(fixed.Diagnoses, "static_split_wastes_quota") || fixed.Throughput.GoodputRPS < 0.95*90 {
		t.Errorf("after the fix %v: goodput %.1f/s, diagnoses %v; want the shared limit's 90/s and the diagnosis gone", split.Fix.Set, fixed.Throughput.GoodputRPS, fixed.Diagnoses)
	}
	even := run(Override{Key: "client.instance_weights"}, Override{Key: "client.limiter.shared.scope", Value: "global"},
		Override{Key: "client.limiter.shared.rate", Value: 22.5}, Override{Key: "client.limiter.shared.burst", Value: int64(23)},
		Override{Key: "client.limiter.shared.store_rtt"}).Results
	if hasCode(even.Diagnoses, "static_split_wastes_quota") || hasCode(shared.Diagnoses, "static_split_wastes_quota") {
		t.Errorf("an even split or a shared limit diagnosed as a wasteful split: %v, %v", even.Diagnoses, shared.Diagnoses)
	}
	if g := even.Throughput.GoodputRPS; g < 0.95*90 {
		t.Errorf("static division with an even split: goodput %.1f/s, want 90/s", g)
	}
}

func hasCode(ds []metrics.Diagnosis, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// Vegas finds the server's knee from latency alone: with 20 server workers
// (median 50 ms) and 500/s offered, it keeps 20–45 in flight (its probes,
// which forget the least latency, let it creep above the knee), goodput at
// the server's capacity (20 ÷ 52.3 ms ≈ 382/s) and latency under twice the
// bare service time, where a semaphore of 100 queues 80 at the server and
// quadruples the latency for the same goodput.
func TestVegasFindsTheServersKnee(t *testing.T) {
	r := runExample(t, "adaptive-vegas").Results
	capacity := 20 / (0.05 * math.Exp(0.3*0.3/2))
	u := r.Upstreams[0]
	if g := r.Throughput.GoodputRPS; g < 0.95*capacity {
		t.Errorf("goodput %.1f/s, want at least 95%% of the server's %.1f/s", g, capacity)
	}
	if m := r.InFlight.Mean; m < 20 || m > 45 {
		t.Errorf("%.1f in flight on average, want 20–45 (the server's 20 workers and a short queue)", m)
	}
	if u.LatencyS.P50 > 2*u.ServiceS.P50 {
		t.Errorf("latency p50 %.3fs against service %.3fs: Vegas let a queue build at the server", u.LatencyS.P50, u.ServiceS.P50)
	}
	wide := runExample(t, "adaptive-vegas", Override{Key: "client.limiter.conc.kind", Value: "semaphore"},
		Override{Key: "client.limiter.conc.permits", Value: int64(100)}, Override{Key: "client.limiter.conc.initial"},
		Override{Key: "client.limiter.conc.min"}, Override{Key: "client.limiter.conc.max"}).Results
	if w := wide.Upstreams[0]; w.LatencyS.P50 < 3*w.ServiceS.P50 {
		t.Errorf("a semaphore of 100: latency p50 %.3fs against service %.3fs; the comparison needs the server queue", w.LatencyS.P50, w.ServiceS.P50)
	}
	if lim := r.Limiters[0]; lim.Adaptation == nil || lim.Adaptation.LimitMean < 20 || lim.Adaptation.LimitMean > 45 {
		t.Errorf("adaptation %+v: the limit should settle at 20–45 permits", lim.Adaptation)
	}
}

// aimd_concurrency finds a concurrency quota it cannot see: the server
// admits 20 requests at once and answers 429 beyond; the limit saws just
// under it (halving from about 20 to 10 and climbing back), so in flight
// stays within the quota and most answers succeed.
func TestAIMDConcurrencyFindsAConcurrencyQuota(t *testing.T) {
	src := `name = "aimd-conc"
[run]
seed = 1
duration = "120s"
warmup = "20s"
[workload]
arrival = "poisson"
rate = 400.0
[client]
acquire_timeout = "1s"
[[client.limiter]]
name = "conc"
kind = "aimd_concurrency"
initial = 5.0
max = 100.0
increase = 1.0
interval = "200ms"
[client.on_429]
pause = "none"
[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "50ms", sigma = 0.3 }
quota = { kind = "concurrency", permits = 20 }
reject_latency = "5ms"
`
	r := runSource(t, src).Results
	a := r.Limiters[0].Adaptation
	if a == nil || a.LimitMean < 10 || a.LimitMean > 22 || a.LimitMax > 30 {
		t.Fatalf("adaptation %+v: the limit should saw between about 10 and 21 permits", a)
	}
	if r.Rate429 > 0.05 || r.InFlight.Mean > 20 {
		t.Errorf("429 rate %.3f, %.1f in flight: the limit should stay within the 20-permit quota", r.Rate429, r.InFlight.Mean)
	}
	if g := r.Throughput.GoodputRPS; g < 0.6*20/0.052 {
		t.Errorf("goodput %.1f/s, want at least 60%% of the quota's %.0f/s", g, 20/0.052)
	}
}

// SRE throttling on the moving quota of adaptive-aimd: it never queues, and
// it sheds locally so the client sends min(offered, k × accepted), k = 2,
// in every phase: the share of attempts answered 429 is (sent − quota) ÷
// sent within ±0.1 — a third at 100/s of 150/s offered, a half at 40/s —
// and goodput is the quota, before and after each change.
func TestSREThrottleTracksTheQuota(t *testing.T) {
	out := runExample(t, "adaptive-aimd", Override{Key: "client.limiter.adaptive.kind", Value: "sre_throttle"},
		Override{Key: "client.limiter.adaptive.k", Value: 2.0}, Override{Key: "client.limiter.adaptive.window", Value: "20s"},
		Override{Key: "client.limiter.adaptive.burst"}, Override{Key: "client.limiter.adaptive.initial"},
		Override{Key: "client.limiter.adaptive.min"}, Override{Key: "client.limiter.adaptive.max"},
		Override{Key: "client.limiter.adaptive.increase"}, Override{Key: "client.limiter.adaptive.interval"},
		Override{Key: "client.limiter.adaptive.decrease"})
	s := out.Series
	tt, starts, r429, ok := s.Column("t_s"), s.Column("starts"), s.Column("responses_429"), s.Column("succeeded")
	for _, c := range []struct{ from, to, quota float64 }{{40, 60, 100}, {100, 180, 40}, {220, 300, 100}} {
		var st, th, good, n float64
		for k, ts := range tt {
			if ts > c.from && ts <= c.to {
				st, th, good, n = st+starts[k], th+r429[k], good+ok[k], n+1
			}
		}
		share := th / st
		sent := math.Min(150, 2*c.quota)
		want := (sent - c.quota) / sent
		if math.Abs(share-want) > 0.1 || math.Abs(good/n-c.quota) > 0.15*c.quota {
			t.Errorf("%v–%vs (quota %v/s): 429s on %.0f%% of attempts, goodput %.1f/s; want %.0f%% and the quota", c.from, c.to, c.quota, 100*share, good/n, 100*want)
		}
	}
	if lim := out.Results.Limiters[0]; lim.WaitS.P99 > 0 {
		t.Errorf("the throttle made callers wait (p99 %v s): it only sheds", lim.WaitS.P99)
	}
}

// gRPC-style retry throttling stops the herd's retry storm once 429s
// outnumber successes: with 10 tokens (retries only above 5) and 0.1 back
// per success, the retries fall to a small share of the requests, and the
// refusals are counted.
func TestRetryTokensThrottleRetries(t *testing.T) {
	free := runExample(t, "fail-thundering-herd").Results.Requests
	tok := runExample(t, "fail-thundering-herd", Override{Key: "client.retry.tokens", Value: 10.0}).Results.Requests
	if tok.Retries > free.Retries/5 || tok.RetriesDenied == 0 {
		t.Errorf("retries %d (denied %d) with retry tokens, against %d without: want at most a fifth", tok.Retries, tok.RetriesDenied, free.Retries)
	}
}

// A client that reads X-RateLimit-Remaining and waits out the reset at
// zero (checking again just before each send) reaches almost no 429s
// against a window quota it overruns two to one, where a client blind to
// the headers has about half its requests refused (0.6% against 52%), and
// more of its requests succeed (695 against 600): refused attempts no
// longer burn the window.
func TestHeaderAwareClientAvoids429s(t *testing.T) {
	src := `name = "headers"
[run]
seed = 1
duration = "120s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 10.0
[client]
request_timeout = "20s"
%s
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 2
[client.on_429]
pause = "none"
pause_check = "send"
[[upstream]]
host = "*"
latency = { dist = "constant", value = "50ms" }
quota = { kind = "fixed_window", limit = 50, window = "10s" }
reject_latency = "5ms"
`
	run := func(extra string) *client.Outcome { return runSource(t, fmt.Sprintf(src, extra)) }
	blind := run("").Results
	aware := run("[client.headers]\npause_at_zero = true").Results
	if blind.Rate429 < 0.3 {
		t.Fatalf("header-blind client: 429 rate %.3f; the quota should refuse about half", blind.Rate429)
	}
	t.Logf("429 rate: blind %.3f, aware %.3f (%d pauses); succeeded %d, %d", blind.Rate429, aware.Rate429, aware.Upstreams[0].Pauses, blind.Requests.Succeeded, aware.Requests.Succeeded)
	if aware.Rate429 > 0.02 || aware.Upstreams[0].Pauses == 0 {
		t.Errorf("header-aware client: 429 rate %.3f with %d pauses; want under 2%% by waiting out each reset", aware.Rate429, aware.Upstreams[0].Pauses)
	}
	if aware.Requests.Succeeded < blind.Requests.Succeeded-10 {
		t.Errorf("header-aware client succeeded %d times against %d: waiting should cost no goodput", aware.Requests.Succeeded, blind.Requests.Succeeded)
	}
}

// A slower upstream is not a queue: while the median latency doubles (40–80
// s; the server keeps its 20 workers, so its capacity halves to about
// 190/s), Gradient2 holds near the 20 workers and the server's capacity;
// Vegas without probing takes the slowdown for queueing and stays near 9
// in flight (goodput halved) until it ends; Vegas with Netflix's probing
// recovers within the slowdown.
func TestLatencyLimitersUnderADegradedUpstream(t *testing.T) {
	// phase returns the mean of a column over the intervals ending in (from, to] seconds.
	phase := func(out *client.Outcome, name string, from, to float64) float64 {
		ts, c := col(t, out.Series, "t_s"), col(t, out.Series, name)
		var sum float64
		var n int
		for i := range ts {
			if ts[i] > from && ts[i] <= to {
				sum += c[i]
				n++
			}
		}
		return sum / float64(max(1, n))
	}
	capacity := 20 / (0.1 * math.Exp(0.3*0.3/2)) // the slow phase's: workers ÷ mean service
	g2 := runExample(t, "adaptive-degraded")
	if l := phase(g2, "conc.limit", 50, 80); l < 15 || l > 30 {
		t.Errorf("gradient2 in the slowdown: limit %.1f, want 15–30 (the server's 20 workers)", l)
	}
	if s := phase(g2, "succeeded", 50, 80); s < 0.9*capacity {
		t.Errorf("gradient2 in the slowdown: %.1f/s succeeded, want at least 90%% of the server's %.0f/s", s, capacity)
	}
	stuck := runExample(t, "adaptive-degraded", Override{Key: "client.limiter.conc.kind", Value: "vegas"},
		Override{Key: "client.limiter.conc.probe", Value: 0.0})
	if l := phase(stuck, "conc.limit", 50, 80); l > 12 {
		t.Errorf("vegas without probing in the slowdown: limit %.1f, want it stuck near 9", l)
	}
	if s := phase(stuck, "succeeded", 50, 80); s > 0.6*capacity {
		t.Errorf("vegas without probing in the slowdown: %.1f/s succeeded, want well under the server's %.0f/s", s, capacity)
	}
	if l := phase(stuck, "conc.limit", 90, 120); l < 18 {
		t.Errorf("vegas without probing after the slowdown: limit %.1f, want it back near 20", l)
	}
	probing := runExample(t, "adaptive-degraded", Override{Key: "client.limiter.conc.kind", Value: "vegas"})
	if l := phase(probing, "conc.limit", 60, 80); l < 18 {
		t.Errorf("vegas with probing late in the slowdown: limit %.1f, want it recovered to about 20", l)
	}
}

// Pacing on the rate-limit headers: against a window of 100 per 10 s
// overrun two to one, a client that spreads the window's last 50 requests
// until its reset (slow_below = 50) gets at most half the 429s of one that
// only pauses at zero, with the same goodput (the quota's 10/s).
func TestSlowBelowPacesTheWindowsLastRequests(t *testing.T) {
	src := `name = "paced"
[run]
seed = 1
duration = "120s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 20.0
[client]
acquire_timeout = "30s"
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 50
[client.on_429]
pause = "host"
pause_check = "send"
[client.headers]
pause_at_zero = true
[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "100ms", sigma = 0.3 }
quota = { kind = "fixed_window", limit = 100, window = "10s" }
retry_after = "reset"
`
	run := func(sets ...Override) *metrics.Results {
		sc, err := ParseWith("paced.toml", []byte(src), sets)
		return mustSimulate(t, sc, err).Results
	}
	zero, paced := run(), run(Override{Key: "client.headers.slow_below", Value: int64(50)})
	if zero.Requests.Throttled429 < 20 || paced.Requests.Throttled429*2 > zero.Requests.Throttled429 {
		t.Errorf("429s: %d pausing at zero, %d pacing below 50; want pacing to halve them at least", zero.Requests.Throttled429, paced.Requests.Throttled429)
	}
	if g := paced.Throughput.GoodputRPS; g < 9.5 || g > 10.6 {
		t.Errorf("paced goodput %.2f/s, want the quota's 10/s", g)
	}
}

// An hourly quota spent before the hour is out is diagnosed as such, not
// as memory growth or timeouts (the requests pile up behind the reset, not
// in a limiter's line); a client blind to the headers that does not pause
// has a third of its attempts refused; the diagnosis's fix holds the
// client to the quota without a single pause.
func TestHourlyQuotaExhausted(t *testing.T) {
	base := runExample(t, "api-hourly-quota").Results
	var codes []string
	for _, d := range base.Diagnoses {
		codes = append(codes, d.Code)
	}
	if !slices.Equal(codes, []string{"quota_exhausted"}) {
		t.Errorf("diagnoses %v, want only quota_exhausted", codes)
	}
	blind := runExample(t, "api-hourly-quota", Override{Key: "client.headers.pause_at_zero", Value: false},
		Override{Key: "client.on_429.pause", Value: "none"}).Results
	if blind.Rate429 < 0.25 || base.Rate429 != 0 {
		t.Errorf("429 rate: header-blind client %.3f, header-aware %.4f; want a third refused after the quota runs out, and none when the client waits out the reset", blind.Rate429, base.Rate429)
	}
	held := runExample(t, "api-hourly-quota", Override{Key: "client.limiter.per_second.rate", Value: 1.25},
		Override{Key: "client.limiter.per_second.burst", Value: int64(2)}).Results
	if u := held.Upstreams[0]; u.Pauses != 0 || u.Throttled != 0 || hasCode(held.Diagnoses, "quota_exhausted") {
		t.Errorf("held to the quota: %d pauses, %d 429s, diagnoses %v; want none", u.Pauses, u.Throttled, held.Diagnoses)
	}
}

// Four instances each sized as if alone overrun the account's per-second
// limit: sustained 429s, diagnosed with the article's division as the fix;
// the division and a limit shared through a store both hold 90/s without
// a 429.
func TestPerSecondLimitSharedByInstances(t *testing.T) {
	base := runExample(t, "api-per-second-limit").Results
	var fix map[string]any
	for _, d := range base.Diagnoses {
		if d.Code == "sustained_429" {
			fix = d.Fix.Set
		}
	}
	if base.Rate429 < 0.3 || fix["client.limiter.ops.rate"] != 22.5 {
		t.Errorf("429 rate %.3f, sustained-429 fix %v; want a third refused and 22.5/s per instance", base.Rate429, fix)
	}
	for _, sets := range [][]Override{
		{{Key: "client.limiter.ops.rate", Value: 22.5}, {Key: "client.limiter.ops.burst", Value: int64(23)}},
		{{Key: "client.limiter.ops.kind", Value: "gcra"}, {Key: "client.limiter.ops.scope", Value: "cluster"},
			{Key: "client.limiter.ops.rate", Value: 90.0}, {Key: "client.limiter.ops.burst", Value: int64(90)}},
	} {
		r := runExample(t, "api-per-second-limit", sets...).Results
		if r.Rate429 > 0 || math.Abs(r.Throughput.GoodputRPS-90) > 0.05*90 {
			t.Errorf("%v: 429 rate %.4f, goodput %.1f/s; want none and 90/s", sets, r.Rate429, r.Throughput.GoodputRPS)
		}
	}
}

// The language-model template: a client sized by the request limit alone
// meets the tokens-per-minute limit, which refuses every 429 (the request
// limit none); the diagnosis names the token limit, not a local rate above
// the request quota, and its fix (count tokens, reserve the p90 of output
// tokens) clears the 429s. Counting input tokens without a reservation
// leaves 429s, since output tokens are charged after the fact; reserving a
// fixed max_tokens clears them at a cost in goodput. Whatever the client,
// the server never admits more tokens than its bucket: the rate over the
// run, the burst it starts with, and the debt the responses still in
// flight at the end may leave (16 connections, each at most the largest
// response).
func TestLanguageModelTokenLimit(t *testing.T) {
	base := runExample(t, "api-llm-tokens").Results
	u := base.Upstreams[0]
	var fix map[string]any
	for _, d := range base.Diagnoses {
		if d.Code == "token_limit_binds" {
			fix = d.Fix.Set
		}
	}
	if fix == nil || hasCode(base.Diagnoses, "sustained_429") || base.Rate429 < 0.3 {
		t.Fatalf("429 rate %.3f, diagnoses %+v; want token_limit_binds (not sustained_429) on a third or more refused", base.Rate429, base.Diagnoses)
	}
	if len(u.RejectedBy) != 2 || u.RejectedBy[0].Unit != "requests" || u.RejectedBy[0].Count != 0 || u.RejectedBy[1].Unit != "cost" || u.RejectedBy[1].Count != u.Throttled {
		t.Errorf("rejected_by %+v: want every 429 from the cost quota", u.RejectedBy)
	}
	if fix["client.reserve.estimate"] != "p90" || fix["client.limiter.rpm.rate"] != 2400.0 {
		t.Errorf("fix %v: want a 2400/s token bucket reserving the p90", fix)
	}
	c := u.Cost
	if c == nil || math.Abs(c.Request.P50-1200)/1200 > 0.05 || math.Abs(c.Response.P50-250)/250 > 0.05 {
		t.Fatalf("cost stats %+v: want request p50 ≈ 1200 and response p50 ≈ 250 as the template draws them", c)
	}
	var sets []Override
	for k, v := range fix {
		sets = append(sets, Override{Key: k, Value: v})
	}
	fixed := runExample(t, "api-llm-tokens", sets...).Results
	if fixed.Rate429 != 0 || hasCode(fixed.Diagnoses, "token_limit_binds") {
		t.Errorf("with the fix: 429 rate %.4f, diagnoses %v; want none refused", fixed.Rate429, fixed.Diagnoses)
	}
	bucket := []Override{{Key: "client.limiter.rpm.unit", Value: "cost"}, {Key: "client.limiter.rpm.rate", Value: 2400.0},
		{Key: "client.limiter.rpm.burst", Value: int64(144000)}}
	blind := runExample(t, "api-llm-tokens", bucket...).Results
	if blind.Rate429 < 0.02 {
		t.Errorf("counting input tokens only: 429 rate %.4f, want the output tokens charged after the fact to cause some", blind.Rate429)
	}
	maxTokens := runExample(t, "api-llm-tokens", append(bucket, Override{Key: "client.reserve.estimate", Value: "fixed"},
		Override{Key: "client.reserve.fixed", Value: int64(4096)})...).Results
	if maxTokens.Rate429 != 0 || maxTokens.Throughput.GoodputRPS >= 0.95*fixed.Throughput.GoodputRPS {
		t.Errorf("reserving max_tokens: 429 rate %.4f, goodput %.3f against the p90's %.3f; want none refused and less goodput",
			maxTokens.Rate429, maxTokens.Throughput.GoodputRPS, fixed.Throughput.GoodputRPS)
	}
	for name, r := range map[string]*metrics.Results{"fix": fixed, "input only": blind, "max_tokens": maxTokens} {
		// Tokens taken ÷ tokens allowed: never above 1 but for the burst
		// the bucket starts with (144,000 over 1,664 s at 2,400/s).
		if u := limiter(t, r, "rpm").Utilisation; u > 1.04 || u < 0.9 {
			t.Errorf("%s: rpm's utilisation %.3f; the bucket that binds gives out its tokens, and no more", name, u)
		}
	}
	for name, r := range map[string]*metrics.Results{"base": base, "fix": fixed, "input only": blind, "max_tokens": maxTokens} {
		c := r.Upstreams[0].Cost
		if most := c.QuotaPerS + (c.QuotaBurst+16*c.Response.Max)/r.ElapsedS; c.ChargedPerS > most {
			t.Errorf("%s: the server admitted %.1f tokens/s, more than its bucket's %.1f/s", name, c.ChargedPerS, most)
		}
	}
}

// A reservation reconciled when the response arrives, exactly: a bucket of
// 300 tokens refilling at 10/s; two requests of 100 tokens arrive together
// and each reserves 200 for its response, so the first takes the whole
// bucket and the second waits. When the first response completes (1 s) it
// reveals its real cost: 50 gives 150 back and the second request is
// granted at 15 s (300 − 150 at 10/s); 250 charges 50 more, a debt, and it
// waits until 35 s. Without a reservation both pass at once. It catches a
// reconciliation never made, made with the sign reversed, or made on the
// wrong limiter.
func TestReservationReconciledOnResponse(t *testing.T) {
	src := `name = "reserve"
[run]
seed = 1
requests = 2
duration = "60s"
[workload]
arrival = "poisson"
rate = 1e6
cost = 100
[client]
%s
[[client.limiter]]
name = "tpm"
kind = "token_bucket"
rate = 10.0
burst = 300
[[client.limiter]]
name = "rpm"
kind = "token_bucket"
unit = "requests"
rate = 0.001
burst = 2
[[upstream]]
host = "*"
latency = { dist = "constant", value = "1s" }
response_cost = %d
`
	for _, c := range []struct {
		reserve  string
		response int64
		wait     float64 // the second request's wait on tpm, in seconds
	}{
		{"[client.reserve]\nestimate = \"fixed\"\nfixed = 200", 50, 15},
		{"[client.reserve]\nestimate = \"p90\"\nfixed = 200", 250, 35},
		{"", 50, 0},
	} {
		r := runSource(t, fmt.Sprintf(src, c.reserve, c.response)).Results
		tpm, rpm := limiter(t, r, "tpm"), limiter(t, r, "rpm")
		if got := tpm.WaitS.Max; math.Abs(got-c.wait) > 0.01*c.wait+1e-3 {
			t.Errorf("%q, response %d: the second request waited %.3fs on tpm, want %gs", c.reserve, c.response, got, c.wait)
		}
		if rpm.WaitS.Max != 0 || r.Requests.Succeeded != 2 {
			t.Errorf("%q: rpm (2 requests, one each) waited %.3fs, %d succeeded; want no wait and both", c.reserve, rpm.WaitS.Max, r.Requests.Succeeded)
		}
	}
}

// A server that counts refused requests past its limit (refused_counts =
// "all", a counter incremented before it is compared) locks out a client
// that keeps sending at twice its 5/s: every attempt takes a token, so the
// bucket never climbs out of debt and goodput falls to nothing after the
// first burst; the same client against a server that counts only what it
// admits gets the quota's 5/s.
func TestRefusedCountsLockOut(t *testing.T) {
	src := `name = "lockout"
[run]
seed = 1
duration = "60s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 10.0
[client.on_429]
pause = "none"
[[upstream]]
host = "*"
latency = { dist = "constant", value = "20ms" }
quota = { kind = "token_bucket", rate = 5.0, burst = 5 }
%s
`
	counted := runSource(t, fmt.Sprintf(src, "")).Results
	locked := runSource(t, fmt.Sprintf(src, `refused_counts = "all"`)).Results
	if g := counted.Throughput.GoodputRPS; math.Abs(g-5)/5 > 0.05 {
		t.Errorf("counting admissions only: goodput %.2f/s, want the quota's 5/s", g)
	}
	if g := locked.Throughput.GoodputRPS; g > 0.2 {
		t.Errorf("counting refusals past the limit: goodput %.2f/s, want the client locked out", g)
	}
}

// A reservation learned from the responses (the p90 of their cost) is held
// to what the client's limiter can hold: responses of 500 against a burst
// of 300 would otherwise make every request after the first ask for more
// than the bucket ever holds, and be refused at once. The run says how
// many reservations were held, and the limiter's grants never exceed its
// rate over the run (the burst at the start aside).
func TestLearnedReservationHeldToTheLimiter(t *testing.T) {
	src := `name = "held"
[run]
seed = 1
duration = "60s"
[workload]
arrival = "poisson"
rate = 0.15
cost = 10
[[client.limiter]]
name = "tpm"
kind = "token_bucket"
rate = 100.0
burst = 300
[client.reserve]
estimate = "p90"
fixed = 0
[[upstream]]
host = "*"
latency = { dist = "constant", value = "100ms" }
response_cost = 500
`
	sc, err := Parse("held.toml", []byte(src))
	r := mustSimulate(t, sc, err).Results
	if r.Requests.Rejected != 0 || r.Requests.Succeeded < 5 {
		t.Fatalf("outcomes %+v: want every request through, none refused as too large", r.Requests)
	}
	held := ""
	for _, w := range r.Warnings {
		if strings.Contains(w.Text, "attempts had their reservation held to what a limiter can hold with the request's own cost (first limiter tpm, 300)") {
			held = w.Text
		}
	}
	if held == "" {
		t.Fatalf("warnings %v: want the held reservations named", r.Warnings)
	}
	// Each request took 10 + 290 reserved, then 210 more for its response
	// of 500: 510 a request from 100 a second (plus the 300 it starts with).
	if max := (100*r.ElapsedS + 300) / 510; float64(r.Requests.Succeeded) > max+1 {
		t.Errorf("%d requests in %.0f s: the bucket admits at most %.1f at 510 each", r.Requests.Succeeded, r.ElapsedS, max)
	}
}

// A client that reads the tokens family of the rate-limit headers
// (x-ratelimit-remaining-tokens) and checks its pause as it sends waits
// out the reset when too few tokens remain for a request, and is never
// refused; one that ignores them sends into the empty quota and is
// refused most of the time. One request at a time costs half the quota's
// burst, so each answer tells the truth about the next.
func TestTokensFamilyPauseAvoids429s(t *testing.T) {
	src := `name = "tokens"
[run]
seed = 1
duration = "60s"
warmup = "5s"
[workload]
arrival = "poisson"
rate = 5.0
cost = 500
[[client.limiter]]
name = "one"
kind = "semaphore"
permits = 1
[client.on_429]
pause = "none"
pause_check = "send"
[client.headers]
pause_at_zero = %v
[[upstream]]
host = "*"
latency = { dist = "constant", value = "5ms" }
quota = { kind = "token_bucket", rate = 1000, burst = 1000, unit = "cost" }
`
	run := func(aware bool) *metrics.Results {
		sc, err := Parse("tokens.toml", []byte(fmt.Sprintf(src, aware)))
		return mustSimulate(t, sc, err).Results
	}
	blind, aware := run(false), run(true)
	if blind.Rate429 < 0.3 || aware.Rate429 != 0 || aware.Upstreams[0].Pauses == 0 {
		t.Errorf("429 rate: header-blind %.3f, reading the tokens family %.3f (%d pauses); want the blind client refused often and the reader never",
			blind.Rate429, aware.Rate429, aware.Upstreams[0].Pauses)
	}
	// Both get what the quota admits: 1000 tokens a second, 2 requests.
	for name, r := range map[string]*metrics.Results{"blind": blind, "aware": aware} {
		if g := r.Throughput.GoodputRPS; g < 1.8 || g > 2.2 {
			t.Errorf("%s: goodput %.3f/s, want the quota's 2/s", name, g)
		}
	}
}

// The room that holds a learned reservation is that of the limiters that
// cover the request: a small bucket of host a's alone leaves host b's
// reservations whole, so b's figures are those of a run where a's bucket
// is large, and only a's attempts are counted as held.
func TestReservationHeldOnlyByLimitersThatCoverTheRequest(t *testing.T) {
	src := `name = "only-a"
[run]
seed = 1
duration = "120s"
[workload]
arrival = "poisson"
rate = 2.0
cost = 100
hosts = [{ name = "a", weight = 0.05 }, { name = "b", weight = 0.95 }]
[[client.limiter]]
name = "small_a"
kind = "token_bucket"
scope = "host"
hosts = ["a"]
rate = 50.0
burst = %d
[[client.limiter]]
name = "big"
kind = "token_bucket"
rate = 1000.0
burst = 3000
[client.reserve]
estimate = "p90"
fixed = 0
[[upstream]]
host = "*"
latency = { dist = "constant", value = "200ms" }
response_cost = { dist = "lognormal", p50 = 500, p99 = 1500 }
`
	run := func(burst int) *metrics.Results {
		sc, err := Parse("only-a.toml", []byte(fmt.Sprintf(src, burst)))
		return mustSimulate(t, sc, err).Results
	}
	small, large := run(200), run(100000)
	sb, lb := small.Upstreams[1], large.Upstreams[1]
	if sb.Host != "b" || sb.Attempts != lb.Attempts || sb.OK != lb.OK {
		t.Errorf("host b: %d attempts, %d ok with a's bucket at 200; %d, %d with it at 100,000: want the same", sb.Attempts, sb.OK, lb.Attempts, lb.OK)
	}
	var held string
	for _, w := range small.Warnings {
		if strings.Contains(w.Text, "first limiter small_a") {
			held = w.Text
		}
	}
	var n int64
	if _, err := fmt.Sscanf(held, "client.reserve: %d attempts", &n); err != nil || n == 0 || n > small.Upstreams[0].Attempts {
		t.Errorf("warning %q: want the held attempts counted, no more than host a's %d", held, small.Upstreams[0].Attempts)
	}
}

// A run that ends at or before the end of its warm-up measures no steady
// state: it says so in a warning and a diagnosis, rather than "healthy"
// with every rate at zero, and its steady-state figures are zero even for
// what happened at the warm-up's very end. The diagnosis's fix (a tenth of
// the run as warm-up) gives it one. One that outlasts only the arrivals
// (even by ending a nanosecond before the run) leaves a steady state
// without arrivals, and says that. Replications without a steady state
// stay out of the spread; a run a guard stopped says why instead.
func TestWarmUpOutlastingTheRunIsDiagnosed(t *testing.T) {
	warning := func(r *metrics.Results) string {
		for _, w := range r.Warnings {
			if w.Code == metrics.NoSteadyState {
				return w.Text
			}
		}
		return ""
	}
	diagnosis := func(r *metrics.Results) *metrics.Diagnosis {
		for i := range r.Diagnoses {
			if r.Diagnoses[i].Code == "no_steady_state" {
				return &r.Diagnoses[i]
			}
		}
		return nil
	}
	base := []Override{{Key: "run.requests", Value: int64(2000)}}
	run := func(sets ...Override) *metrics.Results {
		return runExample(t, "reference-model", append(slices.Clone(base), sets...)...).Results
	}
	whole := run()
	if warning(whole) != "" || diagnosis(whole) != nil {
		t.Fatalf("a run without warm-up: warnings %v, diagnoses %v", whole.Warnings, whole.Diagnoses)
	}
	end := time.Duration(math.Round(whole.ElapsedS * 1e9))

	r := run(Override{Key: "run.warmup", Value: "1h"})
	d := diagnosis(r)
	if !strings.HasPrefix(warning(r), "the run ended at "+end.String()+", at or before the end of its warm-up (1h0m0s)") || d == nil ||
		r.Throughput.GoodputRPS != 0 || r.Throughput.WindowS != 0 {
		t.Fatalf("warm-up of 1 h, run of %v: warnings %v, diagnoses %v, throughput %+v", end, r.Warnings, r.Diagnoses, r.Throughput)
	}
	for _, v := range r.Verdicts {
		if v.Verdict != "unmeasured" {
			t.Errorf("no steady state, yet limiter %s is %q (%s)", v.Limiter, v.Verdict, v.Why)
		}
	}
	if h := report.Headline(r); !strings.HasPrefix(h[0], "1 finding: No steady state") || !strings.HasPrefix(h[1], "no steady state: the run ended at") {
		t.Errorf("headline %q", h)
	}
	if d.Fix.Set["run.warmup"] != (end / 10).Round(time.Millisecond).String() {
		t.Errorf("fix %+v: want a tenth of the run (%v)", d.Fix, end)
	}
	fixed := run(Override{Key: "run.warmup", Value: d.Fix.Set["run.warmup"]})
	if warning(fixed) != "" || diagnosis(fixed) != nil || fixed.Throughput.GoodputRPS < 80 {
		t.Errorf("after the fix %v: warnings %v, diagnoses %v, goodput %v/s", d.Fix.Set, fixed.Warnings, fixed.Diagnoses, fixed.Throughput.GoodputRPS)
	}

	// At the run's end exactly: no steady state, and nothing counted in it,
	// though the last completion falls at the warm-up's end.
	at := run(Override{Key: "run.warmup", Value: end.String()})
	if at.ElapsedS != whole.ElapsedS || warning(at) == "" || at.Throughput.GoodputRPS != 0 || at.InFlight.Mean != 0 ||
		at.Limiters[0].Utilisation != 0 || at.Throughput.WindowS != 0 {
		t.Errorf("warm-up at the run's end: warnings %v, throughput %+v, in flight %v, utilisation %v",
			at.Warnings, at.Throughput, at.InFlight.Mean, at.Limiters[0].Utilisation)
	}
	// A nanosecond before it: a steady state of 1 ns, past the last arrival.
	if before := run(Override{Key: "run.warmup", Value: (end - 1).String()}); !strings.HasPrefix(warning(before), "the last request arrived at ") ||
		before.Throughput.WindowS != 1e-9 {
		t.Errorf("warm-up a nanosecond before the run's end: warnings %v, window %v s", before.Warnings, before.Throughput.WindowS)
	}

	// Past the last arrival (about 13 s at 150/s) but not the run's end.
	mid := run(Override{Key: "run.warmup", Value: (end - time.Second).String()})
	if md := diagnosis(mid); !strings.HasPrefix(warning(mid), "the last request arrived at ") || md == nil ||
		!strings.HasPrefix(md.Title, "No arrivals in the steady state") || mid.Throughput.OfferedRPS != 0 {
		t.Errorf("warm-up past the last arrival: warnings %v, diagnoses %v, offered %v/s", mid.Warnings, mid.Diagnoses, mid.Throughput.OfferedRPS)
	} else if again := run(Override{Key: "run.warmup", Value: md.Fix.Set["run.warmup"]}); warning(again) != "" || again.Throughput.OfferedRPS < 100 {
		t.Errorf("after the fix %v: warnings %v, offered %v/s", md.Fix.Set, again.Warnings, again.Throughput.OfferedRPS)
	}

	// An arrival at the warm-up's very end is in the steady state.
	if w, ok := mid.NoSteadyState(); ok {
		if last, ok := w.SteadyStateCut(); !ok {
			t.Errorf("%q names no instant", w.Text)
		} else if at := run(Override{Key: "run.warmup", Value: last.String()}); warning(at) != "" || at.Throughput.OfferedRPS == 0 {
			t.Errorf("warm-up ending at the last arrival (%v): warnings %v, offered %v/s", last, at.Warnings, at.Throughput.OfferedRPS)
		}
	}
	// run.requests ended the arrivals long before run.duration: the
	// arrivals' window ends at the last of them, not at the duration.
	dur := run(Override{Key: "run.duration", Value: (end - 100*time.Millisecond).String()}, Override{Key: "run.warmup", Value: (end - time.Second).String()})
	if !strings.HasPrefix(warning(dur), "the last request arrived at ") || dur.Throughput.OfferedRPS != 0 {
		t.Errorf("arrivals ended by run.requests before the warm-up, run.duration after it: warnings %v, offered %v/s", dur.Warnings, dur.Throughput.OfferedRPS)
	}
	early := Override{Key: "run.warmup", Value: "5s"}
	bounded, free := run(Override{Key: "run.duration", Value: (end - 100*time.Millisecond).String()}, early), run(early)
	if bounded.Throughput.OfferedRPS != free.Throughput.OfferedRPS || free.Throughput.OfferedRPS < 140 {
		t.Errorf("the same arrivals offered %v/s with a run.duration past their end, %v/s without", bounded.Throughput.OfferedRPS, free.Throughput.OfferedRPS)
	}
	// Replications: those without a steady state are named and left out of
	// the spread.
	reps := run(Override{Key: "run.warmup", Value: "1h"}, Override{Key: "run.replications", Value: int64(3)})
	named := 0
	for _, w := range reps.Warnings {
		if w.Code == metrics.NoSteadyState && strings.HasPrefix(w.Text, "replication ") {
			named++
		}
	}
	if named != 2 || reps.Replications != nil || diagnosis(reps) == nil {
		t.Errorf("three replications, none with a steady state: %d named (want 2), spread %+v, diagnoses %v", named, reps.Replications, reps.Diagnoses)
	}
	if ok := run(Override{Key: "run.warmup", Value: "1s"}, Override{Key: "run.replications", Value: int64(3)}); warning(ok) != "" || ok.Replications == nil || ok.Replications.N != 3 {
		t.Errorf("three replications with a steady state: warnings %v, spread %+v", ok.Warnings, ok.Replications)
	}
	// Two of three without arrivals in their steady state (the first
	// included): one left is no spread.
	if one := run(Override{Key: "run.warmup", Value: "13.8s"}, Override{Key: "run.replications", Value: int64(3)}); len(one.Warnings) != 2 || one.Replications != nil {
		t.Errorf("three replications, one with arrivals after the warm-up: warnings %v, spread %+v", one.Warnings, one.Replications)
	}

	// A run stopped early, before its warm-up's end, names its stop instead.
	sc, err := LoadWith("examples/reference-model.toml", append(slices.Clone(base), Override{Key: "run.warmup", Value: "1h"},
		Override{Key: "run.max_events", Value: int64(1000)}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Results.Complete || warning(out.Results) != "" {
		t.Errorf("a run a guard stopped: complete %v, warnings %v", out.Results.Complete, out.Results.Warnings)
	}
}

// A host with a concurrency quota in front of an hourly window reports the
// use of the quota that binds: the window, run dry at its 5,000 an hour,
// not the 100 permits barely held.
func TestQuotaUtilisationIsTheBindingQuotas(t *testing.T) {
	r := runExample(t, "api-hourly-quota").Results
	u := r.Upstreams[0]
	if u.QuotaUtilisation == nil || u.QuotaRPS == nil {
		t.Fatalf("no quota figures: %+v", u)
	}
	want := r.Throughput.GoodputRPS / *u.QuotaRPS
	if got := *u.QuotaUtilisation; math.Abs(got-want) > 0.05*want || got < 0.5 {
		t.Fatalf("quota_utilisation %.4f, want about goodput ÷ quota_rps = %.4f", got, want)
	}
}

// Replications run at once give what they give one after another: the
// first replication's results with the spread over all of them, byte for
// byte, whatever the number of workers; and when a later replication stops
// early (here at the event guard, set between what the replications need),
// the first to stop is the outcome, with the same warnings.
func TestReplicationsAtOnceAsInTurn(t *testing.T) {
	encode := func(o *client.Outcome, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer o.Series.Close()
		b, err := json.Marshal(o.Results)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	guarded := 0
	for _, name := range []string{"token-bucket", "handling-429", "fail-tenant-starvation", "adaptive-aimd"} {
		sc, err := LoadWith("examples/"+name+".toml", []Override{{Key: "run.replications", Value: int64(5)}})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := sc.Build()
		if err != nil {
			t.Fatal(err)
		}
		serial := encode(client.Run(cfg, client.Options{Workers: 1}))
		for _, w := range []int{2, 3, 8} {
			if got := encode(client.Run(cfg, client.Options{Workers: w})); got != serial {
				t.Errorf("%s: %d workers give other results than one", name, w)
			}
		}
		// The events each replication takes; a guard between the first
		// two replications' most and the others' stops a later one.
		events := make([]uint64, 5)
		for rep := range events {
			o, err := client.RunReplication(cfg, rep, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o.Series.Close()
			events[rep] = o.Results.Events
		}
		limit := max(events[0], events[1])
		stops := slices.IndexFunc(events[2:], func(e uint64) bool { return e > limit })
		if stops < 0 {
			continue // every later replication fits: nothing to stop
		}
		guarded++
		cfg.Run.MaxEvents = int64(limit)
		serial = encode(client.Run(cfg, client.Options{Workers: 1}))
		if !strings.Contains(serial, fmt.Sprintf("replication %d of 5 stopped early", stops+3)) {
			t.Fatalf("%s: the run at the guard does not name replication %d: %s", name, stops+3, serial)
		}
		for _, w := range []int{2, 5} {
			if got := encode(client.Run(cfg, client.Options{Workers: w})); got != serial {
				t.Errorf("%s, stopped by the guard: %d workers give other results than one", name, w)
			}
		}
	}
	if guarded == 0 {
		t.Fatal("no scenario had a later replication to stop at the guard")
	}
}

// With replications at once, the clock the progress line shows is the
// last replication's: when the run ends it reads that replication's last
// interval, even where an earlier one ran longer.
func TestReplicationsClockIsTheLastOnes(t *testing.T) {
	const reps = 6
	checked := 0
	for _, name := range []string{"seed-crawler", "fetch-all-semaphore", "fail-lock-held", "seed-crawler-fifo", "fail-unbounded-waiting"} {
		sc, err := LoadWith("examples/"+name+".toml", []Override{{Key: "run.replications", Value: int64(reps)},
			{Key: "run.interval", Value: "100ms"}})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := sc.Build()
		if err != nil {
			t.Fatal(err)
		}
		ends := make([]int64, reps)
		for rep := range ends {
			var clock atomic.Int64
			o, err := client.RunReplication(cfg, rep, client.Options{Clock: &clock})
			if err != nil {
				t.Fatal(err)
			}
			o.Series.Close()
			ends[rep] = clock.Load()
		}
		if slices.Max(ends) == ends[reps-1] {
			continue // the last replication also ends last: nothing told apart
		}
		checked++
		for _, w := range []int{1, 2, reps} {
			var clock atomic.Int64
			o, err := client.Run(cfg, client.Options{Clock: &clock, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			o.Series.Close()
			if got := clock.Load(); got != ends[reps-1] {
				t.Errorf("%s, %d workers: the clock ends at %v, want the last replication's %v (each: %v)",
					name, w, time.Duration(got), time.Duration(ends[reps-1]), ends)
			}
		}
	}
	if checked == 0 {
		t.Fatal("in every scenario the last replication ended last")
	}
}
