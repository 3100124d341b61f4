package upstream

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCostWindowChargesRevealedCost: a tokens-per-minute window of 1,000
// counting cost, with 100 requests a minute beside it. Each request's own
// cost (300) is taken when it starts and the cost its response reveals
// (200, drawn from response_cost) when it completes; the tokens family of
// headers reads what is left and when the window ends, exactly, while the
// requests family reads the request quota. It catches a cost quota
// charged one per request, a response cost never charged or charged at
// the start, and headers mixing the two families.
func TestCostWindowChargesRevealedCost(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: 2 * time.Second}, Headers: true,
		ResponseCost: Constant{Value: 200},
		Quotas: []Quota{
			{Kind: "fixed_window", Limit: 100, Window: time.Minute},
			{Kind: "fixed_window", Limit: 1000, Window: time.Minute, Unit: UnitCost},
		}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Start(10*time.Second, 300)
	if !a.OK || a.Cost != 200 || a.Remaining != 99 || a.RemainingCost != 700 || a.LimitCost != 1000 || a.ResetCost != 50*time.Second || a.Reset != 50*time.Second {
		t.Fatalf("first: %+v; want ok, cost 200, 99 requests and 700 tokens left, both resets 50s", a)
	}
	s.Finish(12*time.Second, &a) // 200 more: 500 taken
	b := s.Start(20*time.Second, 300)
	if !b.OK || b.RemainingCost != 200 {
		t.Fatalf("second: ok %v, %d tokens left; want ok and 1000 − 300 − 200 − 300 = 200", b.OK, b.RemainingCost)
	}
	s.Finish(22*time.Second, &b) // 1000 taken
	c := s.Start(30*time.Second, 1)
	if c.OK || c.RemainingCost != 0 || c.ResetCost != 30*time.Second || c.Remaining != 98 {
		t.Fatalf("third: %+v; want refused with 0 tokens left until the window's end (30s), 98 requests left", c)
	}
	names, counts := s.Rejections()
	if names[1] != "fixed_window 1000/1m0s cost" || counts[1] != 1 || counts[0] != 0 {
		t.Fatalf("rejected_by %v %v: want the cost window to have refused one, the request window none", names, counts)
	}
	if d := s.Start(60*time.Second, 1000); !d.OK || d.Remaining != 99 {
		t.Fatalf("the next window: %+v; want a request of the whole 1000 admitted, and the refused one to have taken no request", d)
	}
	if e := s.Start(61*time.Second, 1001); e.OK {
		t.Fatal("a request costing more than the quota's whole limit admitted")
	}
}

// TestCostBucketDebt: a token bucket of 100 tokens/s counting cost, burst
// 100, charged a 400-token response: it goes 300 into debt, refuses until
// it is refilled, and its Retry-After names the wait for the request's own
// cost, rounded up to whole seconds (3 s of debt plus 0.5 s for 50 tokens).
func TestCostBucketDebt(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: time.Second}, RetryAfter: RetryAfter{Reset: true},
		ResponseCost: Constant{Value: 400},
		Quotas:       []Quota{{Kind: "token_bucket", Rate: 100, Burst: 100, Unit: UnitCost}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Start(0, 100)
	if !a.OK {
		t.Fatal("a full bucket refused its own burst")
	}
	s.Finish(time.Second, &a) // level: 0 − 100 + 100 (refill) − 400 = −300 at 1 s
	r := s.Start(time.Second, 50)
	if r.OK || !r.HasRetryAfter || r.RetryAfter != 4*time.Second {
		t.Fatalf("in debt: %+v; want refused with Retry-After 4s (3.5s rounded up)", r)
	}
	if !s.Start(4500*time.Millisecond, 50).OK {
		t.Fatal("refused at 4.5 s, when the debt is paid and 50 tokens are back")
	}
}

// TestCostQuotaKinds: a quota counts cost only where it can be charged
// after the fact; the rest are refused by name.
func TestCostQuotaKinds(t *testing.T) {
	lat := Constant{Value: time.Millisecond}
	for _, q := range []Quota{
		{Kind: "concurrency", Permits: 3, Unit: UnitCost},
		{Kind: "sliding_window", Limit: 3, Window: time.Second, Unit: UnitCost},
		{Kind: "fixed_window", Limit: 3, Window: time.Second, Unit: "tokens"},
	} {
		if _, err := NewServer(Config{Host: "h", Latency: lat, Quotas: []Quota{q}}, rand.New(rand.NewPCG(1, 2)), nil); err == nil {
			t.Errorf("%s with unit %q accepted", q.Kind, q.Unit)
		}
	}
}

// TestCountDraws: a count's draws are whole, never below the floor, and
// its lognormal has the median it was given; families a count cannot take
// are refused.
func TestCountDraws(t *testing.T) {
	c, err := NewCount(LogNormal{Median: 1500, Sigma: 0.8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	below := 0
	const n = 20000
	for range n {
		x := c.Sample(r)
		if x < 1 {
			t.Fatalf("draw %d below the floor 1", x)
		}
		if x < 1500 {
			below++
		}
	}
	if f := float64(below) / n; math.Abs(f-0.5) > 0.02 {
		t.Errorf("%.3f of draws below the median 1500, want 0.5", f)
	}
	if k, ok := (Count{d: Constant{}, least: 1}).Constant(); !ok || k != 1 {
		t.Errorf("constant 0 with floor 1: %d %v", k, ok)
	}
	if _, err := NewCount(Pareto{Scale: 10, Shape: 2}, 1); !errors.Is(err, ErrSpec) {
		t.Errorf("pareto count: %v, want ErrSpec", err)
	}
}

// TestRefusedCounts: what a refused request counts against, as the
// scenario declares. An hourly-style window of 10 beside a per-second
// window of 3, five requests at 0: the two the per-second window refuses
// take nothing from the other (RefusedNone: 7 more pass, three a second
// from 1 s), or take from the window that admitted them (RefusedOthers: 5
// more). A bucket of
// 1/s that counts refused requests past its limit (RefusedAll) keeps a
// client that sends every half second locked out, where one that does not
// count them admits every other request.
func TestRefusedCounts(t *testing.T) {
	lat := Constant{Value: time.Millisecond}
	windows := []Quota{{Kind: "fixed_window", Limit: 10, Window: 10 * time.Second}, {Kind: "fixed_window", Limit: 3, Window: time.Second}}
	for _, c := range []struct {
		refused Refused
		later   int
	}{{RefusedNone, 7}, {RefusedOthers, 5}, {RefusedAll, 5}} {
		s, err := NewServer(Config{Host: "h", Latency: lat, Quotas: windows, Refused: c.refused}, rand.New(rand.NewPCG(1, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 5 {
			if a := s.Start(0, 1); a.OK != (k < 3) {
				t.Fatalf("refused %d: request %d at 0 ok=%v", c.refused, k, a.OK)
			}
		}
		n := 0
		for k := range 12 { // three a second from 1 s: the hourly-style window decides
			if s.Start(time.Duration(1+k/3)*time.Second, 1).OK {
				n++
			}
		}
		if n != c.later {
			t.Errorf("refused %d: %d passed at 1 s, want %d", c.refused, n, c.later)
		}
	}
	for _, c := range []struct {
		refused Refused
		ok      int
	}{{RefusedNone, 5}, {RefusedAll, 1}} {
		s, err := NewServer(Config{Host: "h", Latency: lat, Refused: c.refused, Quotas: []Quota{{Kind: "token_bucket", Rate: 1, Burst: 1}}},
			rand.New(rand.NewPCG(1, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		ok := 0
		for k := range 10 {
			if s.Start(time.Duration(k)*500*time.Millisecond, 1).OK {
				ok++
			}
		}
		if ok != c.ok {
			t.Errorf("bucket, refused %d: %d of 10 admitted, want %d", c.refused, ok, c.ok)
		}
	}
	if _, err := NewServer(Config{Host: "h", Latency: lat, Refused: RefusedAll, Quotas: []Quota{{Kind: "sliding_window", Limit: 3, Window: time.Second}}},
		rand.New(rand.NewPCG(1, 2)), nil); err == nil {
		t.Error("a sliding window counting refused requests past its limit accepted")
	}
}

// TestTokenHeadersExact: the tokens family read from a token bucket of
// 1,000 tokens refilling at 100/s that counts cost, at scripted instants.
// Remaining is the whole tokens left after the request's own cost; reset
// is how long until the bucket is full again; both exact to the
// nanosecond, and the requests family beside it reads its own quota.
func TestTokenHeadersExact(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: time.Second}, Headers: true,
		Quotas: []Quota{{Kind: "token_bucket", Rate: 100, Burst: 1000, Unit: UnitCost}, {Kind: "fixed_window", Limit: 50, Window: time.Minute}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range []struct {
		at        time.Duration
		cost      int64
		ok        bool
		remaining int64
		reset     time.Duration
		requests  int64
	}{
		{0, 400, true, 600, 4 * time.Second, 49},
		{time.Second, 650, true, 50, 9500 * time.Millisecond, 48},                      // 600 + 100 − 650
		{1500 * time.Millisecond, 200, false, 100, 9 * time.Second, 48},                // 50 + 50 < 200: refused, takes nothing
		{3 * time.Second, 200, true, 50, 9500 * time.Millisecond, 47},                  // 50 + 200 − 200
		{3*time.Second + 5*time.Millisecond, 1, true, 49, 9505 * time.Millisecond, 46}, // 50.5 − 1 = 49.5: floor; 950.5 missing
	} {
		a := s.Start(c.at, c.cost)
		if a.OK != c.ok || a.RemainingCost != c.remaining || a.ResetCost != c.reset || a.LimitCost != 1000 || a.Remaining != c.requests {
			t.Errorf("request %d at %v costing %d: ok %v, tokens %d reset %v limit %d, requests %d; want %v, %d, %v, 1000, %d",
				k, c.at, c.cost, a.OK, a.RemainingCost, a.ResetCost, a.LimitCost, a.Remaining, c.ok, c.remaining, c.reset, c.requests)
		}
	}
}

// TestResponseReserve: a provider that counts max_tokens when a request
// starts. A tokens-per-minute window of 5,000 with a reserve of 1,500 per
// response: a request of 500 takes 2,000 at its start, so a second one
// fits and a third does not; when the first completes having used 300, the
// window gives back 1,200 (2,800 taken) and the third fits (4,800), but
// not a fourth. Without the reserve all three would fit at once. It catches a reserve never taken, never given back,
// or given back twice.
func TestResponseReserve(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: time.Second}, ResponseReserve: 1500,
		ResponseCost: Constant{Value: 300},
		Quotas:       []Quota{{Kind: "fixed_window", Limit: 5000, Window: time.Minute, Unit: UnitCost}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	first, second := s.Start(0, 500), s.Start(0, 500)
	if !first.OK || !second.OK || s.Start(0, 500).OK {
		t.Fatal("two requests of 500 reserving 1,500 each fit in 5,000, a third does not")
	}
	s.Finish(time.Second, &first) // its 2,000 becomes 800: 2,800 taken
	if !s.Start(time.Second, 500).OK {
		t.Fatal("the reserve the first response did not use was not given back")
	}
	if s.Start(time.Second, 1).OK { // 4,800 + 1 + 1,500 > 5,000
		t.Fatal("the window admitted beyond its limit after a refund")
	}
}

// TestResponseReserveAcrossWindows: a reserve taken in one minute's window
// and settled in the next is not given back to the next window, which
// never held it; the response's real cost counts there. It catches a
// refund that lets the next window overrun.
func TestResponseReserveAcrossWindows(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: 2 * time.Second}, ResponseReserve: 1500,
		ResponseCost: Constant{Value: 300},
		Quotas:       []Quota{{Kind: "fixed_window", Limit: 5000, Window: time.Minute, Unit: UnitCost}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Start(59*time.Second, 500) // 2,000 in the first window
	if !a.OK || !s.Start(60*time.Second, 500).OK || !s.Start(60*time.Second, 500).OK {
		t.Fatal("three requests of 2,000 across two windows of 5,000 must pass")
	}
	s.Finish(61*time.Second, &a) // started at 59 s: +300 in the second window, nothing back
	if s.Start(61*time.Second, 500).OK {
		t.Fatal("4,300 + 2,000 admitted in a window of 5,000: the first window's reserve was given back to the second")
	}
}

// TestRefusedRequestPaysNoReserve: where refused requests count against
// the quotas that admitted them, a request refused by the request limit
// counts its own cost in the tokens window, not the reserve for a response
// it will never have.
func TestRefusedRequestPaysNoReserve(t *testing.T) {
	cfg := Config{Host: "llm", Latency: Constant{Value: time.Second}, ResponseReserve: 1500, Refused: RefusedOthers, Headers: true,
		Quotas: []Quota{{Kind: "fixed_window", Limit: 5000, Window: time.Minute, Unit: UnitCost}, {Kind: "fixed_window", Limit: 1, Window: time.Minute}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Start(0, 500).OK { // 2,000 of 5,000, the one request of the minute
		t.Fatal("the first request must pass")
	}
	r := s.Start(time.Second, 500)
	if r.OK || r.RemainingCost != 2500 {
		t.Fatalf("refused by the request limit: ok %v, %d tokens left; want refused, 5,000 − 2,000 − 500 = 2,500", r.OK, r.RemainingCost)
	}
}
