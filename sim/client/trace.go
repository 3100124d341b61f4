package client

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultTraceRequests is how many requests --trace follows by default.
const DefaultTraceRequests = 2000

// MaxTraceRequests caps how many requests a trace may follow.
const MaxTraceRequests = 200_000

// tracer writes per-request spans in the Chrome trace-event format (open
// the file in Perfetto or chrome://tracing): one process per client
// instance, one row per request, a span for each stage.
type tracer struct {
	w     *bufio.Writer
	limit uint32
	first bool
	err   error
}

func newTracer(w io.Writer, limit int, instances int) *tracer {
	t := &tracer{w: bufio.NewWriter(w), limit: uint32(limit), first: true}
	t.raw(`{"displayTimeUnit":"ms","traceEvents":[`)
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

// span records stage name of request r from start to end.
func (t *tracer) span(r *request, name string, start, end time.Duration, detail string) {
	if r.seq >= t.limit {
		return
	}
	args := ""
	if detail != "" {
		args = `,"args":{"detail":` + strconv.Quote(detail) + `}`
	}
	t.event(fmt.Sprintf(`{"name":%s,"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s%s}`,
		strconv.Quote(name), r.inst+1, r.seq, us(start), us(end-start), args))
}

// named gives request r's row its name when it arrives.
func (t *tracer) named(r *request) {
	if r.seq >= t.limit {
		return
	}
	t.event(fmt.Sprintf(`{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"request %d"}}`, r.inst+1, r.seq, r.seq))
}

func (t *tracer) close() error {
	t.raw("\n]}\n")
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}
