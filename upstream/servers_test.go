package upstream

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
)

// step is one request at an instant and what the server answers: admitted
// (held that long before its service) or refused with a status.
type step struct {
	at     time.Duration
	ok     bool
	held   time.Duration
	status int
}

// runSteps offers the steps in order to a server over quota q, with a
// constant 50 ms service and 1 ms refusals, and checks each answer.
func runSteps(t *testing.T, q Quota, steps []step) *Server {
	t.Helper()
	s, err := NewServer(Config{Host: "api", Latency: Constant{Value: 50 * ms}, Quotas: []Quota{q},
		RejectLatency: ms, RetryAfter: RetryAfter{None: true}}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		a := s.Start(st.at, 1)
		switch {
		case a.OK != st.ok:
			t.Fatalf("step %d at %v: OK %v, want %v (%+v)", i, st.at, a.OK, st.ok, a)
		case st.ok && (a.Held != st.held || a.After != st.held+50*ms || a.Status != 0):
			t.Fatalf("step %d at %v: held %v, after %v, status %d; want held %v, after %v", i, st.at, a.Held, a.After, a.Status, st.held, st.held+50*ms)
		case !st.ok && (a.Status != st.status || a.After != ms):
			t.Fatalf("step %d at %v: status %d after %v, want %d after 1ms", i, st.at, a.Status, a.After, st.status)
		}
	}
	return s
}

// nginx's limit_req at 50r/s (50,000 thousandths a second: 50 a ms),
// burst 2, without nodelay: the first request finds excess 0; each at the
// same instant adds 1000 and is held excess × 1000 ÷ rate ms (20 ms per
// request ahead of it); one that would make the excess exceed 2000 is
// refused with 503 and changes nothing; 10 ms drain 500, 20 ms a whole
// request; a second later the excess has drained to 0.
func TestNginxLimitReqExcess(t *testing.T) {
	q := Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 2}
	runSteps(t, q, []step{
		{at: 0, ok: true, held: 0},
		{at: 0, ok: true, held: 20 * ms},                              // excess 1000
		{at: 0, ok: true, held: 40 * ms},                              // excess 2000
		{at: 0, ok: false, status: 503},                               // 3000 > 2000
		{at: 10 * ms, ok: false, status: 503},                         // 2000 − 500 + 1000 = 2500
		{at: 20 * ms, ok: true, held: 40 * ms},                        // 2000 − 1000 + 1000 = 2000
		{at: 30 * ms, ok: false, status: 503},                         // 2000 − 500 + 1000
		{at: 50 * ms, ok: true, held: 30 * ms},                        // 2000 − 1500 + 1000 = 1500
		{at: 1050 * ms, ok: true, held: 0},                            // drained past 0: excess 0
		{at: 1050*ms + 999*time.Microsecond, ok: true, held: 20 * ms}, // the same millisecond
	})
}

// With delay=1 the first excess request is served at once and the rest
// are held (excess − 1000) × 1000 ÷ rate ms; with nodelay none is held,
// and the refusals are the same.
func TestNginxLimitReqDelayAndNodelay(t *testing.T) {
	q := Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 3, Delay: 1}
	runSteps(t, q, []step{
		{at: 0, ok: true}, {at: 0, ok: true}, // excess 0, then 1000 ≤ delay
		{at: 0, ok: true, held: 20 * ms}, {at: 0, ok: true, held: 40 * ms},
		{at: 0, ok: false, status: 503},
	})
	q = Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 3, NoDelay: true}
	runSteps(t, q, []step{
		{at: 0, ok: true}, {at: 0, ok: true}, {at: 0, ok: true}, {at: 0, ok: true},
		{at: 0, ok: false, status: 503},
		{at: 20 * ms, ok: true}, // 3000 − 1000 + 1000
	})
}

// "600r/m" is 10,000 thousandths a second, 10 a ms: with burst 0 one
// request per 100 ms, the clamp to 0 coming after the request is added.
// "7r/m" is 7000 ÷ 60 = 116 thousandths a second, rounded down as nginx
// does: a request waits ⌈1000 × 1000 ÷ 116⌉ = 8621 ms.
func TestNginxLimitReqPerMinute(t *testing.T) {
	runSteps(t, Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 10, Per: time.Minute}, []step{
		{at: 0, ok: true},
		{at: 99 * ms, ok: false, status: 503}, // 1000 − 990
		{at: 100 * ms, ok: true},
		{at: 250 * ms, ok: true}, // idle credit is not kept
		{at: 349 * ms, ok: false, status: 503},
	})
	l, err := newLimitReq(Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 7.0 / 60, Per: time.Minute})
	if err != nil || l.rate != 116 {
		t.Fatalf("7r/m: rate %d thousandths a second (%v), want 116", l.rate, err)
	}
	l.TakeAt(0, 1)
	if at, ok := l.ReadyAt(ms, 1); !ok || at != 8621*ms || l.TakeAt(at-ms, 1) || !l.TakeAt(at, 1) {
		t.Fatalf("7r/m: ready at %v (%v), want 8.621s and not a millisecond before", at, ok)
	}
}

// ReadyAt names the millisecond the drain makes room, and Retry-After
// "reset" rounds it up to whole seconds; Usage and ResetAt read the excess.
func TestNginxLimitReqReadyAt(t *testing.T) {
	l, err := newLimitReq(Quota{Rate: 50, Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.TakeAt(0, 1)
	}
	if at, ok := l.ReadyAt(5*ms, 1); !ok || at != 20*ms {
		t.Fatalf("ready at %v, want 20ms", at)
	}
	if u := l.Usage(0); u != 2000.0/3000 {
		t.Errorf("usage %v at excess 2000 of 3000, want 2/3", u)
	}
	if r := l.ResetAt(0); r != 40*ms {
		t.Errorf("reset at %v, want 40ms (2000 ÷ 50 a ms)", r)
	}
	s, err := NewServer(Config{Host: "api", Latency: Constant{Value: 50 * ms}, Quotas: []Quota{{Kind: kindname.QuotaNginxLimitReq, Rate: 1}},
		RetryAfter: RetryAfter{Reset: true}}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(0, 1)
	if a := s.Start(200*ms, 1); a.OK || !a.HasRetryAfter || a.RetryAfter != time.Second {
		t.Fatalf("refused at 200ms: %+v, want Retry-After 1s (800 ms rounded up)", a)
	}
}

// Envoy's local rate limit with max_tokens 10, tokens_per_fill 5 and
// fill_interval 1s starts full and gains 5 tokens at each whole second,
// never above 10: 10 admitted at 0, none until 1s, 5 at 1s, 5 at 2.5s (the
// fill at 2s), and at 5s the three fills since 2s fill it to 10 again.
// Refusals answer 429.
func TestEnvoyLocalRateLimitFills(t *testing.T) {
	q := Quota{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 10, TokensPerFill: 5, FillInterval: time.Second}
	burst := func(at time.Duration, n int) []step {
		var out []step
		for range n {
			out = append(out, step{at: at, ok: true})
		}
		return append(out, step{at: at, status: 429})
	}
	var steps []step
	steps = append(steps, burst(0, 10)...)
	steps = append(steps, step{at: 999 * ms, status: 429})
	steps = append(steps, burst(time.Second, 5)...)
	steps = append(steps, step{at: 1999 * ms, status: 429})
	steps = append(steps, burst(2500*ms, 5)...)
	steps = append(steps, burst(5*time.Second, 10)...)
	runSteps(t, q, steps)

	b, err := newLocalRateLimit(q)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		b.TakeAt(200*ms, 1)
	}
	for _, c := range []struct {
		n  int64
		at time.Duration
	}{{1, time.Second}, {5, time.Second}, {6, 2 * time.Second}, {10, 2 * time.Second}} {
		if at, ok := b.ReadyAt(300*ms, c.n); !ok || at != c.at {
			t.Errorf("%d tokens ready at %v, want %v", c.n, at, c.at)
		}
	}
	if _, ok := b.ReadyAt(0, 11); ok {
		t.Error("11 tokens from a bucket of 10 said ready")
	}
	if r := b.ResetAt(300 * ms); r != 2*time.Second {
		t.Errorf("full again at %v, want 2s", r)
	}
}

// nginx's limit_conn refuses with 503 beyond conn requests in service;
// a finished request makes room.
func TestNginxLimitConn(t *testing.T) {
	s := runSteps(t, Quota{Kind: kindname.QuotaNginxLimitConn, Permits: 2}, []step{
		{at: 0, ok: true}, {at: 10 * ms, ok: true}, {at: 20 * ms, status: 503},
	})
	a := Answer{OK: true, After: 50 * ms}
	s.Finish(50*ms, &a)
	if a := s.Start(50*ms, 1); !a.OK {
		t.Fatalf("after a finish: %+v, want admitted", a)
	}
}

// A quota's status replaces its kind's default, and with several quotas
// the first refusing one's status is the answer's; the longest hold wins.
func TestQuotaStatus(t *testing.T) {
	runSteps(t, Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 1, Status: 429}, []step{{at: 0, ok: true}, {at: 0, status: 429}})
	runSteps(t, Quota{Kind: kindname.QuotaTokenBucket, Rate: 1, Burst: 1, Status: 403}, []step{{at: 0, ok: true}, {at: 0, status: 403}})
	s, err := NewServer(Config{Host: "api", Latency: Constant{Value: 50 * ms}, Quotas: []Quota{
		{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 5},
		{Kind: kindname.QuotaNginxLimitReq, Rate: 10, Status: 403},
		{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 1, FillInterval: time.Second},
	}}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Start(0, 1); !a.OK || a.Held != 0 {
		t.Fatalf("first: %+v", a)
	}
	if a := s.Start(0, 1); a.OK || a.Status != 403 {
		t.Fatalf("second: %+v, want 403 from the second quota, the first that refuses", a)
	}
	if a := s.Start(time.Second, 1); !a.OK || a.Held != 0 {
		t.Fatalf("at 1s: %+v, want admitted at once", a)
	}
	if a := s.Start(time.Second, 1); a.OK || a.Status != 403 {
		t.Fatalf("at 1s again: %+v, want 403", a)
	}
	names, _ := s.Rejections()
	if want := "envoy_local_rate_limit 1/1s"; names[2] != want {
		t.Errorf("names %q, want %q third", names, want)
	}
}

// A server quota nginx or Envoy would not load is an ErrQuota.
func TestServerQuotaErrors(t *testing.T) {
	for _, q := range []Quota{
		{Kind: kindname.QuotaNginxLimitReq, Rate: 0.5},
		{Kind: kindname.QuotaNginxLimitReq, Rate: 10, Burst: 1.5},
		{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 0, FillInterval: time.Second},
		{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 1},
	} {
		_, err := NewServer(Config{Host: "api", Latency: Constant{Value: ms}, Quotas: []Quota{q}}, rand.New(rand.NewPCG(1, 1)), nil)
		if !errors.Is(err, ErrQuota) {
			t.Errorf("%+v: %v, want ErrQuota", q, err)
		}
	}
}
