package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

const s = time.Second

func TestRecorderScript(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Warmup: s, Interval: s, Ingest: "tasks",
		Limiters: []LimiterInfo{{Name: "b", Kind: "token_bucket", Scope: "global", Scopes: []string{"global"}, Capacity: 2, Cost: 1}},
		Hosts:    []string{"api"}, Quotas: []QuotaInfo{{PerSecond: 4}}, Tenants: []string{"a", "b"}})
	// Request 1 arrives in the warm-up and passes straight through.
	r.Arrived(0, 0)
	r.LimiterPassed(0, 0, 0)
	r.Sent(0, 0)
	r.Served(0, 0, 500*time.Millisecond, true)
	r.ServedDone(500*time.Millisecond, 0, 0)
	r.Answered(500*time.Millisecond, 0, 0, true)
	r.Ended(500*time.Millisecond, 0, 0, Succeeded, 0)
	r.Tick(s, []float64{0.5}, []float64{0}, []float64{0})
	// Request 2 waits 2 s on the limiter, then gets a 429.
	r.Arrived(s, 1)
	r.LimiterParked(s, 0)
	r.Tick(2*s, []float64{1}, []float64{0}, []float64{0})
	r.Tick(3*s, []float64{1}, []float64{0}, []float64{0})
	r.LimiterLeft(3*s, s, 0, 0, LeftGranted)
	r.Sent(3*s, 0)
	r.Answered(3*s+5*time.Millisecond, 3*s, 0, false)
	r.Ended(3*s+5*time.Millisecond, s, 1, Throttled, 2*s)
	r.Tick(4*s, []float64{0.5}, []float64{0}, []float64{0})
	res, series := r.Finish(4*s, 4*s, 42, Stop{})

	if res.Requests.Arrived != 2 || res.Requests.Succeeded != 1 || res.Requests.Throttled429 != 1 || res.Requests.Attempts != 2 {
		t.Fatalf("requests %+v", res.Requests)
	}
	l := res.Limiters[0]
	// Only the steady-state acquisition (request 2, 2 s) is in the histogram.
	if l.Acquired != 2 || l.WaitS.Count != 1 || math.Abs(l.WaitS.P50-2) > 0.002 || l.PWait != 1 {
		t.Fatalf("limiter %+v", l)
	}
	// One waiter for 2 s in a 3 s steady window.
	if math.Abs(l.MeanWaiting-2.0/3) > 1e-9 || l.MaxWaiting != 1 {
		t.Fatalf("mean waiting %v max %d", l.MeanWaiting, l.MaxWaiting)
	}
	// Saturation sampled at ticks that close steady-state intervals: 2 s,
	// 3 s and 4 s read 1, 1 and 0.5.
	if math.Abs(l.Saturation-2.5/3) > 1e-12 {
		t.Fatalf("saturation %v", l.Saturation)
	}
	u := res.Upstreams[0]
	if u.Attempts != 2 || u.Throttled != 1 || u.Rate429 != 1 || math.Abs(u.PerMinute429-20) > 1e-9 {
		t.Fatalf("upstream %+v", u)
	}
	for _, lt := range res.Little {
		if lt.RelError > 1e-12 {
			t.Errorf("Little %+v", lt)
		}
	}
	if len(res.Tenants) != 2 || res.Tenants[0].Share != 1 {
		t.Fatalf("tenants %+v", res.Tenants)
	}
	var b bytes.Buffer
	if err := series.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	// One grant in the first second of a 2/s bucket: utilisation 0.5; one
	// admission of a 4/s quota: 0.25.
	// Per-interval percentiles: request 1's 0.5 s end to end and its zero
	// wait in the first second; request 2's 2 s wait in the interval it
	// ended in (the fourth), where no request succeeded; NaN where nothing
	// ended. Per tenant: a arrives and succeeds in the first second, b
	// arrives in the second and never succeeds.
	want := "t_s,arrivals,starts,succeeded,responses_429,rejected,timeouts,failed,in_flight,in_system,queue_depth,blocked_producers,request_p50_s,request_p95_s,request_p99_s,b.waiting,b.usage,b.acquired,b.utilisation,b.wait_p50_s,b.wait_p95_s,b.wait_p99_s,api.starts,api.responses_429,api.quota_usage,api.quota_utilisation,api.paused,a.arrivals,a.succeeded,b.arrivals,b.succeeded\n" +
		"1,1,1,1,0,0,0,0,0.5,0.5,0,0,0.5,0.5,0.5,0,0.5,1,0.5,0,0,0,1,0,0,0.25,0,1,1,0,0\n" +
		"2,1,0,0,0,0,0,0,0,1,0,0,NaN,NaN,NaN,1,1,0,0,NaN,NaN,NaN,0,0,0,0,0,0,0,1,0\n" +
		"3,0,0,0,0,0,0,0,0,1,0,0,NaN,NaN,NaN,1,1,0,0,NaN,NaN,NaN,0,0,0,0,0,0,0,0,0\n" +
		"4,0,1,0,1,0,0,0,0.005,0.005,0,0,NaN,NaN,NaN,0,0.5,1,0.5,2,2,2,1,1,0,0,0,0,0,0,0\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestSpreadCI(t *testing.T) {
	sp := spread([]float64{1, 2, 3, 4, 5})
	// mean 3, sd √2.5, t(4) = 2.776 → half-width 2.776·√2.5/√5 = 1.963
	if sp.Mean != 3 || math.Abs(sp.CI95-1.9629) > 1e-3 || sp.Min != 1 || sp.Max != 5 {
		t.Fatalf("%+v", sp)
	}
}

// Percentiles must be the ones they are named for: waits of 1, 2, …, 100 ms
// have p50 = 50 ms, p90 = 90 ms, p99 = 99 ms and max = 100 ms exactly (to
// the histogram's three significant digits). A p99 computed as p95, a max
// taken from the wrong end or a mean off by one sample fails here.
func TestRecorderPercentiles(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "q", Seed: 1, Interval: s, Ingest: "tasks",
		Limiters: []LimiterInfo{{Name: "l", Kind: "semaphore", Scope: "global", Scopes: []string{"global"}}},
		Hosts:    []string{"api"}, Tenants: []string{"t"}})
	for k := 1; k <= 100; k++ {
		since := time.Duration(k) * s
		r.LimiterParked(since, 0)
		r.LimiterLeft(since+time.Duration(k)*time.Millisecond, since, 0, 0, LeftGranted)
	}
	res, _ := r.Finish(200*s, 200*s, 0, Stop{})
	d := res.Limiters[0].WaitS
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", d.P50, 0.050}, {"p90", d.P90, 0.090}, {"p99", d.P99, 0.099}, {"max", d.Max, 0.100}, {"mean", d.Mean, 0.0505}} {
		if math.Abs(c.got-c.want) > 1e-3*c.want {
			t.Errorf("%s = %.6g s, want %.6g s", c.name, c.got, c.want)
		}
	}
	if d.Count != 100 {
		t.Errorf("count %d, want 100", d.Count)
	}
}

// A stop and a warning read back from metrics.json keep their kind and
// code, so `limitsim report DIR` diagnoses what the run diagnosed.
func TestStopAndWarningRoundTrip(t *testing.T) {
	stops := []Stop{
		{},
		StallStop("sim: stalled at 3s: no events remain but limiter a holds 2 waiting", false),
		StallStop("sim: stalled at 3s: no events remain but limiter a holds 2 waiting; deadlock cycle: a → b → a", true),
		GuardStop("max_live_requests", "sim: guard max_live_requests (limit 10) stopped the run at 1s: 11 requests alive"),
		InterruptStop(),
	}
	for _, st := range stops {
		b, err := json.Marshal(struct {
			S Stop `json:"s,omitzero"`
		}{st})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			S Stop `json:"s"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.S != st {
			t.Errorf("%s read back as %+v, want %+v", b, back.S, st)
		}
		if st.IsZero() && string(b) != "{}" {
			t.Errorf("a finished run writes a stop_reason: %s", b)
		}
	}
	dl := StallStop("sim: stalled at 3s: no events remain but limiter a holds 2 waiting; deadlock cycle: a → b → a; 2 requests hold a", true)
	if c := dl.Cycle(); len(c) != 3 || c[0] != "a" || c[1] != "b" || c[2] != "a" {
		t.Errorf("deadlock cycle read as %q, want [a b a]", c)
	}
	if c := stops[1].Cycle(); c != nil {
		t.Errorf("a stall without a cycle reads cycle %q", c)
	}
	warnings := []Warning{
		AcquireOrderWarning("default", "conns", "rate"),
		LockOrderWarning([]string{"a", "b", "a"}, []string{"a → b (path p)", "b → a (path q)"}),
		ReplicationWarning(2, 5),
		NoSteadyStateWarning(time.Minute, 10946923058),
		NoSteadyArrivalsWarning(time.Minute, 13*time.Second),
		ReplicationNoSteadyStateWarning(3, 4, NoSteadyStateWarning(time.Minute, 59*time.Second)),
		{OtherWarning, "something else"},
	}
	for _, w := range warnings {
		b, _ := json.Marshal(w)
		var back Warning
		if err := json.Unmarshal(b, &back); err != nil || back != w {
			t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, w)
		}
	}
	// A no-steady-state warning names the instant that cut the steady
	// state short, read back from its text.
	for i, want := range []time.Duration{3: 10946923058, 4: 13 * time.Second, 5: 59 * time.Second} {
		cut, ok := warnings[i].SteadyStateCut()
		if (i >= 3 && i <= 5) != ok || cut != want {
			t.Errorf("%q: cut %v %v, want %v", warnings[i].Text, cut, ok, want)
		}
	}
}

// p_wait is the share of acquisitions that waited a positive time: a park
// granted at the instant it was made did not wait. Acquisitions given up
// are in the wait distribution with the time they waited; the granted-only
// distribution leaves them out.
func TestWaitsCountGiveUpsAndOnlyPositiveWaits(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "w", Seed: 1, Interval: s, Ingest: "tasks",
		Limiters: []LimiterInfo{{Name: "l", Kind: "fixed_window", Scope: "global", Scopes: []string{"global"}}},
		Hosts:    []string{"api"}, Tenants: []string{"t"}})
	r.LimiterPassed(0, 0, 0)                      // granted at once: 0
	r.LimiterParked(s, 0)                         // parked and granted at the same instant: 0
	r.LimiterLeft(s, s, 0, 0, LeftGranted)        //
	r.LimiterParked(2*s, 0)                       // waited 2 s, granted
	r.LimiterLeft(4*s, 2*s, 0, 0, LeftGranted)    //
	r.LimiterParked(5*s, 0)                       // gave up after 30 s
	r.LimiterLeft(35*s, 5*s, 0, 0, LeftGaveUp)    //
	r.LimiterParked(6*s, 0)                       // withdrawn by its deadline after 10 s
	r.LimiterLeft(16*s, 6*s, 0, 0, LeftWithdrawn) //
	res, _ := r.Finish(40*s, 40*s, 0, Stop{})
	l := res.Limiters[0]
	if l.WaitS.Count != 5 || l.WaitGrantedS.Count != 3 {
		t.Fatalf("counts: all %d (want 5), granted %d (want 3)", l.WaitS.Count, l.WaitGrantedS.Count)
	}
	if l.PWait != 3.0/5 {
		t.Errorf("p_wait = %v, want 3/5: zero-length parks did not wait", l.PWait)
	}
	if math.Abs(l.WaitS.Max-30) > 0.03 || math.Abs(l.WaitS.P99-30) > 0.03 {
		t.Errorf("wait max %v p99 %v, want 30 s: a give-up waited 30 s", l.WaitS.Max, l.WaitS.P99)
	}
	if math.Abs(l.WaitGrantedS.Max-2) > 0.002 {
		t.Errorf("granted-only max %v, want 2 s", l.WaitGrantedS.Max)
	}
	if l.Acquired != 3 || l.Timeouts != 1 {
		t.Errorf("acquired %d timeouts %d, want 3 and 1", l.Acquired, l.Timeouts)
	}
}

// Each scope's p_wait is the share of its steady-state acquisitions that
// waited a positive time, apart from the other scopes': zero waits
// (granted at once, or parked and granted at the same instant) did not
// wait, give-ups did, and an acquisition parked in the warm-up is left
// out with its wait.
func TestScopeWaitsCountOnlyPositiveSteadyWaits(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "w", Seed: 1, Interval: s, Warmup: 10 * s, Ingest: "tasks",
		Limiters: []LimiterInfo{{Name: "l", Kind: "token_bucket", Scope: "tenant", Scopes: []string{"a", "b"}, Capacity: 1, Cost: 1}},
		Hosts:    []string{"api"}, Tenants: []string{"a", "b"}})
	r.LimiterParked(5*s, 0) // a: parked in the warm-up, granted after it
	r.LimiterLeft(12*s, 5*s, 0, 0, LeftGranted)
	for range 3 {
		r.LimiterPassed(20*s, 0, 0) // a: granted at once
	}
	r.LimiterParked(21*s, 0) // a: waited 2 s
	r.LimiterLeft(23*s, 21*s, 0, 0, LeftGranted)
	r.LimiterParked(24*s, 0) // b: parked and granted at the same instant
	r.LimiterLeft(24*s, 24*s, 0, 1, LeftGranted)
	r.LimiterParked(25*s, 0) // b: gave up after 5 s
	r.LimiterLeft(30*s, 25*s, 0, 1, LeftGaveUp)
	res, _ := r.Finish(40*s, 40*s, 0, Stop{})
	sc := res.Limiters[0].Scopes
	if len(sc) != 2 {
		t.Fatalf("%d scopes, want 2", len(sc))
	}
	if sc[0].WaitS.Count != 4 || sc[0].PWait != 1.0/4 {
		t.Errorf("scope a: %d steady waits, p_wait %v; want 4 and 1/4", sc[0].WaitS.Count, sc[0].PWait)
	}
	if sc[1].WaitS.Count != 2 || sc[1].PWait != 1.0/2 {
		t.Errorf("scope b: %d steady waits, p_wait %v; want 2 and 1/2 (the give-up waited, the instant grant did not)", sc[1].WaitS.Count, sc[1].PWait)
	}
}

// A 429 belongs to the interval its attempt was sent in, so no interval
// shows more 429s than starts however late the answers come.
func TestLate429sCountInTheirSendInterval(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "i", Seed: 1, Interval: s, Ingest: "tasks", Hosts: []string{"api"}, Tenants: []string{"t"}})
	r.Sent(500*time.Millisecond, 0)
	r.Tick(s, nil, []float64{0}, []float64{0})
	r.Tick(2*s, nil, []float64{0}, []float64{0})
	r.Answered(2500*time.Millisecond, 500*time.Millisecond, 0, false) // two intervals later
	r.Sent(2100*time.Millisecond, 0)
	r.Answered(2200*time.Millisecond, 2100*time.Millisecond, 0, false) // the open interval
	r.Tick(3*s, nil, []float64{0}, []float64{0})
	_, series := r.Finish(3*s, 3*s, 0, Stop{})
	starts, th := series.Column("starts"), series.Column("responses_429")
	hth := series.Column("api.responses_429")
	want := []float64{1, 0, 1}
	for i := range want {
		if th[i] != want[i] || hth[i] != want[i] || th[i] > starts[i] {
			t.Fatalf("interval %d: starts %v, 429s %v (host %v); want 429s %v", i, starts, th, hth, want)
		}
	}
}

// An interval's percentiles are those of its own values, to the
// histogram's resolution, and taking them starts the next interval empty.
func TestIntervalPercentiles(t *testing.T) {
	h := newIntervalHist()
	for k := 1; k <= 1000; k++ { // 1 ms … 1 s
		h.add(time.Duration(k) * time.Millisecond)
	}
	p50, p95, p99 := h.take()
	for _, c := range []struct{ got, want float64 }{{p50, 0.5}, {p95, 0.95}, {p99, 0.99}} {
		if math.Abs(c.got-c.want) > 0.01*c.want {
			t.Errorf("percentile %v, want %v ± 1%%", c.got, c.want)
		}
	}
	h.add(3 * time.Second)
	if p50, _, p99 := h.take(); p50 != 3 || p99 != 3 {
		t.Fatalf("the next interval's only value (3 s) reads p50 %v p99 %v: the previous interval leaked in", p50, p99)
	}
	if p50, _, _ := h.take(); !math.IsNaN(p50) {
		t.Fatalf("an empty interval reads %v, want NaN", p50)
	}
}

// On the wall clock a tick may fire late: its row still ends at the
// interval's boundary, the next boundary is one interval on, and a 429 of
// an attempt sent before the late tick lands in the row it was sent in.
func TestLateTickKeepsIntervalBoundaries(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Interval: s, Ingest: "tasks", Hosts: []string{"api"}, Quotas: []QuotaInfo{{}}, Tenants: []string{"a"}})
	r.Arrived(0, 0)
	r.Sent(900*time.Millisecond, 0)
	r.Tick(s+30*time.Millisecond, nil, []float64{0}, []float64{0}) // 30 ms late
	if r.NextTick() != 2*s {
		t.Fatalf("next tick at %v after a late one, want 2s", r.NextTick())
	}
	r.Answered(s+40*time.Millisecond, 900*time.Millisecond, 0, false)
	r.Ended(s+40*time.Millisecond, 0, 0, Throttled, 0)
	r.Tick(2*s+5*time.Millisecond, nil, []float64{0}, []float64{0})
	_, series := r.Finish(2*s, 2*s, 1, Stop{})
	if got := series.Column("t_s"); got[0] != 1 || got[1] != 2 {
		t.Errorf("rows end at %v, want the boundaries 1 and 2", got)
	}
	if got := series.Column("responses_429"); got[0] != 1 || got[1] != 0 {
		t.Errorf("429s per row %v: the attempt sent at 0.9 s belongs to the first", got)
	}
}

// With more hosts than get full histograms, a host's distributions are
// binned sketches whose bins are counted in batches: the results must
// count every value, however few are still queued when the run ends.
func TestManyHostsDistributionsCountQueuedValues(t *testing.T) {
	hosts := make([]string, compactAbove+4)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d", i)
	}
	r := NewRecorder(Layout{Scenario: "h", Seed: 1, Interval: s, Ingest: "tasks", Hosts: hosts, Tenants: []string{"t"}})
	// Host 3 answers 1 ms … 100 ms; fewer values than the queue holds, so
	// none is counted before the results are read.
	for k := 1; k <= 100; k++ {
		at := time.Duration(k) * time.Millisecond
		r.Sent(0, 3)
		r.Served(0, 3, at, true)
		r.Answered(at, 0, 3, true)
	}
	res, _ := r.Finish(s, s, 0, Stop{})
	for _, d := range []Dist{res.Upstreams[3].LatencyS, res.Upstreams[3].ServiceS} {
		if d.Count != 100 || math.Abs(d.P50-0.050)/0.050 > 0.02 || math.Abs(d.P99-0.099)/0.099 > 0.02 || d.Max != 0.1 {
			t.Fatalf("host 3: %+v; want 100 values, p50 50 ms and p99 99 ms within the sketch's accuracy", d)
		}
	}
}

// A series nobody reads empties the interval percentiles' columns and the
// host columns other than paused, and nothing else: the results, and
// every other column (paused included, which the diagnoses read), are
// those of a recorder that keeps them. A 429 counted back into a closed
// interval goes to the run's column alone.
func TestSeriesUnread(t *testing.T) {
	script := func(drop bool) (*Results, *Series) {
		r := NewRecorder(Layout{Scenario: "d", Seed: 1, Interval: s, Ingest: "tasks",
			Limiters: []LimiterInfo{{Name: "b", Kind: "token_bucket", Scope: "global", Scopes: []string{"global"}, Capacity: 2, Cost: 1}},
			Hosts:    []string{"api", "db"}, Quotas: []QuotaInfo{{PerSecond: 4}, {}}, Tenants: []string{"a"}})
		if drop {
			r.SeriesUnread()
		}
		for k := range 20 {
			at := time.Duration(k) * 100 * time.Millisecond
			r.Arrived(at, 0)
			r.LimiterParked(at, 0)
			r.LimiterLeft(at+time.Duration(k)*time.Millisecond, at, 0, 0, LeftGranted)
			r.Sent(at, k%2)
			r.Served(at, k%2, 50*time.Millisecond, true)
			r.Answered(at+50*time.Millisecond, at, k%2, true)
			r.Ended(at+50*time.Millisecond, at, 0, Succeeded, time.Duration(k)*time.Millisecond)
			if k == 9 {
				r.Sent(at+10*time.Millisecond, 0) // answered 429 in the next interval
				r.Tick(s, []float64{0.5}, []float64{0.25, 0.5}, []float64{0, 1})
				r.Answered(s+time.Millisecond, at+10*time.Millisecond, 0, false)
			}
		}
		r.Tick(2*s, []float64{0.5}, []float64{0.75, 0}, []float64{1, 0})
		return r.Finish(2*s, 2*s, 100, Stop{})
	}
	kept, keptSeries := script(false)
	dropped, droppedSeries := script(true)
	var a, b bytes.Buffer
	if err := WriteJSON(&a, kept); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, dropped); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("leaving the series unread changed the results")
	}
	percentile := map[string]bool{"request_p50_s": true, "request_p95_s": true, "request_p99_s": true,
		"b.wait_p50_s": true, "b.wait_p95_s": true, "b.wait_p99_s": true,
		"api.starts": true, "api.responses_429": true, "api.quota_usage": true, "api.quota_utilisation": true,
		"db.starts": true, "db.responses_429": true, "db.quota_usage": true}
	if len(keptSeries.Columns) != len(droppedSeries.Columns) || keptSeries.Column("db.quota_utilisation") != nil {
		t.Fatalf("columns %v kept, %v dropped", keptSeries.Columns, droppedSeries.Columns)
	}
	if got := keptSeries.Column("api.responses_429"); got[0] != 1 || keptSeries.Column("responses_429")[0] != 1 ||
		droppedSeries.Column("responses_429")[0] != 1 {
		t.Fatalf("the late 429 counted %v for api, %v and %v in all", got, keptSeries.Column("responses_429"), droppedSeries.Column("responses_429"))
	}
	if p := droppedSeries.Column("db.paused"); p[0] != 1 || p[1] != 0 {
		t.Fatalf("db.paused %v, want [1 0]", p)
	}
	for _, c := range keptSeries.Columns {
		k, d := keptSeries.Column(c), droppedSeries.Column(c)
		for i := range k {
			switch {
			case percentile[c] && (math.IsNaN(k[i]) || !math.IsNaN(d[i])):
				t.Errorf("%s[%d]: kept %v, dropped %v; want a value kept and none when dropped", c, i, k[i], d[i])
			case !percentile[c] && k[i] != d[i] && !(math.IsNaN(k[i]) && math.IsNaN(d[i])):
				t.Errorf("%s[%d]: %v kept, %v dropped", c, i, k[i], d[i])
			}
		}
	}
}

// A failed request counts in the failed column of the interval it ended
// in, apart from the 429s, and the column sums to requests.failed.
func TestFailedCountsInTheIntervalItEnded(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "f", Seed: 1, Interval: s, Ingest: "tasks", Hosts: []string{"api"}, Tenants: []string{"t"}})
	r.Arrived(0, 0)
	r.Arrived(100*time.Millisecond, 0)
	r.Arrived(200*time.Millisecond, 0)
	r.Ended(300*time.Millisecond, 0, 0, Failed, 0)
	r.Ended(400*time.Millisecond, 0, 0, Throttled, 0)
	r.Tick(s, nil, []float64{0}, []float64{0})
	r.Tick(2*s, nil, []float64{0}, []float64{0})
	r.Ended(2500*time.Millisecond, 200*time.Millisecond, 0, Failed, 0) // two intervals on
	r.Tick(3*s, nil, []float64{0}, []float64{0})
	res, series := r.Finish(3*s, 3*s, 0, Stop{})
	got := series.Column("failed")
	want := []float64{1, 0, 1}
	if !slices.Equal(got, want) {
		t.Fatalf("failed per interval %v, want %v", got, want)
	}
	if res.Requests.Failed != 2 {
		t.Fatalf("requests.failed %d, want 2", res.Requests.Failed)
	}
}
