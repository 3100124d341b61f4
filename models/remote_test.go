package models_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// greedy is a caller that asks again the moment it is granted, until a
// horizon: the most demand a front on a store can see.
type greedy struct {
	e      *sim.Engine
	lim    models.Limiter
	until  time.Duration
	grants []time.Duration
}

func (g *greedy) Fire(now time.Duration, _ uint64) {
	g.grants = append(g.grants, now)
	g.ask(now)
}

func (g *greedy) ask(now time.Duration) {
	for now < g.until {
		if _, st := g.lim.Acquire(now, 1, 0, g, 0); st != models.Granted {
			return
		}
		g.grants = append(g.grants, now)
	}
}

// newStoreCallers puts n greedy callers, one per instance, on a store of
// rate/s with the given burst and sync interval (0: a call per
// acquisition), and runs them for d.
func newStoreCallers(t *testing.T, n int, rate float64, burst int64, c models.StoreConfig, d time.Duration) (*models.Store, []*greedy) {
	t.Helper()
	e := sim.New(7)
	g, err := models.NewGCRA(models.GCRAConfig{Rate: rate, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	s, err := models.NewStore(g, e, e.Stream("store"), c)
	if err != nil {
		t.Fatal(err)
	}
	callers := make([]*greedy, n)
	for i := range callers {
		callers[i] = &greedy{e: e, lim: s.Front(models.Unbounded), until: d}
		callers[i].ask(0)
	}
	// Callers still parked at the horizon keep a store that always fails
	// syncing: stop there.
	if err := e.RunUntil(d); err != nil {
		t.Fatal(err)
	}
	return s, callers
}

// mostInWindow returns the most grants, over every caller, in any window
// of length w that starts at a grant.
func mostInWindow(callers []*greedy, w time.Duration) int {
	var all []time.Duration
	for _, c := range callers {
		all = append(all, c.grants...)
	}
	sortDurations(all)
	most, j := 0, 0
	for i := range all {
		for all[i]-all[j] >= w {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

func sortDurations(d []time.Duration) {
	for i := 1; i < len(d); i++ {
		for k := i; k > 0 && d[k] < d[k-1]; k-- {
			d[k], d[k-1] = d[k-1], d[k]
		}
	}
}

func total(callers []*greedy) int {
	n := 0
	for _, c := range callers {
		n += len(c.grants)
	}
	return n
}

// Without a sync interval every acquisition is a call and the store holds
// the limit exactly: in any second no more than rate + burst pass.
func TestRemoteHoldsTheLimitExactly(t *testing.T) {
	const rate, burst, n = 100.0, 10, 4
	s, callers := newStoreCallers(t, n, rate, burst, models.StoreConfig{RTT: models.Jitter{A: time.Millisecond}}, 20*time.Second)
	if got := mostInWindow(callers, time.Second); got > rate+burst {
		t.Errorf("%d grants in one second through the store, limit %v + burst %d", got, rate, burst)
	}
	if got := total(callers); got < 1990 || got > 2010 {
		t.Errorf("%d grants in 20 s at 100/s", got)
	}
	if calls, _ := s.Calls(); calls < int64(total(callers)) {
		t.Errorf("%d store calls for %d grants: every grant needs a call", calls, total(callers))
	}
}

// A local copy synced every interval makes one call per instance and
// interval, whatever the traffic; between syncs the instances admit on
// stale copies and together go over the limit (each instance's copy allows
// the whole rate), but the debt they leave in the store holds them back
// after, so the long-run rate stays at the limit.
func TestCachedTradesAccuracyForCalls(t *testing.T) {
	const rate, burst, n = 100.0, 10, 4
	const d, every = 60 * time.Second, time.Second
	s, callers := newStoreCallers(t, n, rate, burst, models.StoreConfig{RTT: models.Jitter{A: time.Millisecond}, SyncInterval: every}, d)
	got := total(callers)
	// At most what the store allows over the run plus what each instance
	// can admit in one interval before its spending is charged.
	hi := int(rate*d.Seconds()) + burst + n*(int(rate*every.Seconds())+burst)
	if lo := int(rate*d.Seconds()) - int(rate*every.Seconds()); got < lo || got > hi {
		t.Errorf("%d grants in 60 s: want the limit's 6,000 within [%d, %d]", got, lo, hi)
	}
	if most := mostInWindow(callers, time.Second); most <= rate+burst {
		t.Errorf("at most %d grants in any second: stale copies should overshoot the limit's %v", most, rate+burst)
	}
	calls, _ := s.Calls()
	t.Logf("%d grants, at most %d in a second, %d calls", got, mostInWindow(callers, time.Second), calls)
	syncs := int64(n) * int64(d/every)
	if calls < syncs-n || calls > syncs+n {
		t.Errorf("%d store calls; want one per instance and interval, about %d", calls, syncs)
	}
}

// A short interval approaches the store's own accuracy with a fraction of
// its calls.
func TestCachedShortIntervalIsNearlyExact(t *testing.T) {
	const rate, burst, n = 100.0, 10, 4
	s, callers := newStoreCallers(t, n, rate, burst, models.StoreConfig{RTT: models.Jitter{A: time.Millisecond}, SyncInterval: 10 * time.Millisecond}, 20*time.Second)
	if most := mostInWindow(callers, time.Second); most > rate+burst+n*(1+burst) {
		t.Errorf("%d grants in one second with 10 ms syncs: want near the limit %v + burst", most, rate)
	}
	if calls, _ := s.Calls(); calls > 8100 {
		t.Errorf("%d calls: want one per instance and 10 ms", calls)
	}
}

// A failed sync closes the copy when the store fails closed (no grant
// until a sync succeeds: none, here) and leaves it admitting on its stale
// view when it fails open.
func TestCachedFailedSync(t *testing.T) {
	c := models.StoreConfig{RTT: models.Jitter{A: time.Millisecond}, SyncInterval: 100 * time.Millisecond, Errors: 1}
	_, closed := newStoreCallers(t, 1, 100, 10, c, 10*time.Second)
	// Before the first sync the copy admits the burst and the rate; after
	// it, nothing.
	if got := total(closed); got > 10+11 {
		t.Errorf("fail closed: %d grants; want only those before the first sync", got)
	}
	c.FailOpen = true
	_, open := newStoreCallers(t, 1, 100, 10, c, 10*time.Second)
	if got := total(open); got < 1000 {
		t.Errorf("fail open: %d grants in 10 s; want the local copy's 100/s", got)
	}
}

// A copy closed by a failed sync (fail closed) with no waiting line
// refuses at once (Full); those refusals still start syncs again, so the
// instance finds out when the store is back instead of staying shut.
func TestCachedClosedCopyKeepsSyncing(t *testing.T) {
	e := sim.New(7)
	g, err := models.NewGCRA(models.GCRAConfig{Rate: 100, Burst: 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := models.NewStore(g, e, e.Stream("store"), models.StoreConfig{RTT: models.Jitter{A: time.Millisecond},
		SyncInterval: 100 * time.Millisecond, Errors: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := s.Front(models.AtMost(0))
	poke := clock.HandlerFunc(nil)
	poke = func(now time.Duration, _ uint64) {
		f.Acquire(now, 1, 0, clock.HandlerFunc(func(time.Duration, uint64) {}), 0)
		if now < 2*time.Second {
			e.At(now+50*time.Millisecond, poke, 0)
		}
	}
	e.At(0, poke, 0)
	if err := e.RunUntil(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	if calls, failed := s.Calls(); calls < 10 || failed != calls {
		t.Errorf("%d sync calls (%d failed) over 2 s of refusals: a closed copy must keep trying", calls, failed)
	}
}

// A uniform jitter over the widest range a duration allows (its span + 1
// is 2⁶³, past an int64) draws within it, as a narrower one does.
func TestUniformJitterOverEveryDuration(t *testing.T) {
	j := models.Jitter{Kind: models.Uniform, A: 0, B: math.MaxInt64}
	r := rand.New(rand.NewPCG(1, 2))
	var above int
	for range 1000 {
		d := j.Sample(r)
		if d < 0 {
			t.Fatalf("draw %v below 0", d)
		}
		if d > math.MaxInt64/2 {
			above++
		}
	}
	if above < 400 || above > 600 {
		t.Fatalf("%d of 1000 draws above the middle", above)
	}
}
