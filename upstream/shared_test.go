package upstream

import (
	"math/rand/v2"
	"testing"
	"time"
)

// sharedPair builds two servers, "a" and "b", with their own quotas ownA
// and ownB (nil: none), both counting the shared quota q; headers on.
func sharedPair(t *testing.T, q Quota, ownA, ownB []Quota, ra RetryAfter) (a, b *Server, sq *SharedQuota) {
	t.Helper()
	sq, err := NewSharedQuota(SharedConfig{Name: "hourly", Quota: q, Hosts: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(host string, seed uint64, own []Quota) *Server {
		s, err := NewServer(Config{Host: host, Latency: Constant{Value: 100 * ms}, Quotas: own, RetryAfter: ra,
			RejectLatency: 5 * ms, Headers: true, Shared: []*SharedQuota{sq}}, rand.New(rand.NewPCG(seed, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return mk("a", 1, ownA), mk("b", 2, ownB), sq
}

// TestSharedQuotaSpansHosts sends 30 requests a second apart, alternating
// between two hosts whose own quota (20 a minute each) admits every one of
// its 15: the shared quota of 10 an hour admits exactly the first 10 and
// refuses the other 20, wherever they go, and each host's count of the
// shared quota's refusals is its own share. A quota copied into each host
// instead of shared would admit 20.
func TestSharedQuotaSpansHosts(t *testing.T) {
	own := []Quota{{Kind: "fixed_window", Limit: 20, Window: time.Minute}}
	a, b, sq := sharedPair(t, Quota{Kind: "fixed_window", Limit: 10, Window: time.Hour}, own, own, RetryAfter{Reset: true})
	servers := []*Server{a, b}
	ok := 0
	for i := range 30 {
		ans := servers[i%2].Start(time.Duration(i)*time.Second, 1)
		if ans.OK != (i < 10) {
			t.Fatalf("request %d: OK = %v, want %v", i, ans.OK, i < 10)
		}
		if ans.OK {
			ok++
			continue
		}
		if want := time.Hour - time.Duration(i)*time.Second; ans.RetryAfter != want {
			t.Fatalf("request %d: Retry-After %v, want the shared window's reset %v", i, ans.RetryAfter, want)
		}
	}
	if admitted, refused, taken := sq.Counts(); admitted != 10 || refused != 20 || taken != 10 {
		t.Fatalf("shared counts admitted %d, refused %d, taken %d; want 10, 20, 10", admitted, refused, taken)
	}
	for _, s := range servers {
		names, counts := s.Rejections()
		if len(names) != 2 || names[1] != "hourly" || counts[0] != 0 || counts[1] != 10 {
			t.Fatalf("%s rejections %v %v, want the own quota none and hourly 10", s.cfg.Host, names, counts)
		}
		if shared, _ := s.Shared(1); !shared {
			t.Fatalf("%s: quota 1 not reported shared", s.cfg.Host)
		}
	}
}

// TestSharedQuotaRefusedTakesFromNone: a request refused by a host's own
// quota takes nothing from the shared one, and one refused by the shared
// quota nothing from the host's own. Host a's own quota admits 1 an hour,
// b's 5 an hour; the shared one 3 a minute. a: admitted, then refused by
// its own (the shared quota keeps 2); b: admitted twice, then refused by
// the shared quota. In the next minute b is admitted and its headers read
// 2 left (b's own 5 − 3, the shared 3 − 1): had the shared refusal taken
// from b's own quota, 1.
func TestSharedQuotaRefusedTakesFromNone(t *testing.T) {
	hourly := func(n int64) []Quota { return []Quota{{Kind: "fixed_window", Limit: n, Window: time.Hour}} }
	a, b, sq := sharedPair(t, Quota{Kind: "fixed_window", Limit: 3, Window: time.Minute}, hourly(1), hourly(5), RetryAfter{None: true})
	steps := []struct {
		s    *Server
		at   time.Duration
		ok   bool
		left int64 // Remaining after the answer: the least over the host's quota and the shared one
	}{{a, 0, true, 0}, {a, 1, false, 0}, {b, 2, true, 1}, {b, 3, true, 0}, {b, 4, false, 0}, {b, 61, true, 2}}
	for i, st := range steps {
		ans := st.s.Start(st.at*time.Second, 1)
		if ans.OK != st.ok || ans.Remaining != st.left {
			t.Fatalf("step %d (%s at %vs): OK %v, Remaining %d; want %v, %d", i, st.s.cfg.Host, st.at, ans.OK, ans.Remaining, st.ok, st.left)
		}
	}
	if admitted, refused, _ := sq.Counts(); admitted != 4 || refused != 1 {
		t.Fatalf("shared admitted %d, refused %d; want 4 and 1 (a's own refusal is not the shared quota's)", admitted, refused)
	}
}

// TestSharedQuotaCountsCost: a shared quota with unit = "cost" takes each
// admitted request's cost, whichever host it went to: 7 requests of
// cost 1 and 3 of cost 5 take exactly 22, and the next request of cost 5
// finds 3 left of 25 and is refused.
func TestSharedQuotaCountsCost(t *testing.T) {
	a, b, sq := sharedPair(t, Quota{Kind: "fixed_window", Limit: 25, Window: time.Minute, Unit: UnitCost}, nil, nil, RetryAfter{None: true})
	costs := []int64{1, 5, 1, 1, 5, 1, 1, 5, 1, 1}
	for i, c := range costs {
		s := []*Server{a, b}[i%2]
		if ans := s.Start(time.Duration(i)*ms, c); !ans.OK {
			t.Fatalf("request %d of cost %d refused", i, c)
		} else if want := int64(25) - sum(costs[:i+1]); ans.RemainingCost != want {
			t.Fatalf("request %d: RemainingCost %d on host %s, want %d", i, ans.RemainingCost, s.cfg.Host, want)
		}
	}
	if ans := a.Start(20*ms, 5); ans.OK {
		t.Fatal("a request of cost 5 with 3 left was admitted")
	}
	if admitted, refused, taken := sq.Counts(); admitted != 10 || refused != 1 || taken != 22 {
		t.Fatalf("shared admitted %d, refused %d, taken %d; want 10, 1, 22", admitted, refused, taken)
	}
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// TestSharedQuotaErrors: a shared quota is built as a host's own is, and
// its errors name it.
func TestSharedQuotaErrors(t *testing.T) {
	_, err := NewSharedQuota(SharedConfig{Name: "h", Quota: Quota{Kind: "sliding_window", Limit: 5, Window: time.Second, Unit: UnitCost}})
	if err == nil || err.Error() != "quota h: a sliding_window quota cannot count cost" {
		t.Fatalf("err = %v", err)
	}
	sq, err := NewSharedQuota(SharedConfig{Name: "h", Quota: Quota{Kind: "sliding_window", Limit: 5, Window: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewServer(Config{Host: "x", Latency: Constant{Value: ms}, Refused: RefusedAll, Shared: []*SharedQuota{sq}}, rand.New(rand.NewPCG(1, 1)), nil)
	if err == nil {
		t.Fatal("refused_counts all accepted over a shared sliding window, which cannot count refusals")
	}
}
