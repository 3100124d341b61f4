package metrics

import (
	"math"
	"math/big"
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
		l.init(warmup)
		var n, maxN, steady, all int64
		nWarm := int64(-1) // the count when the steady state started: after the moves at the warm-up's end
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
					if got := l.fold(at, warmup); got != float64(iv) {
						t.Fatalf("round %d: interval to %v has area %v, want %d", round, at, got, iv)
					}
					iv, lastFold = 0, at
					continue
				}
			}
			advance(now)
			if now > warmup && nWarm < 0 {
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
		if now <= warmup {
			nWarm = 0 // the run ended before the steady state: nothing was seen in it
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
	// 1,000 for an hour: 3.6·10¹⁵ count·ns, while the offset has wrapped.
	if got, want := s.fold(end), float64(1000*int64(time.Hour)); got != want {
		t.Fatalf("an hour's area %v, want %v", got, want)
	}
	for k := range 1000 {
		s.leave(end, start+time.Duration(k))
	}
	if got := s.fold(end + time.Hour); got != 0 {
		t.Fatalf("an empty stage's hour has area %v", got)
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

// An area stays exact where the integer one would overflow: 2²⁷ held for
// ten hours is 4.8·10²¹ count·ns, far past int64's 9.2·10¹⁸, in one long
// interval closed every foldSpan as the recorder's Fold does, with and
// without moves of the whole count inside it; the reference multiplies in
// big integers. Without the closes, the interval's area wraps around.
func TestLongIntervalsDoNotOverflow(t *testing.T) {
	const big = 1 << 27
	for _, moves := range []bool{false, true} {
		var g gauge
		var l level
		g.init(time.Hour)
		l.init(time.Hour)
		ref := new(bigInt)
		n, last := int64(0), time.Duration(0)
		next := foldSpan
		step := func(now time.Duration, delta int64) {
			for ; next <= now; next += foldSpan {
				g.refold(next, time.Hour)
				l.refold(next, time.Hour)
			}
			ref.add(n, now-last)
			n, last = n+delta, now
			g.move(now, time.Hour, delta)
			l.move(now, time.Hour, delta)
		}
		step(time.Minute, big)
		if moves {
			for k := 1; k <= 18; k++ { // all out and back 10 minutes later, every half hour
				step(time.Duration(k)*30*time.Minute, -big)
				step(time.Duration(k)*30*time.Minute+10*time.Minute, big)
				step(time.Duration(k)*30*time.Minute+11*time.Minute, 1)
			}
		}
		end := 10 * time.Hour
		step(end, 0)
		want := ref.float()
		if got := g.fold(end, time.Hour); math.Abs(got-want) > 1e-12*want {
			t.Errorf("moves %v: gauge area %v, want %v", moves, got, want)
		}
		if got := l.fold(end, time.Hour); math.Abs(got-want) > 1e-12*want {
			t.Errorf("moves %v: level area %v, want %v", moves, got, want)
		}
		// The steady state is the last nine hours of it (without moves,
		// exactly 2²⁷ for nine hours).
		if !moves && math.Abs(g.area-float64(big)*float64(9*time.Hour)) > 1e-12*g.area {
			t.Errorf("steady-state area %v, want %v", g.area, float64(big)*float64(9*time.Hour))
		}
	}
}

// Within an interval longer than foldSpan the recorder asks to fold at
// least every foldSpan before the interval's tick; a shorter interval has
// no fold before its tick.
func TestRecorderFoldsLongIntervals(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Interval: 10 * time.Minute, Tenants: []string{"a"}})
	var at []time.Duration
	for len(at) < 40 {
		now := r.NextFold()
		if now >= r.NextTick() {
			now = r.NextTick()
			r.Tick(now, nil, nil, nil)
		} else {
			r.Fold(now)
		}
		at = append(at, now)
	}
	prev, ticks := time.Duration(0), 0
	for _, t1 := range at {
		if t1-prev > foldSpan || t1 <= prev {
			t.Fatalf("folds and ticks at %v: a gap over %v", at, foldSpan)
		}
		if t1%(10*time.Minute) == 0 {
			ticks++
		}
		prev = t1
	}
	if ticks != 4 || at[8] != 10*time.Minute {
		t.Fatalf("folds and ticks at %v: want eight folds, then the tick, in each 10 minutes", at)
	}
	short := NewRecorder(Layout{Scenario: "t", Seed: 1, Interval: time.Minute, Tenants: []string{"a"}})
	if short.NextFold() < short.NextTick() {
		t.Fatalf("a 1-minute interval folds at %v before its tick at 1m", short.NextFold())
	}
}

// bigInt sums count × span products exactly.
type bigInt struct{ v big.Int }

func (b *bigInt) add(n int64, d time.Duration) {
	var p big.Int
	p.Mul(big.NewInt(n), big.NewInt(int64(d)))
	b.v.Add(&b.v, &p)
}

func (b *bigInt) float() float64 { f, _ := new(big.Float).SetInt(&b.v).Float64(); return f }

// A level that empties at the very instant the warm-up ends starts the
// steady state empty: its steady-state maximum is 0, not what it held
// before.
func TestLevelEmptiedAtTheWarmUpPeaksAtZero(t *testing.T) {
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Warmup: s, Interval: s, Ingest: "queue", Tenants: []string{"a"}})
	r.QueueIn(100 * time.Millisecond)
	r.QueueIn(200 * time.Millisecond)
	r.QueueOut(s, 100*time.Millisecond)
	r.QueueOut(s, 200*time.Millisecond)
	r.Tick(s, nil, nil, nil)
	r.Tick(2*s, nil, nil, nil)
	res, _ := r.Finish(2*s, 2*s, 1, Stop{})
	if res.Queue.MaxDepth != 0 || res.Queue.MeanDepth != 0 {
		t.Fatalf("steady-state queue depth max %d mean %v, want 0 and 0", res.Queue.MaxDepth, res.Queue.MeanDepth)
	}
}

// Through the recorder: 2²⁷ blocked producers for most of a ten-hour
// interval, folded whenever NextFold asks, read back as their mean in the
// interval's row (the integer area alone would wrap around 560 times).
func TestRecorderLongIntervalRow(t *testing.T) {
	const big = 1 << 27
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Interval: 10 * time.Hour, Ingest: "queue", Tenants: []string{"a"}})
	r.Blocked(time.Minute, big)
	for now := r.NextFold(); now < r.NextTick(); now = r.NextFold() {
		r.Fold(now)
	}
	r.Tick(10*time.Hour, nil, nil, nil)
	_, series := r.Finish(10*time.Hour, 10*time.Hour, 1, Stop{})
	want := float64(big) * float64(10*time.Hour-time.Minute) / float64(10*time.Hour)
	if got := series.Column("blocked_producers")[0]; math.Abs(got-want) > 1e-12*want {
		t.Fatalf("blocked producers in the interval %v, want %v", got, want)
	}
}

// A run ends at its last completion, which may be before the tick that
// rounded up to the interval's boundary while a server still worked on an
// abandoned attempt: closing the areas at that earlier end adds nothing,
// where a negative span would wrap around to 10¹⁹.
func TestFinishBeforeTheLastTickKeepsTheAreas(t *testing.T) {
	const ms = time.Millisecond
	r := NewRecorder(Layout{Scenario: "t", Seed: 1, Interval: s, Ingest: "tasks",
		Hosts: []string{"api"}, Quotas: []QuotaInfo{{Permits: 1}}, Tenants: []string{"a"}})
	r.Sent(500*ms, 0)
	r.Served(500*ms, 0, 10*s, true) // served until 10.5 s
	r.Abandoned(1200*ms, 500*ms)    // its client gave up
	r.Tick(s, nil, []float64{0}, []float64{0})
	r.Tick(2*s, nil, []float64{0}, []float64{0})
	res, _ := r.Finish(1500*ms, 1500*ms, 1, Stop{})
	// In service from 0.5 s to the last tick at 2 s, over a 1.5 s run.
	if u := *res.Upstreams[0].QuotaUtilisation; math.Abs(u-1) > 1e-12 {
		t.Fatalf("quota utilisation %v, want 1 (1.5 s in service up to the last tick, over 1.5 s)", u)
	}
	if m := res.InFlight.Mean; math.Abs(m-0.7/1.5) > 1e-12 {
		t.Fatalf("mean in flight %v, want 0.7 s over 1.5 s", m)
	}
}
