package upstream

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
)

// newTestServer builds a server with a constant 100 ms latency and a 5 ms
// rejection latency over the given quota and Retry-After policy.
func newTestServer(t *testing.T, q *Quota, ra RetryAfter) *Server {
	t.Helper()
	s, err := NewServer(Config{
		Host:          "api",
		Latency:       Constant{Value: 100 * ms},
		Quotas:        quotaList(q),
		RetryAfter:    ra,
		RejectLatency: 5 * ms,
		Workers:       4,
	}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServerTokenBucketQuota offers unbounded demand — every millisecond,
// requests until one is refused — for 10.05 s to a token-bucket quota of
// 10/s with burst 5: it admits exactly burst + rate × T = 5 + 100 = 105, the
// first five at instant 0 (the quota starts full), and never two tokens'
// worth in one refill interval after that. It catches a quota bucket that
// starts empty, refills at the wrong rate, or ignores the burst, and 429s
// that carry the wrong latency or a header with retry_after "".
func TestServerTokenBucketQuota(t *testing.T) {
	const horizon = 10*time.Second + 50*ms // mid-way between two tokens
	s := newTestServer(t, &Quota{Kind: "token_bucket", Rate: 10, Burst: 5}, RetryAfter{None: true})
	admitted, atZero := 0, 0
	for now := time.Duration(0); now <= horizon; now += ms {
		for {
			a := s.Start(now, 1)
			if !a.OK {
				if a.After != 5*ms || a.HasRetryAfter {
					t.Fatalf("429 at %v: %+v, want After 5ms and no header", now, a)
				}
				break
			}
			if a.After != 100*ms || a.HasRetryAfter {
				t.Fatalf("OK at %v: %+v, want After 100ms and no header", now, a)
			}
			admitted++
			if now == 0 {
				atZero++
			} else if admitted > 5+int(now/(100*ms)) { // a token every 100 ms
				t.Fatalf("%d admitted by %v, more than burst + rate × T", admitted, now)
			}
		}
	}
	if admitted != 105 || atZero != 5 {
		t.Fatalf("admitted %d (%d at instant 0) over %v, want 105 (5 at instant 0)", admitted, atZero, horizon)
	}
}

// TestServerFixedWindowQuota offers a request every 100 ms for 3 s to a fixed
// window of 3 per second: each window admits exactly its first three
// requests, counting restarts at every boundary. It catches a window that
// does not reset, or that resets off the aligned boundary.
func TestServerFixedWindowQuota(t *testing.T) {
	s := newTestServer(t, &Quota{Kind: "fixed_window", Limit: 3, Window: time.Second}, RetryAfter{None: true})
	var got []time.Duration
	for now := time.Duration(0); now < 3*time.Second; now += 100 * ms {
		if s.Start(now, 1).OK {
			got = append(got, now)
		}
	}
	want := []time.Duration{0, 100 * ms, 200 * ms, time.Second, 1100 * ms, 1200 * ms, 2 * time.Second, 2100 * ms, 2200 * ms}
	if !slices.Equal(got, want) {
		t.Fatalf("admitted at %v, want %v", got, want)
	}
}

// TestServerSlidingWindowQuota checks the exact sliding window of 2 per
// second across a fixed-window boundary: requests at 900 and 950 ms pass, the
// one at 1 s is refused (a fixed window would have reset), 1.9 s passes (900
// ms has left the window), 1.949 s is refused and 1.95 s passes. It catches a
// sliding_window quota built as a fixed window or as an approximation.
func TestServerSlidingWindowQuota(t *testing.T) {
	s := newTestServer(t, &Quota{Kind: "sliding_window", Limit: 2, Window: time.Second}, RetryAfter{None: true})
	steps := []struct {
		at time.Duration
		ok bool
	}{
		{900 * ms, true},
		{950 * ms, true},
		{time.Second, false},
		{1899 * ms, false},
		{1900 * ms, true},
		{1949 * ms, false},
		{1950 * ms, true},
	}
	for _, st := range steps {
		if a := s.Start(st.at, 1); a.OK != st.ok {
			t.Fatalf("request at %v: OK %v, want %v", st.at, a.OK, st.ok)
		}
	}
}

// TestServerConcurrencyQuota checks a concurrency quota of 2: two requests
// in flight, the third refused, usage 1; Finish frees a permit (usage ½)
// and the next request passes. It catches Finish not releasing and a
// concurrency quota that counts starts instead of requests in flight.
func TestServerConcurrencyQuota(t *testing.T) {
	s := newTestServer(t, &Quota{Kind: "concurrency", Permits: 2}, RetryAfter{Fixed: 3 * time.Second})
	const t0, t1 = time.Second, 2 * time.Second
	for i := range 2 {
		if !s.Start(t0, 1).OK {
			t.Fatalf("request %d of the first two refused", i+1)
		}
	}
	a := s.Start(t0, 1)
	if a.OK || !a.HasRetryAfter || a.RetryAfter != 3*time.Second {
		t.Fatalf("third request: %+v, want a 429 with Retry-After 3s", a)
	}
	if u := s.Usage(t0); u != 1 {
		t.Fatalf("usage %v with both permits held, want 1", u)
	}
	s.Finish(t1, &Answer{})
	if u := s.Usage(t1); u != 0.5 {
		t.Fatalf("usage %v after one Finish, want 0.5", u)
	}
	if !s.Start(t1, 1).OK {
		t.Fatal("request after Finish refused")
	}
	if s.Start(t1, 1).OK {
		t.Fatal("a third request in flight admitted")
	}
}

// TestServerRetryAfter checks what a 429 carries: nothing with None; the
// fixed value (even 0) otherwise; with Reset, the time until the quota
// admits again rounded up to whole seconds and never below 1 s; and no
// header from Reset under a concurrency quota, whose next free permit
// cannot be foreseen. It catches rounding to nearest or down, an off-by-one
// whole second on exact values, a header of 0 s, a fixed header of 0
// dropped, and a header sent with None.
func TestServerRetryAfter(t *testing.T) {
	// A token bucket of 0.4/s, burst 1: after the burst at 0, the next token
	// comes at 2.5 s.
	bucket := func() *Quota { return &Quota{Kind: "token_bucket", Rate: 0.4, Burst: 1} }
	sliding := func() *Quota { return &Quota{Kind: "sliding_window", Limit: 1, Window: 10 * time.Second} }
	fixed := func() *Quota { return &Quota{Kind: "fixed_window", Limit: 1, Window: time.Minute} }
	cases := []struct {
		name  string
		q     *Quota
		ra    RetryAfter
		first time.Duration // an admitted request that exhausts the quota
		at    time.Duration // the refused request
		has   bool
		want  time.Duration
	}{
		{"none", bucket(), RetryAfter{None: true}, 0, 100 * ms, false, 0},
		{"fixed", bucket(), RetryAfter{Fixed: 2 * time.Second}, 0, 100 * ms, true, 2 * time.Second},
		{"fixed zero", bucket(), RetryAfter{}, 0, 100 * ms, true, 0},
		{"reset token bucket 2.4s rounds up", bucket(), RetryAfter{Reset: true}, 0, 100 * ms, true, 3 * time.Second},
		{"reset token bucket 0.1s is 1s", bucket(), RetryAfter{Reset: true}, 0, 2400 * ms, true, time.Second},
		{"reset sliding window 7.5s", sliding(), RetryAfter{Reset: true}, time.Second, 3500 * ms, true, 8 * time.Second},
		{"reset sliding window exactly 8s", sliding(), RetryAfter{Reset: true}, time.Second, 3 * time.Second, true, 8 * time.Second},
		{"reset sliding window 1ns is 1s", sliding(), RetryAfter{Reset: true}, time.Second, 11*time.Second - 1, true, time.Second},
		{"reset fixed window 49.7s", fixed(), RetryAfter{Reset: true}, 10 * time.Second, 10*time.Second + 300*ms, true, 50 * time.Second},
		{"reset fixed window exactly 40s", fixed(), RetryAfter{Reset: true}, 10 * time.Second, 20 * time.Second, true, 40 * time.Second},
		{"reset concurrency", &Quota{Kind: "concurrency", Permits: 1}, RetryAfter{Reset: true}, 0, 100 * ms, false, 0},
	}
	for _, c := range cases {
		s := newTestServer(t, c.q, c.ra)
		if !s.Start(c.first, 1).OK {
			t.Fatalf("%s: first request refused", c.name)
		}
		a := s.Start(c.at, 1)
		if a.OK {
			t.Fatalf("%s: request at %v admitted, want a 429", c.name, c.at)
		}
		if a.After != 5*ms || a.HasRetryAfter != c.has || a.RetryAfter != c.want {
			t.Errorf("%s: %+v, want After 5ms, header %v = %v", c.name, a, c.has, c.want)
		}
	}
}

// TestServerWithoutQuota checks that a server without a quota admits
// everything and reports zero usage. It catches a nil quota dereferenced
// or read as full.
func TestServerWithoutQuota(t *testing.T) {
	s := newTestServer(t, nil, RetryAfter{Reset: true})
	for i := range 1000 {
		if a := s.Start(time.Duration(i), 1); !a.OK || a.After != 100*ms {
			t.Fatalf("request %d: %+v", i, a)
		}
	}
	s.Finish(time.Second, &Answer{})
	if s.Usage(time.Second) != 0 {
		t.Fatalf("usage %v without a quota", s.Usage(time.Second))
	}
}

// TestServerUsage checks the quota's usage as the server reports it: a
// token bucket's 1 − tokens ÷ capacity, a window's starts ÷ limit. It
// catches Usage reading the wrong quota or an inverted value.
func TestServerUsage(t *testing.T) {
	tb := newTestServer(t, &Quota{Kind: "token_bucket", Rate: 1, Burst: 4}, RetryAfter{None: true})
	tb.Start(0, 1)
	if u := tb.Usage(0); u != 0.25 {
		t.Errorf("token bucket of 4 after one start: usage %v, want 0.25", u)
	}
	fw := newTestServer(t, &Quota{Kind: "fixed_window", Limit: 4, Window: time.Second}, RetryAfter{None: true})
	fw.Start(0, 1)
	fw.Start(0, 1)
	if u := fw.Usage(0); u != 0.5 {
		t.Errorf("fixed window of 4 after two starts: usage %v, want 0.5", u)
	}
}

// TestNewServerErrors checks that every bad configuration is refused with
// the host named and the cause kept: a bad latency (ErrSpec), an unknown
// quota kind, and each quota kind's invalid parameters (models.ErrConfig).
// It catches a quota built with unchecked parameters and errors that lose
// their cause.
func TestNewServerErrors(t *testing.T) {
	good := Constant{Value: ms}
	cases := []struct {
		name string
		cfg  Config
		is   error
		msg  string
	}{
		{"latency", Config{Host: "api", Latency: Uniform{}}, ErrSpec, "upstream api: latency: "},
		{"unknown quota", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "leaky_bucket"}}}, nil, `unknown quota kind "leaky_bucket"`},
		{"token bucket rate", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "token_bucket", Rate: 0, Burst: 1}}}, models.ErrConfig, "upstream api: quota: "},
		{"token bucket burst", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "token_bucket", Rate: 1, Burst: 0}}}, models.ErrConfig, "upstream api: quota: "},
		{"fixed window limit", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "fixed_window", Limit: 0, Window: time.Second}}}, models.ErrConfig, "upstream api: quota: "},
		{"fixed window window", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "fixed_window", Limit: 1}}}, models.ErrConfig, "upstream api: quota: "},
		{"sliding window limit", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "sliding_window", Window: time.Second}}}, models.ErrConfig, "upstream api: quota: "},
		{"concurrency permits", Config{Host: "api", Latency: good, Quotas: []Quota{{Kind: "concurrency"}}}, models.ErrConfig, "upstream api: quota: "},
	}
	for _, c := range cases {
		_, err := NewServer(c.cfg, rand.New(rand.NewPCG(1, 1)), nil)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q, want %v naming %q", c.name, err, c.is, c.msg)
		}
	}
}

// A latency schedule switches the distribution at its instants (a
// degraded upstream, then its recovery), and a quota schedule its rate.
func TestServerSchedules(t *testing.T) {
	ms := time.Millisecond
	s, err := NewServer(Config{Host: "api", Latency: Constant{Value: 100 * ms},
		LatencySchedule: []LatencyStep{{At: 30 * time.Second, Latency: Constant{Value: 400 * ms}},
			{At: 60 * time.Second, Latency: Constant{Value: 100 * ms}}}}, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Duration
		want time.Duration
	}{{10 * time.Second, 100 * ms}, {30*time.Second - 1, 100 * ms}, {30 * time.Second, 400 * ms}, {45 * time.Second, 400 * ms}, {60 * time.Second, 100 * ms}} {
		if a := s.Start(c.at, 1); !a.OK || a.After != c.want {
			t.Fatalf("at %v: %+v, want OK after %v", c.at, a, c.want)
		}
	}
	// From 30 s the quota admits 1/s: of two starts 500 ms apart, one passes.
	s, err = NewServer(Config{Host: "api", Latency: Constant{Value: 100 * ms},
		Quotas: []Quota{{Kind: "token_bucket", Rate: 10, Burst: 1, Schedule: []RateStep{{At: 30 * time.Second, Rate: 1}}}}}, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for k := range 10 {
		if s.Start(70*time.Second+time.Duration(k)*500*ms, 1).OK {
			ok++
		}
	}
	if ok != 5 {
		t.Fatalf("%d of 10 starts over 5 s admitted after the quota fell to 1/s, want 5", ok)
	}
}

// quotaList is q as a server's quotas: none when nil.
func quotaList(q *Quota) []Quota {
	if q == nil {
		return nil
	}
	return []Quota{*q}
}

// Several quotas are all enforced exactly: the tightest binds, a request
// refused by one takes from none of the others, and each counts the
// requests it refused.
func TestSeveralQuotasAllEnforced(t *testing.T) {
	ms := time.Millisecond
	s, err := NewServer(Config{Host: "api", Latency: Constant{Value: 10 * ms},
		Quotas: []Quota{{Kind: "token_bucket", Rate: 10, Burst: 10}, {Kind: "fixed_window", Limit: 15, Window: time.Minute}}},
		rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for k := range 40 { // 40 requests 100 ms apart: 4 s
		if s.Start(time.Duration(k)*100*ms, 1).OK {
			ok++
		}
	}
	// The bucket admits its burst of 10 and then 1 per 100 ms; the window
	// stops everything at 15 for the rest of the minute.
	if ok != 15 {
		t.Fatalf("%d admitted, want the fixed window's 15", ok)
	}
	names, counts := s.Rejections()
	if len(names) != 2 || names[0] != "token_bucket 10/s" || names[1] != "fixed_window 15/1m0s" || counts[1] != 25 {
		t.Fatalf("rejections %v %v, want the window to have refused all 25", names, counts)
	}
	// A request the bucket refuses takes nothing from the window: ten at
	// once through a bucket of 2 (1/s) and a window of 5 a minute admit 2,
	// then 2 more 10 s later and the window's last 1 at 20 s.
	s, err = NewServer(Config{Host: "api", Latency: Constant{Value: 10 * ms},
		Quotas: []Quota{{Kind: "token_bucket", Rate: 1, Burst: 2}, {Kind: "fixed_window", Limit: 5, Window: time.Minute}}},
		rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, at := range []time.Duration{0, 10 * time.Second, 20 * time.Second} {
		n := 0
		for k := range 10 {
			if s.Start(at+time.Duration(k), 1).OK {
				n++
			}
		}
		got = append(got, n)
	}
	if got[0] != 2 || got[1] != 2 || got[2] != 1 {
		t.Fatalf("admitted %v at 0 s, 10 s, 20 s; want [2 2 1] (refused requests must take from no quota)", got)
	}
}

// The rate-limit headers are exact at every answer: remaining counts down
// the window's admissions and the reset is the time to the window's end
// (at zero and before it); a bucket's reset is the time until it is full
// again; a server not asked for headers leaves them unset.
func TestRateLimitHeaders(t *testing.T) {
	ms := time.Millisecond
	cfg := Config{Host: "api", Latency: Constant{Value: 10 * ms}, RejectLatency: 5 * ms, Headers: true,
		Quotas: []Quota{{Kind: "fixed_window", Limit: 3, Window: 10 * time.Second}}}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []struct {
		ok        bool
		remaining int64
		reset     time.Duration
	}{{true, 2, 7 * time.Second}, {true, 1, 6 * time.Second}, {true, 0, 5 * time.Second}, {false, 0, 4 * time.Second}} { // windows aligned to 0: [0, 10 s)
		now := time.Duration(k+3) * time.Second
		a := s.Start(now, 1)
		if a.OK != want.ok || a.Remaining != want.remaining || a.Reset != want.reset {
			t.Fatalf("answer %d at %v: ok %v remaining %d reset %v, want %v %d %v", k, now, a.OK, a.Remaining, a.Reset, want.ok, want.remaining, want.reset)
		}
	}
	if a := s.Start(10*time.Second, 1); !a.OK || a.Remaining != 2 {
		t.Fatalf("the next window: ok %v remaining %d, want a fresh count of 2", a.OK, a.Remaining)
	}
	bucket, err := NewServer(Config{Host: "api", Latency: Constant{Value: 10 * ms}, Headers: true,
		Quotas: []Quota{{Kind: "token_bucket", Rate: 2, Burst: 4}}}, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	bucket.Start(0, 1)
	if a := bucket.Start(0, 1); a.Remaining != 2 || a.Reset != time.Second {
		t.Fatalf("a bucket of 4 at 2/s after two: remaining %d reset %v, want 2 and 1s to be full", a.Remaining, a.Reset)
	}
	cfg.Headers = false
	quiet, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		if a := quiet.Start(time.Duration(k)*time.Second, 1); a.Remaining != 0 || a.Reset != 0 {
			t.Fatalf("headers computed without being asked for: %+v", a)
		}
	}
}

// A server with one quota decides each request as the same quota does
// beside another that never refuses: taking from a lone quota is its
// check, and two quotas are checked before either is taken from. Random
// bursts (with answers finishing, for the concurrency quota) run through
// both; every answer, Retry-After and refusal count must agree. It catches
// a lone-quota path that takes from a quota that refused, forgets to count
// a refusal, or admits where the two-pass check would not.
func TestOneQuotaDecidesAsAmongSeveral(t *testing.T) {
	ms := time.Millisecond
	quotas := []Quota{
		{Kind: "token_bucket", Rate: 20, Burst: 5},
		{Kind: "token_bucket", Rate: 50, Burst: 200, Unit: UnitCost},
		{Kind: "fixed_window", Limit: 7, Window: 500 * ms},
		{Kind: "sliding_window", Limit: 7, Window: 500 * ms},
		{Kind: "concurrency", Permits: 3},
	}
	never := Quota{Kind: "token_bucket", Rate: 1e9, Burst: 1e9}
	for _, q := range quotas {
		build := func(qs ...Quota) *Server {
			s, err := NewServer(Config{Host: "api", Latency: Exponential{Average: 80 * ms},
				Quotas: qs, RetryAfter: RetryAfter{Reset: true}, RejectLatency: 5 * ms},
				rand.New(rand.NewPCG(3, 4)), nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		one, two := build(q), build(q, never)
		r := rand.New(rand.NewPCG(5, 6))
		type served struct {
			a, b Answer
			done time.Duration
		}
		var now time.Duration
		var out []served // answered OK, not yet finished
		admitted := 0
		for k := range 2000 {
			now += time.Duration(r.IntN(40)) * ms
			out = slices.DeleteFunc(out, func(s served) bool { // in the same order in both
				if s.done > now {
					return false
				}
				one.Finish(now, &s.a)
				two.Finish(now, &s.b)
				return true
			})
			cost := int64(1 + r.IntN(9))
			a, b := one.Start(now, cost), two.Start(now, cost)
			if a.OK != b.OK || a.RetryAfter != b.RetryAfter || a.HasRetryAfter != b.HasRetryAfter {
				t.Fatalf("%s: request %d at %v: alone %+v, beside a quota that never refuses %+v", q.Kind, k, now, a, b)
			}
			if a.OK {
				admitted++
				out = append(out, served{a: a, b: b, done: now + a.After})
			}
		}
		_, c1 := one.Rejections()
		_, c2 := two.Rejections()
		if c1[0] != c2[0] || c2[1] != 0 {
			t.Fatalf("%s: refusals alone %v, beside another %v", q.Kind, c1, c2)
		}
		if admitted == 0 || c1[0] == 0 {
			t.Fatalf("%s: %d admitted, %d refused: the test must exercise both", q.Kind, admitted, c1[0])
		}
	}
}
