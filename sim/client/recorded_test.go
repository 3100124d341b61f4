package client

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
)

// recordedList is a Recorded over a slice.
type recordedList struct {
	arrivals []RecordedArrival
	i        int
}

func (l *recordedList) Next() (RecordedArrival, bool) {
	if l.i >= len(l.arrivals) {
		return RecordedArrival{}, false
	}
	l.i++
	return l.arrivals[l.i-1], true
}

// traceObserver writes what it is told, one line an event.
type traceObserver struct{ b strings.Builder }

func (o *traceObserver) Sent(now, arrived time.Duration, tenant int) {
	fmt.Fprintf(&o.b, "sent %v (arrived %v, tenant %d)\n", now, arrived, tenant)
}
func (o *traceObserver) Refused(arrived time.Duration, tenant, status int) {
	fmt.Fprintf(&o.b, "refused %v %d\n", arrived, status)
}
func (o *traceObserver) Ended(now, arrived time.Duration, tenant int, e metrics.RequestEnd) {
	fmt.Fprintf(&o.b, "ended %v (arrived %v) ok %v\n", now, arrived, e == metrics.Succeeded)
}

// Recorded arrivals replace the workload's process, each at its own
// instant, to its own tenant, with its own latency: through one permit
// the second waits for the first's recorded 400 ms, the third takes the
// model's 250 ms.
func TestRecordedArrivalsDriveTheClient(t *testing.T) {
	cfg := dd1(0)
	cfg.Run.Requests, cfg.Run.Duration = 0, time.Second
	cfg.Workload.Tenants = []Tenant{{Share: Share{Name: "a", Weight: 1}}, {Share: Share{Name: "b", Weight: 1}}}
	rec := &recordedList{arrivals: []RecordedArrival{
		{At: 10 * ms, Tenant: 1, Cost: 1, Latency: 400 * ms},
		{At: 20 * ms, Tenant: 0, Cost: 1, Latency: 0},
		{At: 900 * ms, Tenant: 1, Cost: 1, Latency: 50 * ms},
	}}
	obs := &traceObserver{}
	out, err := Run(cfg, Options{Recorded: rec, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	want := `sent 10ms (arrived 10ms, tenant 1)
ended 410ms (arrived 10ms) ok true
sent 410ms (arrived 20ms, tenant 0)
ended 660ms (arrived 20ms) ok true
sent 900ms (arrived 900ms, tenant 1)
ended 950ms (arrived 900ms) ok true
`
	if got := obs.b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if out.Results.Requests.Succeeded != 3 {
		t.Errorf("%d succeeded, want 3", out.Results.Requests.Succeeded)
	}
	cfg.Run.Replications = 2
	if _, err := Run(cfg, Options{Recorded: &recordedList{}}); err == nil {
		t.Error("recorded arrivals over two replications: no error")
	}
}
