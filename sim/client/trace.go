package client

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
)

// DefaultTraceRequests is how many requests --trace follows by default.
const DefaultTraceRequests = 2000

// MaxTraceRequests caps how many requests a trace may follow.
const MaxTraceRequests = 200_000

// TraceOutcomes names the request outcomes a trace can be limited to
// (--trace-outcome), in the order users read them.
var TraceOutcomes = []string{"ok", "429", "rejected", "acquire_timeout", "timed_out", "failed"}

// traceOutcome maps a request's end to its name in TraceOutcomes.
func traceOutcome(o metrics.RequestEnd) string {
	switch o {
	case metrics.Succeeded:
		return "ok"
	case metrics.Throttled:
		return "429"
	case metrics.RejectedIngest, metrics.RejectedLimiter:
		return "rejected"
	case metrics.AcquireTimeout:
		return "acquire_timeout"
	case metrics.Failed:
		return "failed"
	}
	return "timed_out"
}

// TraceSelect says which requests a trace follows.
type TraceSelect struct {
	// Requests is how many requests to write (DefaultTraceRequests when 0,
	// at most MaxTraceRequests).
	Requests int
	// From: only requests arriving at or after this simulated instant.
	From time.Duration
	// Outcomes, when not empty, keeps only requests that end so (names of
	// TraceOutcomes); their events are held until they end.
	Outcomes []string
}

// tracer writes the Chrome trace-event format (open the file in Perfetto or
// chrome://tracing): one process per client instance with one row per
// request and a span for each stage, async spans for the permits a request
// holds, an instant for each 429, flow arrows from an attempt answered 429
// to the next attempt; and a "run" process with counter tracks (in flight,
// the ingest queue, each limiter's waiting line and usage, paused hosts per
// interval) and an instant for every host pause.
type tracer struct {
	w     *bufio.Writer
	first bool
	err   error

	limit    int
	from     time.Duration
	outcomes map[string]bool     // nil: every outcome
	held     map[uint32][]string // events of followed requests, until their outcome is known
	written  int                 // requests written (followed, without an outcome filter)
	open     int                 // followed requests that have not ended
	followed int                 // requests followed
	left     int                 // followed requests still open when the run stopped
}

// runPid is the trace process of run-wide tracks.
const runPid = 0

func newTracer(w io.Writer, sel TraceSelect, instances int) *tracer {
	n := sel.Requests
	if n <= 0 {
		n = DefaultTraceRequests
	}
	t := &tracer{w: bufio.NewWriter(w), first: true, limit: min(n, MaxTraceRequests), from: sel.From}
	if len(sel.Outcomes) > 0 {
		t.outcomes, t.held = map[string]bool{}, map[uint32][]string{}
		for _, o := range sel.Outcomes {
			t.outcomes[o] = true
		}
	}
	t.raw(`{"displayTimeUnit":"ms","traceEvents":[`)
	t.event(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"args":{"name":"run"}}`, runPid))
	for k := range instances {
		t.event(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"args":{"name":"client instance %d"}}`, k+1, k))
	}
	return t
}

func (t *tracer) raw(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

func (t *tracer) event(s string) {
	if !t.first {
		t.raw(",\n")
	}
	t.first = false
	t.raw(s)
}

func us(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', -1, 64) }

// active reports whether run-wide events at now belong in the trace: from
// the first instant followed until every followed request has ended.
func (t *tracer) active(now time.Duration) bool {
	return now >= t.from && (t.written < t.limit || t.open > 0)
}

// follow decides, when request r arrives, whether the trace follows it,
// and names its row.
func (t *tracer) follow(r *request, now time.Duration, names func(r *request) string) {
	if now < t.from || t.written >= t.limit {
		return
	}
	r.traced = true
	t.open++
	t.followed++
	if t.outcomes == nil {
		t.written++
	}
	t.req(r, fmt.Sprintf(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":%s}}`,
		r.instance+1, r.seq, strconv.Quote(fmt.Sprintf("request %d (%s)", r.seq, names(r)))))
}

// req adds an event of request r: written now, or held until r ends when
// the trace keeps only some outcomes.
func (t *tracer) req(r *request, s string) {
	if !r.traced {
		return
	}
	if t.outcomes == nil {
		t.event(s)
		return
	}
	t.held[r.seq] = append(t.held[r.seq], s)
}

// ended writes or drops a followed request's held events by its outcome.
func (t *tracer) ended(r *request, o metrics.RequestEnd) {
	if !r.traced {
		return
	}
	r.traced = false
	t.open--
	if t.outcomes == nil {
		return
	}
	events := t.held[r.seq]
	delete(t.held, r.seq)
	if !t.outcomes[traceOutcome(o)] || t.written >= t.limit {
		return
	}
	t.written++
	for _, s := range events {
		t.event(s)
	}
}

// span records stage name of request r from start to end; args are extra
// JSON members ("key":value,…) or "".
func (t *tracer) span(r *request, name string, start, end time.Duration, detail string) {
	if !r.traced {
		return
	}
	args := ""
	if detail != "" {
		args = `{"detail":` + strconv.Quote(detail) + `}`
	}
	t.spanArgs(r, name, start, end, args)
}

// spanArgs is span with its args given as a JSON object ("": none).
func (t *tracer) spanArgs(r *request, name string, start, end time.Duration, args string) {
	if !r.traced {
		return
	}
	if args != "" {
		args = `,"args":` + args
	}
	t.req(r, fmt.Sprintf(`{"name":%s,"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s%s}`,
		strconv.Quote(name), r.instance+1, r.seq, us(start), us(end-start), args))
}

// instant marks a moment of request r's row (a 429).
func (t *tracer) instant(r *request, name string, at time.Duration) {
	t.req(r, fmt.Sprintf(`{"name":%s,"ph":"i","s":"t","pid":%d,"tid":%d,"ts":%s}`, strconv.Quote(name), r.instance+1, r.seq, us(at)))
}

// flow draws an arrow from a request's attempt answered 429 (phase "s")
// to its next attempt ("f").
func (t *tracer) flow(r *request, phase string, at time.Duration) {
	id := uint64(r.seq)<<16 | uint64(r.attempt)
	bind := ""
	if phase == "f" {
		bind = `,"bp":"e"`
	}
	t.req(r, fmt.Sprintf(`{"name":"retry","cat":"retry","ph":%q,"id":%d,"pid":%d,"tid":%d,"ts":%s%s}`, phase, id, r.instance+1, r.seq, us(at), bind))
}

// permit opens ("b") or closes ("e") the async span of a permit of limiter
// name held by request r: overlapping holds show which request holds what
// while it waits for what (a deadlock's cycle).
func (t *tracer) permit(r *request, phase string, li int, name string, at time.Duration) {
	t.req(r, fmt.Sprintf(`{"name":%s,"cat":"permit","ph":%q,"id":%d,"pid":%d,"tid":%d,"ts":%s}`,
		strconv.Quote("holds "+name), phase, uint64(r.seq)<<8|uint64(li), r.instance+1, r.seq, us(at)))
}

// pauseStart marks a host pause of an instance on the run's row.
func (t *tracer) pauseStart(inst int, host string, at, until time.Duration) {
	if !t.active(at) {
		return
	}
	t.event(fmt.Sprintf(`{"name":%s,"ph":"i","s":"p","pid":%d,"tid":0,"ts":%s,"args":{"until_s":%s}}`,
		strconv.Quote("pause "+host), inst+1, us(at), strconv.FormatFloat(until.Seconds(), 'f', -1, 64)))
}

// counters writes one interval's run-wide counter tracks, starting at
// from: each column of cols whose name passes keep, with its value.
func (t *tracer) counters(from time.Duration, cols []string, row []float64, keep func(string) (string, bool)) {
	if !t.active(from) {
		return
	}
	for i, c := range cols {
		name, ok := keep(c)
		if !ok || i >= len(row) {
			continue
		}
		t.event(fmt.Sprintf(`{"name":%s,"ph":"C","pid":%d,"ts":%s,"args":{"value":%s}}`,
			strconv.Quote(name), runPid, us(from), strconv.FormatFloat(row[i], 'f', -1, 64)))
	}
}

// counterTrack names the timeseries.csv columns drawn as counter tracks.
func counterTrack(col string) (string, bool) {
	switch col {
	case "in_flight":
		return "in flight", true
	case "in_system":
		return "in the system", true
	case "queue_depth":
		return "ingest queue", true
	}
	for _, suffix := range []string{".waiting", ".usage", ".paused"} {
		if name, ok := strings.CutSuffix(col, suffix); ok {
			return name + " " + strings.TrimPrefix(suffix, "."), true
		}
	}
	return "", false
}

func (t *tracer) close() error {
	t.raw("\n]}\n")
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}

// traceNames says where request r goes, for its row in a trace: host,
// and tenant and path when the scenario has more than one.
func (p *pipeline) traceNames(r *request) string {
	w := p.cfg.Workload
	s := "host " + w.Hosts[r.host].Name
	if len(w.Tenants) > 1 {
		s += ", tenant " + w.Tenants[r.tenant].Name
	}
	if len(p.cfg.Paths) > 1 {
		s += ", path " + p.cfg.Paths[r.path].Name
	}
	return s
}
