package client

import (
	"fmt"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
)

// TraceSummary says what a trace holds once its run is over, so that a
// caller can explain a trace that holds no request.
type TraceSummary struct {
	// Written is how many requests the trace holds.
	Written int
	// Followed is how many requests the trace followed: those arriving
	// from TraceSelect.From while it still took more, whatever their end.
	Followed int
	// Unfinished is how many followed requests were still open when the
	// run stopped. Their open spans end at the stop, marked unfinished;
	// with TraceSelect.Outcomes they have no outcome and are left out.
	Unfinished int
	// Stop says how the run stopped ("deadlock", "stalled", "interrupted",
	// "max_events guard": a guard by its name), "" when it ran to its end;
	// At is when.
	Stop string
	At   time.Duration
	// LastArrival is when the run's last request arrived.
	LastArrival time.Duration
}

// traceStopOf names stop for the trace: "deadlock", "stalled", "NAME
// guard", "interrupted", "failed" for a run that failed (not known), and
// "" for one that ran to its end.
func traceStopOf(stop metrics.Stop, known bool) string {
	switch {
	case !known:
		return "failed"
	case stop.Kind == metrics.Deadlocked:
		return "deadlock"
	case stop.Kind == metrics.Stalled:
		return "stalled"
	case stop.Kind == metrics.GuardTripped:
		return stop.Guard + " guard"
	case stop.Kind == metrics.Interrupted:
		return "interrupted"
	}
	return ""
}

// finishTrace ends the trace of a run that stopped so (traceStopOf): every
// followed request still open has its open spans and permits closed at
// the stop, marked unfinished, and a run that stopped early says so on
// the run's process. It returns what the trace holds.
func (p *pipeline) finishTrace(how metrics.Stop, known bool) (*TraceSummary, error) {
	t, now, stop := p.trace, p.eng.Now(), traceStopOf(how, known)
	why := stop
	if why == "" {
		why = "the run ended"
	}
	p.requests.Each(func(_ uint32, r *request) {
		if !r.traced {
			return
		}
		p.traceOpenSpan(now, r, why)
		for li := range p.cfg.Limiters {
			if r.held&heldBit(li) != 0 {
				t.permit(r, "e", li, p.cfg.Limiters[li].Name, now)
			}
		}
		t.unfinished(r)
	})
	if stop != "" {
		t.stopped(stop, now)
	}
	sum := &TraceSummary{Written: t.written, Followed: t.followed, Unfinished: t.left, Stop: stop, At: now, LastArrival: p.lastArrival}
	if err := t.close(); err != nil {
		return nil, fmt.Errorf("writing the trace: %w", err)
	}
	return sum, nil
}

// traceOpenSpan closes at now the span request r is in, as its stage
// would have drawn it, marked unfinished with why the run stopped.
func (p *pipeline) traceOpenSpan(now time.Duration, r *request, why string) {
	name, start, detail := "", r.since, ""
	switch r.phase {
	case phQueued:
		name = "ingest queue"
	case phPausing, phBackoff:
		name = sleepSpanName(r.phase)
	case phAcquiring:
		name, detail = "limiter "+p.cfg.Limiters[r.lim].Name, "waiting"
	case phServerQ, phInFlight:
		name, start = fmt.Sprintf("attempt %d → no answer", r.attempt+1), r.sentAt
		detail = p.cfg.Workload.Hosts[r.host].Name
	default:
		return
	}
	p.trace.spanArgs(r, name, start, now, `{"detail":`+strconv.Quote(detail)+`,"unfinished":true,"stop":`+strconv.Quote(why)+`}`)
}

// sleepSpanName names the span of a pause or back-off sleep.
func sleepSpanName(phase uint8) string {
	if phase == phBackoff {
		return "retry back-off"
	}
	return "paused after 429"
}

// unfinished ends a followed request still open when the run stopped:
// its events are written already, or, when the trace keeps only some
// outcomes, dropped (it has none).
func (t *tracer) unfinished(r *request) {
	r.traced = false
	t.open--
	t.left++
	if t.outcomes != nil {
		delete(t.held, r.seq)
	}
}

// stopped marks a run that stopped early at now: an instant across the
// whole trace, and the run's process renamed to say how and when it
// stopped (an interrupted run's trace "incomplete").
func (t *tracer) stopped(stop string, now time.Duration) {
	label := stop
	if stop == "interrupted" {
		label += "; trace incomplete"
	}
	t.event(fmt.Sprintf(`{"name":%s,"ph":"i","s":"g","pid":%d,"tid":0,"ts":%s,"args":{"stop":%s,"complete":false,"open_requests":%d}}`,
		strconv.Quote("stopped: "+label), runPid, us(now), strconv.Quote(stop), t.left))
	t.event(fmt.Sprintf(`{"name":"process_name","ph":"M","pid":%d,"args":{"name":%s}}`,
		runPid, strconv.Quote(fmt.Sprintf("run (stopped at %s: %s)", now, label))))
}

// refused marks on request r's row that bound refused it at once.
func (t *tracer) refused(r *request, bound string, at time.Duration) {
	t.req(r, fmt.Sprintf(`{"name":%s,"ph":"i","s":"t","pid":%d,"tid":%d,"ts":%s,"args":{"bound":%s}}`,
		strconv.Quote("rejected by "+bound), r.instance+1, r.seq, us(at), strconv.Quote(bound)))
}

// limiterBound names what of limiter name refused an acquisition with
// status st: its max_waiting (a full line), the request's size, or its
// own policy (shed).
func limiterBound(name string, st models.Status) string {
	key := "client.limiter." + name
	switch st {
	case models.Full:
		return key + ".max_waiting"
	case models.TooLarge:
		return key + " (the request takes more than it can ever grant)"
	case models.Shed:
		return key + " (shed by its policy)"
	}
	return key + " (" + st.String() + ")"
}
