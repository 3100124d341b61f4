package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Long lists written an entry at a time give the bytes encoding/json
// writes for the whole document: tenants, hosts and the scopes of two of
// three limiters past the streaming length, with names that need escaping
// and entries whose optional parts differ; the results are left as they
// were. Short results take the plain path and match too.
func TestWriteJSONStreamsLongListsExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dist := func() Dist {
		return Dist{Count: rng.Int64N(1000), Mean: rng.Float64(), P50: rng.Float64(), P90: rng.Float64(), P99: rng.Float64(), Max: rng.Float64() * 10}
	}
	build := func(n int) *Results {
		r := &Results{Scenario: "streamed <&> \"quotes\"", Seed: 3, Complete: true}
		for i := range n {
			r.Tenants = append(r.Tenants, TenantStats{Name: fmt.Sprintf("t%d<é>", i), Arrived: rng.Int64N(1e6), Succeeded: rng.Int64N(1e6), WaitS: dist()})
			u := UpstreamStats{Host: fmt.Sprintf("h%d.example&co", i), Attempts: rng.Int64N(1e6), LatencyS: dist(), Rate429: rng.Float64()}
			if i%3 == 0 {
				q := rng.Float64() * 100
				u.QuotaRPS = &q
				u.RejectedBy = []QuotaRejections{{Quota: "token_bucket 8/s", Unit: "requests", Count: 2}}
			}
			r.Upstreams = append(r.Upstreams, u)
		}
		for li, scoped := range []int{n, 3, n + 5} {
			l := LimiterStats{Name: fmt.Sprintf("lim%d", li), Kind: "token_bucket", Scope: "tenant", WaitS: dist(), ScopesTotal: scoped}
			for j := range scoped {
				l.Scopes = append(l.Scopes, ScopeStats{Key: fmt.Sprintf("t%d", j), Acquired: int64(j), WaitS: dist(), Utilisation: rng.Float64()})
			}
			r.Limiters = append(r.Limiters, l)
		}
		r.Warnings = []Warning{{Text: "a warning after the lists"}}
		return r
	}
	for _, n := range []int{streamAbove + 1, 2*streamAbove + 7, 10} {
		r := build(n)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("%d entries: the streamed JSON differs from encoding/json's at byte %d of %d:\ngot  …%q\nwant …%q", n, i, len(w), g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
		if len(r.Tenants) != n || r.Limiters[0].Scopes[0].Key != "t0" || r.Upstreams[0].Host != "h0.example&co" {
			t.Fatalf("%d entries: WriteJSON changed the results", n)
		}
	}
}
