package upstream

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// closedLoop drives a server with clients that each send a request,
// wait for its answer, think, and send again: a tiny event loop over the
// server's Arrive, StartInto, Finish and Depart, with the server's workers
// a FIFO queue as the client model keeps them.
type closedLoop struct {
	srv     *Server
	workers int
	busy    int
	queue   []*loopRequest
	events  loopEvents
	seq     int
	think   time.Duration // after an answer
	backoff time.Duration // after a refusal
	refused int64
	served  int64
}

type loopRequest struct {
	arrived time.Duration
	answer  Answer
}

type loopEvent struct {
	at   time.Duration
	seq  int
	kind int // 0: a client sends, 1: the server answers
	req  *loopRequest
}

type loopEvents []loopEvent

func (e loopEvents) Len() int { return len(e) }
func (e loopEvents) Less(i, j int) bool {
	return e[i].at < e[j].at || (e[i].at == e[j].at && e[i].seq < e[j].seq)
}
func (e loopEvents) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *loopEvents) Push(x any)   { *e = append(*e, x.(loopEvent)) }
func (e *loopEvents) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

func (l *closedLoop) post(at time.Duration, kind int, r *loopRequest) {
	l.seq++
	heap.Push(&l.events, loopEvent{at: at, seq: l.seq, kind: kind, req: r})
}

// serve starts r's service at now on a free worker.
func (l *closedLoop) serve(now time.Duration, r *loopRequest) {
	l.busy++
	l.srv.StartInto(now, 1, &r.answer)
	l.post(now+r.answer.After, 1, r)
}

// run simulates until end, calling sample at every step of 100 ms.
func (l *closedLoop) run(clients int, end time.Duration, sample func(now time.Duration)) {
	for range clients {
		l.post(0, 0, nil)
	}
	next := 100 * ms
	for l.events.Len() > 0 {
		e := heap.Pop(&l.events).(loopEvent)
		for ; next <= e.at && next <= end; next += 100 * ms {
			sample(next)
		}
		if e.at > end {
			return
		}
		switch {
		case e.kind == 0:
			r := &loopRequest{arrived: e.at}
			switch {
			case !l.srv.Arrive(e.at, &r.answer):
				l.refused++
				l.post(e.at+r.answer.After+l.backoff, 0, nil)
			case l.busy < l.workers:
				l.serve(e.at, r)
			default:
				l.queue = append(l.queue, r)
			}
		default:
			l.served++
			l.busy--
			if e.req.answer.OK {
				l.srv.Finish(e.at, &e.req.answer)
			}
			l.srv.Depart(e.at, e.req.arrived)
			if len(l.queue) > 0 {
				r := l.queue[0]
				l.queue = l.queue[1:]
				l.serve(e.at, r)
			}
			l.post(e.at+l.think, 0, nil)
		}
	}
}

// newLoop builds a server of workers with a constant service time behind
// Envoy's adaptive concurrency filter (defaults, 100 ms updates).
func newLoop(t *testing.T, workers int, service time.Duration) *closedLoop {
	t.Helper()
	q := adaptiveQuota(DefaultMinRTTRequestCount)
	srv, err := NewServerWith(Config{Host: "api", Latency: Constant{Value: service}, Quotas: []Quota{q},
		RejectLatency: 5 * ms, Workers: workers},
		Streams{Latency: rand.New(rand.NewPCG(1, 1)), Jitter: jitterStream()})
	if err != nil {
		t.Fatal(err)
	}
	return &closedLoop{srv: srv, workers: workers, think: ms, backoff: 50 * ms}
}

// In front of W workers serving in a constant S, latency stays S up to W
// requests in flight and grows as c ÷ W × S beyond. The filter's fixed
// point, where the gradient times the limit plus its headroom gives the
// limit back, is then near L = W × (1 + buffer) + √(W × (1 + buffer)):
// for a 25% buffer, 25 + 5 = 30 at W = 20 and 12.5 + 3.5 = 16 at W = 10
// (the histogram's bins read the minimum and the samples alike, so they
// cancel to first order). With clients offering several times more, the
// limit settles there: its median outside the minimum-RTT measurements
// is within [0.85 L, 1.2 L] (without the headroom it would settle at
// W × 1.25, without the buffer at W + √W, both below), and the requests
// beyond it are refused.
func TestAdaptiveConcurrencySettlesAtTheKnee(t *testing.T) {
	for _, workers := range []int{10, 20} {
		knee := float64(workers)*1.25 + math.Sqrt(float64(workers)*1.25)
		l := newLoop(t, workers, 10*ms)
		var limits []float64
		l.run(int(4*knee), 90*time.Second, func(now time.Duration) {
			if now < 10*time.Second || l.srv.gate.measuring() {
				return
			}
			limit, _ := l.srv.ConcurrencyLimit(now)
			limits = append(limits, float64(limit))
		})
		slices.Sort(limits)
		median := limits[len(limits)/2]
		if median < 0.85*knee || median > 1.2*knee {
			t.Errorf("%d workers: median limit %v (p10 %v, p90 %v), want within [%.1f, %.1f] around %.1f",
				workers, median, limits[len(limits)/10], limits[len(limits)*9/10], 0.85*knee, 1.2*knee, knee)
		}
		if l.refused == 0 {
			t.Errorf("%d workers: no request refused under %d clients", workers, int(4*knee))
		}
		t.Logf("%d workers: median limit %v (p10 %v, p90 %v), knee %.1f; %d served, %d refused",
			workers, median, limits[len(limits)/10], limits[len(limits)*9/10], knee, l.served, l.refused)
	}
}

// Below min_concurrency requests in flight the filter never refuses one,
// even while it measures the minimum RTT.
func TestAdaptiveConcurrencyRefusesNothingAtLowLoad(t *testing.T) {
	l := newLoop(t, 20, 10*ms)
	l.run(DefaultMinConcurrency-1, 90*time.Second, func(time.Duration) {})
	if l.refused != 0 || l.served < 10000 || l.srv.gate.minRTTAt <= 60*time.Second {
		t.Fatalf("%d refused, %d served, next measurement at %v; want none refused over two measurements", l.refused, l.served, l.srv.gate.minRTTAt)
	}
}
