package metrics

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func manyTenants(n int) *Results {
	r := &Results{Limiters: []LimiterStats{{Name: "per", Scope: "tenant"}, {Name: "global", Scope: "global"}}}
	for i := range n {
		// p99 waits spread over 0 … 10 s in a shuffled order.
		p99 := float64((i*37)%n) / float64(n) * 10
		r.Tenants = append(r.Tenants, TenantStats{Name: fmt.Sprintf("t%d", i), Arrived: int64(100 + i), Succeeded: int64(90 + i%10),
			ArrivalShare: 1 / float64(n), Share: 1.0 / 3 / float64(n), SuccessRate: 0.9, WaitS: Dist{Count: 5, Mean: p99 / 3, P50: p99 / 2, P90: p99 * 0.9, P99: p99, Max: p99 * 1.5}})
		r.Limiters[0].Scopes = append(r.Limiters[0].Scopes, ScopeStats{Key: fmt.Sprintf("t%d", i), Acquired: int64(i), PWait: 0.25,
			WaitS: Dist{Count: 3, P99: p99}, Utilisation: 0.1})
	}
	r.TenantsTotal, r.Limiters[0].ScopesTotal = n, n
	return r
}

// Up to MaxListed tenants and scopes metrics.json lists them all in the
// scenario's order; beyond, the ListedWorst with the longest p99 wait,
// longest first, with the totals kept, and the run's own results untouched.
func TestListedCutsLongListsToTheWorst(t *testing.T) {
	small := manyTenants(MaxListed)
	if got := Listed(small); !reflect.DeepEqual(got, small) {
		t.Fatal("a run of MaxListed tenants is not listed in full")
	}
	r := manyTenants(1000)
	got := Listed(r)
	if len(r.Tenants) != 1000 || len(r.Limiters[0].Scopes) != 1000 {
		t.Fatal("Listed changed the run's own results")
	}
	if len(got.Tenants) != ListedWorst || len(got.Limiters[0].Scopes) != ListedWorst || got.TenantsTotal != 1000 || got.Limiters[0].ScopesTotal != 1000 {
		t.Fatalf("listed %d tenants and %d scopes (totals %d, %d), want %d of 1000", len(got.Tenants), len(got.Limiters[0].Scopes),
			got.TenantsTotal, got.Limiters[0].ScopesTotal, ListedWorst)
	}
	// The 20 longest of 0, 0.01, …, 9.99 s are 9.80 … 9.99 s, longest first.
	for k, tn := range got.Tenants {
		want := float64(999-k) / 1000 * 10
		if tn.WaitS.P99 != want || got.Limiters[0].Scopes[k].WaitS.P99 != want {
			t.Fatalf("position %d: tenant p99 %v, scope p99 %v, want %v", k, tn.WaitS.P99, got.Limiters[0].Scopes[k].WaitS.P99, want)
		}
	}
}

// tenants.csv and scopes.csv hold every entity exactly: reading them back
// gives the lists that were written.
func TestEntityCSVRoundTrip(t *testing.T) {
	r := manyTenants(250)
	var tb, sb bytes.Buffer
	if err := WriteTenantsCSV(&tb, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteScopesCSV(&sb, r); err != nil {
		t.Fatal(err)
	}
	back := Listed(r)
	if err := ReadTenantsCSV(&tb, back); err != nil {
		t.Fatal(err)
	}
	if err := ReadScopesCSV(&sb, back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Tenants, r.Tenants) || !reflect.DeepEqual(back.Limiters, r.Limiters) {
		t.Fatal("tenants.csv and scopes.csv do not read back to the lists written")
	}
	bad := "tenant,arrived,succeeded,arrival_share,admitted_share,success_rate,wait_count,wait_mean_s,wait_p50_s,wait_p90_s,wait_p99_s,wait_max_s\nt0,ten,1,0,0,0,0,0,0,0,0,0\n"
	if err := ReadTenantsCSV(strings.NewReader(bad), back); err == nil || !strings.Contains(err.Error(), "line 2, column arrived") {
		t.Fatalf("a bad cell: %v, want the line and the column named", err)
	}
}

// Worst selects exactly what a stable sort would put first: the n best by
// rank, ties in their original order, for lengths around n and many ties
// (a list of at most n comes back as it is).
func TestWorstIsAStableSortsHead(t *testing.T) {
	type item struct{ key, pos int }
	rank := func(a, b item) int { return cmp.Compare(b.key, a.key) } // largest key first
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		xs := make([]item, rng.IntN(60))
		for i := range xs {
			xs[i] = item{key: rng.IntN(1 + trial%12), pos: i}
		}
		n := 1 + rng.IntN(25)
		want := xs // at most n: returned as they are
		if len(xs) > n {
			want = slices.Clone(xs)
			slices.SortStableFunc(want, rank)
			want = want[:n]
		}
		if got := Worst(xs, n, rank); !slices.Equal(got, want) {
			t.Fatalf("n = %d over %v:\n got %v\nwant %v", n, xs, got, want)
		}
	}
}
