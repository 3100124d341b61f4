package models_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// benchMaxWaiting is the bound on each benchmark limiter's waiting line.
const benchMaxWaiting = 256

// benchParams are each kind's parameters in the benchmarks: about 1,000
// units a second for the rate and window kinds, 10 permits for the
// concurrency kinds, at most 256 waiting.
func benchParams(k models.Kind) models.Params {
	p := models.Params{Rate: 1000, Burst: 10, Limit: 100, Window: 100 * ms, Permits: 10,
		MaxWaiting: models.AtMost(benchMaxWaiting), Increase: 1, Decrease: 0.5, Interval: time.Second, K: 2}
	switch {
	case k.Name == "sre_throttle":
		p.Window = 2 * time.Minute
	case k.Family == models.RateFamily && k.Adaptive:
		p.Initial, p.Min, p.Max = 1000, 1, 2000
	case k.Adaptive:
		p.Initial, p.Min, p.Max = 10, 1, 20
	}
	return p
}

// newBenchLimiter builds kind k on e with benchParams.
func newBenchLimiter(b *testing.B, k models.Kind, e *sim.Engine) models.Limiter {
	b.Helper()
	env := models.Env{Sched: e, Stream: func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }}
	l, err := k.New(benchParams(k), env)
	if err != nil {
		b.Fatalf("%s: %v", k.Name, err)
	}
	return l
}

// BenchmarkAcquireAtOnce times one acquisition of each limiter kind that
// is granted at once, as most are below the limit: a rate or window
// limiter asked at half its rate, a concurrency limiter's permit taken and
// given back at the same instant, an adaptive limiter told of a success.
func BenchmarkAcquireAtOnce(b *testing.B) {
	for _, k := range models.Kinds() {
		b.Run(k.Name, func(b *testing.B) {
			e := sim.New(1)
			l := newBenchLimiter(b, k, e)
			rel, releases := l.(models.Releaser)
			adaptive, adapts := l.(models.Adaptive)
			gap := 2 * time.Millisecond // half of 1,000 a second
			var now time.Duration
			granted := 0
			b.ReportAllocs()
			for b.Loop() {
				now += gap
				if _, st := l.Acquire(now, 1, clock.Never, nopHandler{}, 0); st == models.Granted {
					granted++
					if adapts {
						adaptive.Observe(now, false, 0) // a success
					}
					if releases {
						rel.Release(now, 1)
					}
				}
			}
			if granted != b.N {
				b.Fatalf("%d of %d granted at once", granted, b.N)
			}
		})
	}
}

// BenchmarkAcquireContended times one acquisition of each limiter kind
// offered twice what it admits, through the engine: the waits, the
// wake-ups and the grants delivered as events, and for a concurrency
// limiter the release after a 20 ms hold; an adaptive limiter is told
// each granted attempt succeeded. An op is one acquisition, granted,
// refused by the bounded line or (sre_throttle) throttled. With at most
// 256 waiting, the polling bucket shows what polling costs: every waiter
// wakes for every token.
func BenchmarkAcquireContended(b *testing.B) {
	for _, k := range models.Kinds() {
		b.Run(k.Name, func(b *testing.B) {
			e := sim.New(1)
			d := &contended{e: e, lim: newBenchLimiter(b, k, e), gap: 500 * time.Microsecond}
			if k.Family == models.ConcurrencyFamily {
				// 10 permits held 20 ms admit 500 a second: offered 1,000.
				d.gap, d.hold = time.Millisecond, 20*time.Millisecond
			}
			d.rel, _ = d.lim.(models.Releaser)
			b.ReportAllocs()
			d.left = b.N
			b.ResetTimer()
			e.Post(0, (*contendedArrival)(d), 0)
			if err := e.Run(); err != nil {
				b.Fatal(err)
			}
			if d.granted == 0 || d.granted+d.refused != b.N {
				b.Fatalf("%d granted and %d refused of %d", d.granted, d.refused, b.N)
			}
			b.ReportMetric(float64(e.Events())/float64(b.N), "events/op")
			b.ReportMetric(float64(d.granted)/float64(b.N), "granted/op")
		})
	}
}

// contended drives one limiter: arrivals every gap, grants counted and,
// for a Releaser, released after hold.
type contended struct {
	e                *sim.Engine
	lim              models.Limiter
	rel              models.Releaser
	gap, hold        time.Duration
	left             int
	granted, refused int
}

type (
	contendedArrival contended
	contendedGrant   contended
	contendedRelease contended
)

func (h *contendedArrival) Fire(now time.Duration, _ uint64) {
	d := (*contended)(h)
	if d.left--; d.left > 0 {
		d.e.Post(now+d.gap, h, 0)
	}
	t, st := d.lim.Acquire(now, 1, clock.Never, (*contendedGrant)(d), 0)
	if st == models.Parked && d.lim.Waiting() > benchMaxWaiting && d.lim.Cancel(now, t) {
		// A kind without a line of its own (the polling and locked
		// buckets, xrate) is held to max_waiting as the client holds it.
		st = models.Full
	}
	switch st {
	case models.Granted:
		(*contendedGrant)(d).Fire(now, 0)
	case models.Parked:
	default:
		d.refused++
	}
}

func (h *contendedGrant) Fire(now time.Duration, _ uint64) {
	d := (*contended)(h)
	d.granted++
	if a, ok := d.lim.(models.Adaptive); ok {
		a.Observe(now, false, d.hold) // every answer a success
	}
	if d.rel != nil {
		d.e.Post(now+d.hold, (*contendedRelease)(d), 0)
	}
}

func (h *contendedRelease) Fire(now time.Duration, _ uint64) { (*contended)(h).rel.Release(now, 1) }

// nopHandler receives grants nobody waits for.
type nopHandler struct{}

func (nopHandler) Fire(time.Duration, uint64) {}
