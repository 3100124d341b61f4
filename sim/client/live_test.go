package client

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/upstream"
)

// The live server admits what its quota model says, over real HTTP on the
// wall clock (four times as fast), with 200/s offered (every 5 ms).
//
// A sliding window of 50 per second over 9.5 s admits at most 500: ten
// windows of 50 from the first request on, whatever the start-up delay
// and the lateness of the last arrivals (each up to about 0.4 s); exactly
// 500 on a machine that keeps up. A loaded machine can only lower it: a
// stall of the load generator leaves part of a window unused (350 seen
// with both cores busy with other work). A window the live clock scaled
// wrongly would miss both ways: twice too long admits 250, too short
// more than 500.
//
// A token bucket of 50/s with a burst of 100 over 10 s admits 50 × 10 +
// 100, less what the bucket gains while it sits full before the first
// request reaches the server (one admission per 20 ms of start-up, a few
// milliseconds unloaded): 600 ± 1, and at least 580 on a loaded machine
// (593 seen while a full build and test run shared both cores: 35 ms of
// wall-clock start-up). Arrivals that reach the server late on a loaded
// machine give the bucket that much longer to refill: it never admits
// more than 100 + 50 × the run's elapsed time (604 seen under the race
// detector, the run lasting 10.07 s). A clock scaled wrongly misses by far
// more: twice too slow admits 350, twice too fast 1,100.
func TestLiveQuotaAdmitsWhatTheModelSays(t *testing.T) {
	run := func(d time.Duration, q upstream.Quota) (ok, answered int64, elapsed float64) {
		cfg := dd1(0)
		cfg.Limiters = nil
		cfg.Run.Requests = 0
		cfg.Run.Duration = d
		cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindConstant, Rate: 200}
		cfg.Upstreams = []upstream.Config{{Host: "api", Latency: upstream.Constant{Value: 20 * ms},
			Quotas: []upstream.Quota{q}, RejectLatency: ms}}
		out, err := RunLive(context.Background(), cfg, LiveOptions{Speed: 4})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Results
		if want := int64(d/(5*ms)) - 1; r.Requests.Arrived != want {
			t.Fatalf("%d arrivals, want %d: the arrival process must keep its schedule on the wall clock", r.Requests.Arrived, want)
		}
		return r.Requests.Succeeded, r.Requests.Succeeded + r.Requests.Throttled429, r.ElapsedS
	}
	if ok, n, _ := run(9500*ms, upstream.Quota{Kind: "sliding_window", Limit: 50, Window: time.Second}); ok > 500 || ok < 300 || n != 1899 {
		t.Errorf("sliding window: %d admitted of %d answered, want 500 (at most, and over 300 however loaded the machine) of 1,899", ok, n)
	}
	ok, n, elapsed := run(10*time.Second, upstream.Quota{Kind: "token_bucket", Rate: 50, Burst: 100})
	if most := int64(100+50*max(10, elapsed)) + 1; ok < 580 || ok > most || n != 1999 {
		t.Errorf("token bucket: %d admitted of %d answered in %.3fs, want 50 × 10 + 100 = 600 (± 1, less one per 20 ms of start-up, at most %d) of 1,999", ok, n, elapsed, most)
	}
}

// The live protocol carries every field of an answer the client reads.
func TestLiveAnswerRoundTrips(t *testing.T) {
	for _, a := range []upstream.Answer{
		{OK: true, Remaining: -1, RemainingCost: -1},
		{OK: true, Remaining: 7, Reset: 3 * time.Second, RemainingCost: -1},
		{Status: 429, RetryAfter: 1500 * ms, HasRetryAfter: true, Remaining: 0, Reset: 2250 * ms, RemainingCost: -1},
		{Status: 429, Remaining: -1, RemainingCost: -1},
		{Status: 503, Remaining: -1, RemainingCost: -1}, // nginx's refusal
		{Status: 403, Remaining: -1, RemainingCost: -1},
		// A language model's answer: the output tokens it used, and both
		// families of rate-limit headers.
		{OK: true, Cost: 312, Remaining: 480, Reset: 1200 * ms, RemainingCost: 15000, ResetCost: 54 * time.Second, LimitCost: 160000},
		{Status: 429, RetryAfter: 2 * time.Second, HasRetryAfter: true, Remaining: -1, RemainingCost: 0, ResetCost: 60 * time.Second, LimitCost: 160000},
	} {
		w := httptest.NewRecorder()
		writeAnswer(w, a)
		got, err := parseAnswer(w.Code, w.Header())
		if err != nil || got != a {
			t.Errorf("answer %+v came back as %+v (%v)", a, got, err)
		}
	}
	if _, err := parseAnswer(500, nil); err == nil {
		t.Error("a 500 read as an answer")
	}
}

// redis_rate takes a whole number of requests per period: a limit of
// 22.5/s at speed 4 keeps its emission interval, 1 ÷ 22.5 s of scenario
// time, as a quarter of that on the wall clock.
func TestRedisLimitKeepsTheRate(t *testing.T) {
	l := redisLimit(22.5, 23, 4)
	wall := l.Period.Seconds() / float64(l.Rate)
	if math.Abs(wall*4-1/22.5) > 1e-12 || l.Burst != 23 {
		t.Fatalf("limit %v: emission interval %v s of wall time, want %v", l, wall, 1/22.5/4)
	}
}

// A live run keeps its interval rows while only HTTP requests are out (no
// event scheduled): three requests of 5 s each give as many rows live as
// simulated, and the run's clock starts when the run does, not when the
// set-up began (no burst of arrivals in the first row).
func TestLiveKeepsTicksWhileRequestsAreOut(t *testing.T) {
	cfg := dd1(3)
	cfg.Limiters = nil
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindConstant, Rate: 1}
	cfg.Upstreams = []upstream.Config{{Host: "api", Latency: upstream.Constant{Value: 5 * time.Second}}}
	sim, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := RunLive(context.Background(), cfg, LiveOptions{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Ticks that stopped while requests were out would cut the live rows
	// short. A completion that comes back late on a loaded machine (the
	// race detector, other jobs) may end the live run just past an
	// interval's end, which adds one row.
	if s, l := sim.Series.Len(), live.Series.Len(); l < s || l > s+1 {
		t.Errorf("%d interval rows live, %d simulated", l, s)
	}
	if a := live.Series.Column("arrivals"); len(a) < 3 || a[0] > 1 {
		t.Errorf("arrivals per row %v: want one a second from the start", a)
	}
}

// Over real HTTP, Envoy's adaptive concurrency filter answers its 503s at
// the server's door: with 200/s offered (every 5 ms) to two workers of
// 20 ms, the filter's limit starts pinned at 3 while it measures the
// least latency, so some requests are refused at once; every request is
// answered (OK, or refused and failed: the client does not treat 503 as
// a 429), and a refusal at the door never frees a worker it did not take:
// two workers of 20 ms serve at most 100 a second (a refusal that freed
// one would let more than two run at once).
func TestLiveAdaptiveConcurrencyRefusesAtTheDoor(t *testing.T) {
	cfg := dd1(0)
	cfg.Limiters = nil
	cfg.Run.Requests = 0
	cfg.Run.Duration = 2 * time.Second
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindConstant, Rate: 200}
	q := upstream.Quota{Kind: "envoy_adaptive_concurrency", SampleAggregatePercentile: 50, ConcurrencyUpdateInterval: 100 * ms,
		MaxConcurrencyLimit: 1000, MinRTTCalc: upstream.DefaultMinRTTCalc()}
	cfg.Upstreams = []upstream.Config{{Host: "api", Latency: upstream.Constant{Value: 20 * ms},
		Quotas: []upstream.Quota{q}, RejectLatency: ms, Workers: 2}}
	out, err := RunLive(context.Background(), cfg, LiveOptions{Speed: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results.Requests
	if r.Succeeded == 0 || r.Failed == 0 || r.Succeeded+r.Failed != r.Arrived {
		t.Fatalf("%d arrived, %d succeeded, %d failed: want some of each, every request answered", r.Arrived, r.Succeeded, r.Failed)
	}
	if most := int64(100*out.Results.ElapsedS) + 2; r.Succeeded > most {
		t.Fatalf("%d succeeded in %.3fs: more than two workers of 20 ms serve (%d)", r.Succeeded, out.Results.ElapsedS, most)
	}
}

// A Redis that does not answer is the store a live run cannot use
// (ErrLiveStore, which the command line reads as invalid input), not an
// internal error; the address is named.
func TestUnansweredRedisIsALiveStoreError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // give up after the first try rather than after 5 s
	_, err := startRedis(ctx, "127.0.0.1:1")
	if !errors.Is(err, ErrLiveStore) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("err %v: want ErrLiveStore naming the address", err)
	}
}
