package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkFinishManyTenants closes the figures of a run with 10,000
// tenants, each behind its own scope of a per-tenant limiter: a wait
// distribution per scope and per tenant, 60 requests each, a third of
// them waiting. What it times is the recorder closing its figures after
// the last event at that scale (the diagnoses and the output come after).
func BenchmarkFinishManyTenants(b *testing.B) {
	const tenants, each = 10_000, 60
	names := make([]string, tenants)
	for i := range names {
		names[i] = fmt.Sprintf("t%d", i)
	}
	lay := Layout{Scenario: "tenants", Seed: 1, Interval: time.Hour, Ingest: "tasks",
		Limiters: []LimiterInfo{{Name: "per", Kind: "token_bucket", Scope: "tenant", Scopes: names, Capacity: 5, Cost: 1}},
		Hosts:    []string{"api"}, Quotas: []QuotaInfo{{}}, Tenants: names}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r := NewRecorder(lay)
		rng := rand.New(rand.NewPCG(1, 2))
		now := time.Hour // after the longest wait's start
		for range each {
			for t := range tenants {
				now += time.Microsecond
				var wait time.Duration
				if rng.IntN(3) == 0 {
					wait = time.Duration(math.Exp(math.Log(0.2e9) + 0.8*rng.NormFloat64()))
				}
				r.Arrived(now, t) // the times recorded never go back; only the waits' starts lie behind
				if wait > 0 {
					r.LimiterParked(now, 0)
					r.LimiterLeft(now, now-wait, 0, t, LeftGranted)
				} else {
					r.LimiterPassed(now, 0, t)
				}
				r.Ended(now, now-wait, t, Succeeded, wait)
			}
		}
		end := now + time.Minute
		b.StartTimer()
		if res, _ := r.Finish(end, end, 0, Stop{}); len(res.Tenants) != tenants || len(res.Limiters[0].Scopes) != tenants {
			b.Fatalf("%d tenants, %d scopes", len(res.Tenants), len(res.Limiters[0].Scopes))
		}
	}
}
