package client

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// testEvent is one event of a trace, as a test reads it.
type testEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	S    string         `json:"s"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	ID   uint64         `json:"id"`
	Args map[string]any `json:"args"`
}

// runTraced runs cfg with a trace of sel and returns the outcome and the
// trace's events, failing unless the trace is valid JSON.
func runTraced(t *testing.T, cfg *Config, opt Options, sel TraceSelect) (*Outcome, []testEvent) {
	t.Helper()
	var b bytes.Buffer
	opt.Trace, opt.TraceSelect = &b, sel
	out, err := Run(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Series.Close() })
	var tr struct {
		TraceEvents []testEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &tr); err != nil {
		t.Fatalf("the trace is not valid JSON: %v", err)
	}
	return out, tr.TraceEvents
}

// deadlocking is the fail-deadlock scenario: writes take db then cache,
// reads cache then db, with no timeouts: requests soon park in a cycle.
func deadlocking() *Config {
	cfg := dd1(0)
	sem := cfg.Limiters[0].Kind
	cfg.Run.Requests, cfg.Run.Duration = 0, 30*time.Second
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 40}
	cfg.Limiters = []LimiterConfig{{Name: "db", Kind: sem, Params: models.Params{Permits: 4}}, {Name: "cache", Kind: sem, Params: models.Params{Permits: 4}}}
	cfg.Paths = []Path{{Name: "writes", Weight: 1, Limiters: []int{0, 1}}, {Name: "reads", Weight: 1, Limiters: []int{1, 0}}}
	cfg.Upstreams[0].Latency = upstream.Exponential{Average: 100 * ms}
	return cfg
}

// rowsAndSpans returns the request rows of a trace, and for each row its
// spans, instants and permit opens less closes.
func rowsAndSpans(evs []testEvent) (rows map[int]bool, spans map[int][]testEvent, instants map[int][]testEvent, permits map[uint64]int) {
	rows, spans, instants, permits = map[int]bool{}, map[int][]testEvent{}, map[int][]testEvent{}, map[uint64]int{}
	for _, e := range evs {
		if e.Pid == 0 {
			continue
		}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				rows[e.Tid] = true
			}
		case "X":
			spans[e.Tid] = append(spans[e.Tid], e)
		case "i":
			instants[e.Tid] = append(instants[e.Tid], e)
		case "b":
			permits[e.ID]++
		case "e":
			permits[e.ID]--
		}
	}
	return rows, spans, instants, permits
}

// A deadlocked run's trace shows the requests parked on acquire() when it
// stopped: each has a span of its wait on the limiter it is parked on,
// running to the stop and marked unfinished; every permit held is
// closed at the stop; and the run's process says it stopped, and when.
func TestTraceShowsRequestsParkedAtTheStop(t *testing.T) {
	out, evs := runTraced(t, deadlocking(), Options{}, TraceSelect{Requests: MaxTraceRequests})
	if out.Stall == nil || len(out.Stall.Cycle) == 0 {
		t.Fatalf("the run did not deadlock: %+v", out.Stall)
	}
	stopUs := float64(out.Stall.At) / 1e3
	req := out.Results.Requests
	if req.InProgress < 100 {
		t.Fatalf("%d requests in progress at the stall: the test needs many", req.InProgress)
	}
	rows, spans, _, permits := rowsAndSpans(evs)
	if int64(len(rows)) != req.Arrived {
		t.Fatalf("%d rows, want one for each of the %d arrivals", len(rows), req.Arrived)
	}
	waiting := 0
	for tid := range rows {
		if len(spans[tid]) == 0 {
			t.Fatalf("request %d has no span", tid)
		}
		for _, s := range spans[tid] {
			if s.Args["unfinished"] != true {
				continue
			}
			if !strings.HasPrefix(s.Name, "limiter ") || s.Args["stop"] != "deadlock" || s.Ts+s.Dur != stopUs || s.Dur < 0 {
				t.Fatalf("request %d: unfinished span %+v, want a limiter wait ending at the stall, %v µs", tid, s, stopUs)
			}
			waiting++
		}
	}
	if int64(waiting) != req.InProgress {
		t.Errorf("%d unfinished limiter waits, want the %d requests in progress", waiting, req.InProgress)
	}
	for id, n := range permits {
		if n != 0 {
			t.Fatalf("permit span %d opened %d more times than closed", id, n)
		}
	}
	var marked, renamed bool
	for _, e := range evs {
		marked = marked || e.Pid == 0 && e.Ph == "i" && e.S == "g" && e.Ts == stopUs && e.Name == "stopped: deadlock"
		if e.Pid == 0 && e.Ph == "M" && e.Name == "process_name" {
			renamed = strings.Contains(e.Args["name"].(string), "stopped at 30s: deadlock")
		}
	}
	if !marked || !renamed {
		t.Errorf("the stop is not marked on the run's process (instant %v, name %v)", marked, renamed)
	}
	if s := out.Trace; s == nil || s.Written != len(rows) || s.Unfinished != int(req.InProgress) || s.Stop != "deadlock" {
		t.Errorf("summary %+v", out.Trace)
	}
}

// With an outcome filter, a request still open at the stop has no
// outcome: it is left out, and the summary counts it.
func TestTraceOutcomeFilterLeavesOutTheUnfinished(t *testing.T) {
	out, evs := runTraced(t, deadlocking(), Options{}, TraceSelect{Requests: MaxTraceRequests, Outcomes: []string{"ok"}})
	rows, _, _, _ := rowsAndSpans(evs)
	req := out.Results.Requests
	if int64(len(rows)) != req.Succeeded {
		t.Errorf("%d rows, want the %d requests that succeeded", len(rows), req.Succeeded)
	}
	if s := out.Trace; s.Followed != int(req.Arrived) || s.Unfinished != int(req.InProgress) || s.Written != int(req.Succeeded) {
		t.Errorf("summary %+v, arrived %d, in progress %d", s, req.Arrived, req.InProgress)
	}
}

// interruptAfter interrupts a run once n requests have ended.
type interruptAfter struct {
	stop  *atomic.Bool
	n     int
	ended int
}

func (o *interruptAfter) Sent(time.Duration, time.Duration, int) {}
func (o *interruptAfter) Refused(time.Duration, int, int)        {}
func (o *interruptAfter) Ended(time.Duration, time.Duration, int, metrics.RequestEnd) {
	if o.ended++; o.ended == o.n {
		o.stop.Store(true)
	}
}

// An interrupted run's trace says it is incomplete, on the run's process
// and with an instant at the stop, and closes the spans of the requests
// in flight or waiting then.
func TestInterruptedTraceIsMarkedIncomplete(t *testing.T) {
	cfg := dd1(100_000) // the engine looks at the flag every few thousand events
	var stop atomic.Bool
	out, evs := runTraced(t, cfg, Options{Interrupt: &stop, Observer: &interruptAfter{stop: &stop, n: 20}}, TraceSelect{Requests: MaxTraceRequests})
	if !out.Interrupted {
		t.Fatal("the run was not interrupted")
	}
	name := ""
	marked := false
	for _, e := range evs {
		if e.Pid == 0 && e.Ph == "M" && e.Name == "process_name" {
			name = e.Args["name"].(string)
		}
		marked = marked || e.Pid == 0 && e.Ph == "i" && e.Name == "stopped: interrupted; trace incomplete" && e.Args["complete"] == false
	}
	if !strings.Contains(name, "interrupted; trace incomplete") || !marked {
		t.Errorf("the run's process is %q, instant at the stop %v: the trace does not say it is incomplete", name, marked)
	}
	_, spans, _, _ := rowsAndSpans(evs)
	open := map[string]int{}
	for _, ss := range spans {
		for _, s := range ss {
			if s.Args["unfinished"] == true && s.Args["stop"] == "interrupted" {
				open[strings.SplitN(s.Name, " ", 2)[0]]++
			}
		}
	}
	// At most one request holds the permit, in flight; the others wait
	// on it.
	if n := out.Results.Requests.InProgress; open["attempt"] > 1 || int64(open["attempt"]+open["limiter"]) != n || len(open) > 2 || n < 100 {
		t.Errorf("unfinished spans %v, want one for each of the %d requests in progress, at most one in flight", open, n)
	}
}

// A request refused at once has an instant at the refusal that names the
// bound that refused it: client.max_waiting, the ingest queue's
// capacity, or a limiter's max_waiting. Each refusal counted has one.
func TestTraceMarksRefusals(t *testing.T) {
	tasks := dd1(400)
	tasks.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 12}
	tasks.MaxParked = models.AtMost(2)
	queue := dd1(400)
	queue.Workload.Arrivals = tasks.Workload.Arrivals
	queue.Ingest = &Ingest{Capacity: models.AtMost(1), Workers: 1}
	limiter := dd1(400)
	limiter.Workload.Arrivals = tasks.Workload.Arrivals
	limiter.Limiters[0].Params.MaxWaiting = models.AtMost(1)
	for _, c := range []struct {
		cfg   *Config
		bound string
	}{{tasks, "client.max_waiting"}, {queue, "client.queue_capacity"}, {limiter, "client.limiter.sem.max_waiting"}} {
		out, evs := runTraced(t, c.cfg, Options{}, TraceSelect{Requests: MaxTraceRequests, Outcomes: []string{"rejected"}})
		rows, spans, instants, _ := rowsAndSpans(evs)
		req := out.Results.Requests
		if req.Rejected < 50 || int64(len(rows)) != req.Rejected {
			t.Fatalf("%s: %d rows, %d rejected: want many, one row each", c.bound, len(rows), req.Rejected)
		}
		for tid := range rows {
			is := instants[tid]
			if len(spans[tid]) != 0 || len(is) != 1 || is[0].Name != "rejected by "+c.bound || is[0].Args["bound"] != c.bound {
				t.Fatalf("%s: request %d has spans %v and instants %v, want one instant of its refusal", c.bound, tid, spans[tid], is)
			}
		}
	}
}

// The summary tells an empty trace's cause: nothing arrived from
// TraceSelect.From, or none of the requests followed ended as asked.
func TestTraceSummaryOfAnEmptyTrace(t *testing.T) {
	out, evs := runTraced(t, dd1(50), Options{}, TraceSelect{From: time.Hour})
	if rows, _, _, _ := rowsAndSpans(evs); len(rows) != 0 {
		t.Fatalf("%d rows from an hour in", len(rows))
	}
	if s := out.Trace; s.Written != 0 || s.Followed != 0 || s.LastArrival != 5*time.Second || s.Stop != "" {
		t.Errorf("from an hour in: summary %+v", s)
	}
	out, _ = runTraced(t, dd1(50), Options{}, TraceSelect{Outcomes: []string{"timed_out"}})
	if s := out.Trace; s.Written != 0 || s.Followed != 50 || s.Unfinished != 0 {
		t.Errorf("timed_out: summary %+v", s)
	}
}

// An xrate limiter that cannot grant before the deadline fails the
// request at once: an instant on its row says so.
func TestTraceMarksTooLate(t *testing.T) {
	cfg := dd1(200)
	xr, err := models.LookupKind("xrate")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Limiters = []LimiterConfig{{Name: "x", Kind: xr, Params: models.Params{Rate: 2, Burst: 1}}}
	cfg.AcquireTimeout = 50 * ms
	out, evs := runTraced(t, cfg, Options{}, TraceSelect{Outcomes: []string{"acquire_timeout"}})
	rows, spans, instants, _ := rowsAndSpans(evs)
	if n := out.Results.Requests.AcquireTimeouts; n < 50 || int64(len(rows)) != n {
		t.Fatalf("%d rows, %d acquisition timeouts: want many, one row each", len(rows), n)
	}
	for tid := range rows {
		is := instants[tid]
		if len(spans[tid]) != 0 || len(is) != 1 || is[0].Name != "limiter x: too late for the deadline" {
			t.Fatalf("request %d has spans %v and instants %v, want one instant of its failure", tid, spans[tid], is)
		}
	}
}
