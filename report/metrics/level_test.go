package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// A level's areas are those of its count summed over time, exactly: the
// area of every interval, of the whole run and of the steady state, with
// the warm-up ending inside an interval, at a move, at a fold or with no
// move near it, and with moves at the same instant as a fold; and its
// steady-state peak counts what it held when the warm-up ended. The
// reference integrates the count step by step.
func TestLevelAreasAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for round := range 300 {
		warmup := time.Duration(rng.IntN(4000))
		switch round % 3 {
		case 0:
			warmup = time.Duration(rng.IntN(40)) * 100 // on a fold
		case 1:
			warmup = 0
		}
		l := level{}
		l.warmAt = warmup
		var n, maxN, steady, all int64
		nWarm := int64(-1) // the count when the warm-up ended: before the first move at or after it
		last, lastFold := time.Duration(0), time.Duration(0)
		var iv int64
		advance := func(to time.Duration) { // the reference's area from last to to
			for s := last; s < to; s++ {
				all += n
				iv += n
				if s >= warmup {
					steady += n
				}
			}
			last = to
		}
		now := time.Duration(0)
		for now < 4000 {
			now += time.Duration(rng.IntN(30))
			if rng.IntN(8) == 0 || now >= lastFold+100 { // a tick at every multiple of 100
				at := lastFold + 100
				if at <= now {
					advance(at)
					if got := l.fold(at, warmup); got != iv {
						t.Fatalf("round %d: interval to %v has area %d, want %d", round, at, got, iv)
					}
					iv, lastFold = 0, at
					continue
				}
			}
			advance(now)
			if now >= warmup && nWarm < 0 {
				nWarm = n
			}
			if n > 0 && rng.IntN(2) == 0 {
				l.leave(now, now-time.Duration(rng.IntN(50)), warmup)
				n--
			} else {
				l.enter(now, warmup)
				n++
				if now >= warmup {
					maxN = max(maxN, n)
				}
			}
		}
		advance(now)
		if nWarm < 0 {
			nWarm = n
		}
		l.fold(now, warmup)
		if l.areaAll != float64(all) || l.area != float64(steady) || l.peak() != max(maxN, nWarm) {
			t.Fatalf("round %d (warm-up %v): area %v, steady %v, peak %d; want %d, %d, %d", round, warmup, l.areaAll, l.area, l.peak(), all, steady, max(maxN, nWarm))
		}
	}
}

// An interval's area stays exact when the instants are near the end of
// int64's range and the running sums have wrapped around.
func TestLevelAreaSurvivesWrapAround(t *testing.T) {
	const start = time.Duration(1 << 62)
	var s stage
	for k := range 1000 { // 1,000 in the stage, entering 1 ns apart
		s.enter(start + time.Duration(k))
	}
	s.fold(start + 1000)
	end := start + 1000 + time.Hour
	// 1,000 for an hour: 3.6·10¹⁵ count·ns, while acc has wrapped.
	if got, want := s.fold(end), int64(1000)*int64(time.Hour); got != want {
		t.Fatalf("an hour's area %d, want %d", got, want)
	}
	for k := range 1000 {
		s.leave(end, start+time.Duration(k))
	}
	if got := s.fold(end + time.Hour); got != 0 {
		t.Fatalf("an empty stage's hour has area %d", got)
	}
}

// Every steady-state level leaves the warm-up out: one of each (request in
// flight, queued item, blocked producer, waiter, held permit, attempt in
// the server's quota) from 0.5 s to 1.5 s, a warm-up of 1.25 s (inside an
// interval) and a run of 3 s make a steady-state mean of 0.25 s ÷ 1.75 s,
// while the intervals and Little's law see the whole second.
func TestSteadyLevelsLeaveTheWarmUpOut(t *testing.T) {
	const ms = time.Millisecond
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Warmup: 1250 * ms, Interval: s, Ingest: "queue",
		Limiters: []LimiterInfo{{Name: "c", Kind: "semaphore", Scope: "global", Scopes: []string{"global"}, Capacity: 1, Cost: 1, Releases: true, Family: "concurrency"}},
		Hosts:    []string{"api"}, Quotas: []QuotaInfo{{Permits: 1}}, Tenants: []string{"a"}, Instances: 1})
	r.Arrived(500*ms, 0)
	r.QueueIn(500 * ms)
	r.Blocked(500*ms, 1)
	r.LimiterParked(500*ms, 0)
	r.LimiterPassed(500*ms, 0, 0)
	r.Sent(500*ms, 0)
	r.Served(500*ms, 0, s, true)
	r.Tick(s, []float64{0}, []float64{0}, []float64{0})
	r.QueueOut(1500*ms, 500*ms)
	r.Blocked(1500*ms, -1)
	r.LimiterLeft(1500*ms, 500*ms, 0, 0, LeftGaveUp)
	r.LimiterReleased(1500*ms, 0, 0)
	r.ServedDone(1500*ms, 500*ms, 0)
	r.Answered(1500*ms, 500*ms, 0, true)
	r.Ended(1500*ms, 500*ms, 0, Succeeded, 0)
	r.Tick(2*s, []float64{0}, []float64{0}, []float64{0})
	r.Tick(3*s, []float64{0}, []float64{0}, []float64{0})
	res, series := r.Finish(3*s, 3*s, 1, Stop{})
	l, u := res.Limiters[0], res.Upstreams[0]
	for _, c := range []struct {
		what string
		got  float64
	}{{"in flight", res.InFlight.Mean}, {"queue depth", res.Queue.MeanDepth}, {"waiting", l.MeanWaiting},
		{"semaphore utilisation", l.Utilisation}, {"quota utilisation", *u.QuotaUtilisation}} {
		if math.Abs(c.got-1.0/7) > 1e-12 {
			t.Errorf("steady-state mean %s %v, want 1/7", c.what, c.got)
		}
	}
	if res.InFlight.Max != 1 || res.Queue.MaxBlocked != 1 || l.MaxWaiting != 1 {
		t.Errorf("maxima in flight %d, blocked %d, waiting %d: want 1 (each was 1 after the warm-up)", res.InFlight.Max, res.Queue.MaxBlocked, l.MaxWaiting)
	}
	for _, col := range []string{"in_flight", "in_system", "queue_depth", "blocked_producers", "c.waiting", "c.utilisation", "api.quota_utilisation"} {
		if got := series.Column(col); len(got) != 3 || got[0] != 0.5 || got[1] != 0.5 || got[2] != 0 {
			t.Errorf("%s by interval %v, want [0.5 0.5 0]", col, got)
		}
	}
	for _, lt := range res.Little {
		if lt.L != 1.0/3 || lt.RelError > 1e-12 {
			t.Errorf("Little %+v: want L = 1 s ÷ 3 s", lt)
		}
	}
}
