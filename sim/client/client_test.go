package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

const ms = time.Millisecond

// dd1 is a deterministic single-server line built without any file format:
// arrivals every 100 ms, a semaphore of one permit, and an upstream that
// answers in exactly 250 ms.
func dd1(n int64) *Config {
	sem, err := models.LookupKind("semaphore")
	if err != nil {
		panic(err)
	}
	return &Config{
		Name: "dd1",
		Run: RunSettings{Seed: 1, Requests: n, Interval: time.Second, Replications: 1,
			MaxEvents: 1e6, MaxLiveRequests: 1e6, MaxEventsPerInstant: 1e6},
		Workload: Workload{Arrivals: arrivals.Spec{Kind: arrivals.KindConstant, Rate: 10}, Cost: 1,
			Hosts: []Share{{Name: "api", Weight: 1}}, Tenants: []Tenant{{Share: Share{Name: "default", Weight: 1}}}},
		Instances: 1,
		Limiters:  []LimiterConfig{{Name: "sem", Kind: sem, Params: models.Params{Permits: 1}}},
		Retry:     Retry{Attempts: 1},
		Upstreams: []upstream.Config{{Host: "api", Latency: upstream.Constant{Value: 250 * ms}}},
	}
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// In a D/D/1 line every figure has a closed form: request k (from 1)
// arrives at 0.1k s, starts at 0.1 + 0.25(k−1) s and so waits 0.15(k−1) s.
// The test holds the recorder's waits, in-flight level, waiting line and
// elapsed time against those values, computed here independently of the
// recorder: an off-by-one in the line, a release that frees the wrong
// count, or a level integrated over the wrong span changes them.
func TestDeterministicLineMatchesClosedForm(t *testing.T) {
	const n = 50
	out, err := Run(dd1(n), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results
	if !r.Complete || r.Requests.Succeeded != n {
		t.Fatalf("complete %v, succeeded %d of %d", r.Complete, r.Requests.Succeeded, n)
	}
	var sumWait float64
	for k := 1; k <= n; k++ {
		sumWait += 0.15 * float64(k-1)
	}
	elapsed := 0.1 + 0.25*n
	l := r.Limiters[0]
	checks := []struct {
		name      string
		got, want float64
	}{
		{"elapsed_s", r.ElapsedS, elapsed},
		{"wait mean", l.WaitS.Mean, sumWait / n},
		{"wait max", l.WaitS.Max, 0.15 * (n - 1)},
		{"wait p50", l.WaitS.P50, 0.15 * 24}, // the 25th of 50 sorted waits
		{"wait p99", l.WaitS.P99, 0.15 * 49},
		{"mean waiting (L of the line)", l.MeanWaiting, sumWait / elapsed},
		{"mean in flight", r.InFlight.Mean, n * 0.25 / elapsed},
		{"goodput", r.Throughput.GoodputRPS, n / elapsed},
		{"semaphore utilisation (permits held ÷ permits)", l.Utilisation, n * 0.25 / elapsed},
		{"end-to-end mean (wait + 250 ms)", r.RequestS.Mean, sumWait/n + 0.25},
		{"end-to-end max", r.RequestS.Max, 0.15*(n-1) + 0.25},
		{"success ratio", r.SuccessRatio, 1},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 2e-3) {
			t.Errorf("%s = %.6g, want %.6g", c.name, c.got, c.want)
		}
	}
	if l.PWait != float64(n-1)/n {
		t.Errorf("p_wait = %v, want %v (every request but the first waits)", l.PWait, float64(n-1)/n)
	}
	if r.InFlight.Max != 1 {
		t.Errorf("peak in flight %d with one permit", r.InFlight.Max)
	}
}

// A later 429 with a shorter Retry-After must not shorten a host pause
// already in force: the pause ends at the later of the two ends.
func TestHostPauseKeepsTheLaterEnd(t *testing.T) {
	cfg := dd1(10)
	cfg.Retry.Attempts = 3
	cfg.On429 = On429{Pause: PauseHost, HonorRetryAfter: true}
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(now, retryAfter time.Duration) { answer429(p, now, retryAfter) }
	answer(time.Second, 10*time.Second)
	if got := p.instances[0].pausedUntil[0]; got != 11*time.Second {
		t.Fatalf("paused until %v after a 10 s Retry-After at 1 s, want 11s", got)
	}
	answer(2*time.Second, 3*time.Second)
	if got := p.instances[0].pausedUntil[0]; got != 11*time.Second {
		t.Fatalf("a shorter Retry-After moved the pause end to %v, want it kept at 11s", got)
	}
	answer(9*time.Second, 4*time.Second)
	if got := p.instances[0].pausedUntil[0]; got != 13*time.Second {
		t.Fatalf("a later end did not extend the pause: %v, want 13s", got)
	}
	// Three 429s so far, one pause episode; a 429 after the pause ended
	// starts a second.
	answer(14*time.Second, time.Second)
	res, _ := p.rec.Finish(20*time.Second, 20*time.Second, 0, metrics.Stop{})
	if got := res.Upstreams[0].Pauses; got != 2 {
		t.Fatalf("pauses = %d, want 2 episodes (extensions are not new pauses)", got)
	}
}

// answer429 delivers a 429 with a Retry-After to a fresh in-flight request.
func answer429(p *pipeline, now, retryAfter time.Duration) {
	_, r, h := p.requests.Alloc()
	r.handle, r.phase, r.lim = h, phInFlight, -1
	r.answer = upstream.Answer{RetryAfter: retryAfter, HasRetryAfter: true}
	p.on429(now, r)
}

// With pause_end = "latest" every 429 sets the pause end to its own
// now + delay, as the article's paused_until[host] = now + delay does: a
// shorter Retry-After arriving during a pause shortens it.
func TestHostPauseLatestEndOverwrites(t *testing.T) {
	cfg := dd1(10)
	cfg.Retry.Attempts = 3
	cfg.On429 = On429{Pause: PauseHost, HonorRetryAfter: true, LatestEnd: true}
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(now, retryAfter time.Duration) { answer429(p, now, retryAfter) }
	answer(time.Second, 10*time.Second)
	answer(2*time.Second, 3*time.Second)
	if got := p.instances[0].pausedUntil[0]; got != 5*time.Second {
		t.Fatalf("paused until %v after a 3 s Retry-After at 2 s during a pause to 11 s, want 5s", got)
	}
	answer(4*time.Second, 4*time.Second)
	res, _ := p.rec.Finish(20*time.Second, 20*time.Second, 0, metrics.Stop{})
	if got := res.Upstreams[0].Pauses; got != 1 {
		t.Fatalf("pauses = %d, want 1 episode", got)
	}
}

// Clients that give up before the answer truncate the latency they
// observe; the upstream's service time is reported apart and follows the
// model whatever the clients do.
func TestServiceTimeIsTheModelsNotTheClients(t *testing.T) {
	cfg := dd1(40)
	cfg.Limiters = nil
	cfg.RequestTimeout = 100 * ms // every answer takes 250 ms
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := out.Results.Upstreams[0]
	if u.LatencyS.Count != 0 || out.Results.Requests.TimedOut != 40 {
		t.Fatalf("latency seen by clients: %d answers, %d timed out; want none read, 40 timed out", u.LatencyS.Count, out.Results.Requests.TimedOut)
	}
	if u.ServiceS.Count != 40 || math.Abs(u.ServiceS.P50-0.25) > 1e-3 || math.Abs(u.ServiceS.Max-0.25) > 1e-3 {
		t.Fatalf("service time %+v, want 40 answers of 250 ms", u.ServiceS)
	}
}

// erlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = λ/μ.
func erlangC(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// The whole client path (arrival chain, semaphore line, upstream latency
// draws, permit release on the response, recorder) against Erlang C: Poisson
// arrivals at 2.8/s into a semaphore of 4 permits in front of an upstream
// answering in exponential time of mean 1 s form an M/M/4 queue at ρ = 0.7.
// A release that frees the wrong number of permits, a grant delivered to
// the wrong waiter or a wait recorded from the wrong instant moves P(wait)
// or Wq well outside the tolerance: about 5 standard errors at 200,000
// requests (over seeds 1–30, P(wait) stayed within 0.009 of Erlang C, Wq
// within 4.6% and the mean in flight within 0.7%).
func TestClientPathMatchesErlangC(t *testing.T) {
	sem, _ := models.LookupKind("semaphore")
	const c, lambda, n = 4, 2.8, 200_000
	cfg := &Config{
		Name: "mm4",
		Run: RunSettings{Seed: 7, Requests: n, Interval: time.Minute, Warmup: 10 * time.Minute, Replications: 1,
			MaxEvents: 50 * n, MaxLiveRequests: 1e6, MaxEventsPerInstant: 1e6},
		Workload: Workload{Arrivals: arrivals.Spec{Kind: arrivals.KindPoisson, Rate: lambda}, Cost: 1,
			Hosts: []Share{{Name: "api", Weight: 1}}, Tenants: []Tenant{{Share: Share{Name: "default", Weight: 1}}}},
		Instances: 1,
		Limiters:  []LimiterConfig{{Name: "sem", Kind: sem, Params: models.Params{Permits: c}}},
		Retry:     Retry{Attempts: 1},
		Upstreams: []upstream.Config{{Host: "api", Latency: upstream.Exponential{Average: time.Second}}},
	}
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Results.Limiters[0]
	wantC := erlangC(c, lambda)
	wantWq := wantC / (c - lambda)
	if math.Abs(l.PWait-wantC) > 0.015 {
		t.Errorf("P(wait) = %.4f, Erlang C gives %.4f", l.PWait, wantC)
	}
	if !near(l.WaitS.Mean, wantWq, 0.08) {
		t.Errorf("Wq = %.4f s, Erlang C gives %.4f s", l.WaitS.Mean, wantWq)
	}
	// Little's Law against the model, not the recorder's own sums: the mean
	// number in service is λ/μ.
	if !near(out.Results.InFlight.Mean, lambda, 0.02) {
		t.Errorf("mean in flight %.4f, want λ/μ = %.4f", out.Results.InFlight.Mean, lambda)
	}
}

// Utilisation is the rate used over the rate configured: 80/s through a
// 90/s bucket is 89% used (its token level, the article's saturation,
// stays near full), and 80/s against a 100/s quota uses 80% of it. A host
// without a quota has no quota utilisation at all, not 0%.
func TestUtilisationIsRateUsedOverRateConfigured(t *testing.T) {
	bucket, _ := models.LookupKind("token_bucket")
	cfg := dd1(4000)
	cfg.Run.Warmup = 5 * time.Second
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindConstant, Rate: 80}
	cfg.Workload.Hosts = []Share{{Name: "api", Weight: 1}, {Name: "free", Weight: 1}}
	cfg.Workload.RoundRobin = true
	cfg.Limiters = []LimiterConfig{{Name: "b", Kind: bucket, Params: models.Params{Rate: 90, Burst: 90}}}
	q := &upstream.Quota{Kind: "token_bucket", Rate: 50, Burst: 50}
	cfg.Upstreams = []upstream.Config{
		{Host: "api", Latency: upstream.Constant{Value: 10 * ms}, Quotas: []upstream.Quota{*q}},
		{Host: "free", Latency: upstream.Constant{Value: 10 * ms}},
	}
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Results.Limiters[0]
	if !near(l.Utilisation, 80.0/90, 0.01) {
		t.Errorf("bucket utilisation %.4f, want 80/90 = %.4f", l.Utilisation, 80.0/90)
	}
	if l.Saturation > 0.2 {
		t.Errorf("token level reads %.3f used: the bucket should stay near full", l.Saturation)
	}
	api, free := out.Results.Upstreams[0], out.Results.Upstreams[1]
	if api.QuotaUtilisation == nil || !near(*api.QuotaUtilisation, 40.0/50, 0.01) {
		t.Errorf("quota utilisation %v, want 40/50 (half of 80/s against 50/s)", api.QuotaUtilisation)
	}
	if free.QuotaUtilisation != nil {
		t.Errorf("a host without a quota reports quota utilisation %v, want none", *free.QuotaUtilisation)
	}
	if api.Throttled != 0 {
		t.Errorf("%d 429s below the quota", api.Throttled)
	}
}

// Options.Progress climbs to ProgressTotal by the end of a complete run,
// in requests for a run limited by run.requests and in simulated time for
// one limited by run.duration, summed over replications.
func TestProgressReachesItsTotal(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"requests", func(*Config) {}},
		{"duration", func(cfg *Config) { cfg.Run.Requests, cfg.Run.Duration = 0, 30*time.Second }},
		{"replications", func(cfg *Config) { cfg.Run.Replications = 3 }},
	} {
		cfg := dd1(200)
		c.edit(cfg)
		var done atomic.Int64
		out, err := Run(cfg, Options{Progress: &done})
		if err != nil || !out.Results.Complete {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := map[string]int64{"requests": 200, "duration": int64(30 * time.Second), "replications": 600}[c.name]
		if total := ProgressTotal(cfg); done.Load() != total || total != want {
			t.Errorf("%s: progress %d, total %d, want %d", c.name, done.Load(), total, want)
		}
	}
}

// A per-tenant limiter with thousands of scopes is read at fewer sample
// instants per interval (scopeReadBudget), and beyond the budget a share
// of its scopes at a time (scopeStride), yet its saturation is still the
// time average over scopes: per-tenant semaphores of 2 permits, each
// tenant offered 0.2 requests/s of exactly 500 ms, hold 0.1 permits on average
// (Little's Law; blocking at two permits is under 0.5%), a saturation of
// 5%. A reading divided by the wrong count, or scopes skipped while in use,
// moves it far from 5%.
func TestManyScopesSaturationIsTheTimeAverage(t *testing.T) {
	for _, tenants := range []int{512, 2000, 5000, 10_000} {
		cfg := dd1(0)
		cfg.Run.Requests = 0
		cfg.Run.Duration = 100 * time.Second
		cfg.Run.Warmup = 5 * time.Second
		cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 0.2 * float64(tenants)}
		cfg.Workload.Tenants = nil
		for i := range tenants {
			cfg.Workload.Tenants = append(cfg.Workload.Tenants, Tenant{Share: Share{Name: fmt.Sprintf("t%d", i), Weight: 1}})
		}
		cfg.Limiters[0].Params.Permits = 2
		cfg.Limiters[0].Scope = PerTenant
		cfg.Upstreams[0].Latency = upstream.Constant{Value: 500 * ms}
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(samplesPerInterval, max(1, scopeReadBudget/tenants)); p.limRounds[0] != want {
			t.Fatalf("%d tenants: read at %d instants per interval, want %d", tenants, p.limRounds[0], want)
		}
		if want := (tenants + scopeReadBudget - 1) / scopeReadBudget; p.limStride[0] != want {
			t.Fatalf("%d tenants: each scope read every %d readings, want %d", tenants, p.limStride[0], want)
		}
		out, err := Run(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d tenants: %.4f", tenants, out.Results.Limiters[0].Saturation)
		if got := out.Results.Limiters[0].Saturation; !near(got, 0.05, 0.03) {
			t.Errorf("%d tenants: saturation %.4f, want 0.05 ± 3%%", tenants, got)
		}
	}
}

// Read a share at a time, every scope is still read in turn: with ten
// thousand tenants of which only every third one has traffic (three times
// the rate, so the same 5% over all), a reader that kept to one share
// would read all busy scopes or none, 15% or 0%.
func TestScopesReadInTurn(t *testing.T) {
	const tenants = 10_000
	cfg := dd1(0)
	cfg.Run.Requests = 0
	cfg.Run.Duration = 100 * time.Second
	cfg.Run.Warmup = 5 * time.Second
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 0.2 * tenants}
	cfg.Workload.Tenants = nil
	for i := range tenants {
		w := 1e-12
		if i%3 == 1 {
			w = 1
		}
		cfg.Workload.Tenants = append(cfg.Workload.Tenants, Tenant{Share: Share{Name: fmt.Sprintf("t%d", i), Weight: w}})
	}
	cfg.Limiters[0].Params.Permits = 2
	cfg.Limiters[0].Scope = PerTenant
	cfg.Upstreams[0].Latency = upstream.Constant{Value: 500 * ms}
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results.Limiters[0].Saturation; !near(got, 0.05, 0.05) {
		t.Errorf("saturation %.4f, want 0.05 ± 5%%", got)
	}
}

// instance_weights split the arrivals in their proportions, and each
// instance reports its own figures; without weights the split is even.
func TestInstanceWeightsSplitTheWorkload(t *testing.T) {
	for _, w := range [][]float64{{0.7, 0.1, 0.1, 0.1}, nil} {
		cfg := dd1(20000)
		cfg.Instances = 4
		cfg.InstanceWeights = w
		cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 100}
		cfg.Limiters[0].Params.Permits = 100
		out, err := Run(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		per := out.Results.PerInstance
		if len(per) != 4 {
			t.Fatalf("weights %v: %d per-instance entries, want 4", w, len(per))
		}
		var arrived, succeeded int64
		for k, s := range per {
			want := 0.25
			if w != nil {
				want = w[k]
			}
			share := float64(s.Arrived) / 20000
			if math.Abs(share-want) > 0.015 || math.Abs(s.Weight-want) > 1e-12 {
				t.Errorf("weights %v: instance %d took %.3f of the arrivals (weight %v), want %v", w, k, share, s.Weight, want)
			}
			arrived += s.Arrived
			succeeded += s.Succeeded
		}
		if arrived != out.Results.Requests.Arrived || succeeded != out.Results.Requests.Succeeded {
			t.Errorf("weights %v: instances sum to %d arrived, %d succeeded; the run %d, %d", w, arrived, succeeded,
				out.Results.Requests.Arrived, out.Results.Requests.Succeeded)
		}
	}
}

// pick finds the same index as a binary search over the cumulative
// weights, for equal, skewed and random weights.
func TestPickIsABinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		ws := make([]float64, n)
		for i := range ws {
			switch trial % 3 {
			case 0:
				ws[i] = 1
			case 1:
				ws[i] = math.Pow(10, rng.Float64()*4)
			default:
				ws[i] = rng.Float64()
			}
		}
		w := newWeighted(ws)
		a, b := rand.New(rand.NewPCG(uint64(trial), 1)), rand.New(rand.NewPCG(uint64(trial), 1))
		for range 500 {
			got := w.pick(a)
			want := min(sort.SearchFloat64s(w.cum, b.Float64()), n-1)
			if got != want {
				t.Fatalf("trial %d (n %d): pick %d, binary search %d", trial, n, got, want)
			}
		}
	}
}

// Among equal weights the index is read from x·n alone; at and around
// the boundaries between indices it must still be the binary search's.
// The boundaries are probed where the two can part: at k/n, where x·n is
// whole, and at the rounded cumulative sums themselves (cum[k] and the
// ulps beside it), which drift from k/n when the weights are not exact
// binary fractions (0.3, 0.1); 65,536 is the most tenants or hosts a
// scenario can have. It catches an even pick without its guard, and a
// guard narrower than the sums' drift (3·10⁻⁸ of an index fails here).
func TestEvenPickAtBoundaries(t *testing.T) {
	for _, n := range []int{2, 3, 7, 10, 1000, 10_000, 65_536} {
		for _, wt := range []float64{1, 0.3, 0.1, 7, 1e-300, 1e308} {
			ws := make([]float64, n)
			for i := range ws {
				ws[i] = wt
			}
			w := newWeighted(ws)
			if !w.even {
				t.Fatalf("n %d weight %g: not even", n, wt)
			}
			check := func(x float64) {
				if !(x >= 0 && x < 1) {
					return
				}
				if got, want := w.at(x), min(sort.SearchFloat64s(w.cum, x), n-1); got != want {
					t.Fatalf("n %d weight %g x %v: pick %d, binary search %d", n, wt, x, got, want)
				}
			}
			around := func(x float64) {
				check(x)
				y, z := x, x
				for range 4 {
					y, z = math.Nextafter(y, 2), math.Nextafter(z, -1)
					check(y)
					check(z)
				}
			}
			step := max(1, n/2000)
			for k := 0; k < n; k += step {
				around(float64(k) / float64(n))
				around(w.cum[k])
				check((float64(k) + 0.5) / float64(n))
			}
			around(w.cum[n-1])
			check(math.Nextafter(1, 0))
		}
	}
}

// Weights whose sum overflows a float (two tenants of 1e308) still share
// the traffic by their ratios: the cumulative weights are finite and end
// at 1, and the picks split as the weights say. Summed as given they were
// +Inf and NaN, and every arrival went to the last tenant.
func TestHugeWeightsShareByRatio(t *testing.T) {
	for _, ws := range [][]float64{{1e308, 1e308}, {1e308, 3e307}, {1e305, 1e305, 1e305, 1e305, 1e305}} {
		w := newWeighted(ws)
		if last := w.cum[len(ws)-1]; last != 1 {
			t.Fatalf("weights %v: cumulative ends at %v, want 1", ws, last)
		}
		r := rand.New(rand.NewPCG(7, 8))
		count := make([]int, len(ws))
		const draws = 100_000
		for range draws {
			count[w.pick(r)]++
		}
		total := 0.0
		for _, x := range ws {
			total += x / ws[0]
		}
		for i, x := range ws {
			if want := draws * (x / ws[0]) / total; math.Abs(float64(count[i])-want) > 5*math.Sqrt(want) {
				t.Errorf("weights %v: index %d drawn %d times, want about %.0f", ws, i, count[i], want)
			}
		}
	}
}

// Routing arrivals ahead (lookaheadAbove) draws each arrival's instance,
// host, tenant, path and cost one arrival early, from the same streams in
// the same order, and only prefetches: the results must be byte for byte
// those of drawing each at its arrival. Five thousand tenants of uneven
// weights, three hosts (at random by weight, then in turn), two weighted
// instances, two paths of uneven weight and costs that vary put a draw on
// every stream an arrival takes, under a duration and under a request
// count. It catches a route, or any part of it, taken from the wrong
// arrival, a draw skipped or made twice (every later arrival would route
// differently), and prefetching that moved anything.
func TestRoutingAheadKeepsTheResults(t *testing.T) {
	const tenants = 5000
	bucket, err := models.LookupKind("token_bucket")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dd1(0)
	cfg.Run.Requests = 0
	cfg.Run.Duration = 60 * time.Second
	cfg.Run.Warmup = 5 * time.Second
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 400}
	cfg.Workload.CostDist = upstream.Uniform{Min: 1, Max: 4}
	cfg.Workload.Hosts = []Share{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}, {Name: "c", Weight: 3}}
	cfg.Workload.Tenants = nil
	for i := range tenants {
		cfg.Workload.Tenants = append(cfg.Workload.Tenants, Tenant{Share: Share{Name: fmt.Sprintf("t%d", i), Weight: float64(1 + i%7)}})
	}
	cfg.Upstreams = nil
	for _, h := range cfg.Workload.Hosts {
		cfg.Upstreams = append(cfg.Upstreams, upstream.Config{Host: h.Name, Latency: upstream.Exponential{Average: 100 * ms}})
	}
	cfg.Instances = 2
	cfg.InstanceWeights = []float64{1, 3}
	cfg.Limiters = []LimiterConfig{
		{Name: "per-tenant", Kind: bucket, Scope: PerTenant, Params: models.Params{Rate: 0.2, Burst: 2}},
		{Name: "per-host", Kind: cfg.Limiters[0].Kind, Scope: PerHost, Params: models.Params{Permits: 8}},
	}
	cfg.Paths = []Path{{Name: "both", Weight: 1, Limiters: []int{0, 1}}, {Name: "host-only", Weight: 2, Limiters: []int{1}}}
	run := func(ahead bool) []byte {
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ahead && !p.lookahead {
			t.Fatalf("%d tenants are not routed ahead: the test compares nothing", tenants)
		}
		p.lookahead = ahead
		p.start()
		out, err := p.outcome(p.eng.(*sim.Engine).Run())
		if err != nil {
			t.Fatal(err)
		}
		if r := out.Results.Requests; r.Succeeded < 10_000 {
			t.Fatalf("%d requests succeeded: the test needs many", r.Succeeded)
		}
		b, err := json.Marshal(out.Results)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ahead, each := run(true), run(false)
	if !bytes.Equal(ahead, each) {
		t.Fatalf("results differ when arrivals are routed ahead:\n%s\neach at its arrival:\n%s", ahead, each)
	}
	cfg.Workload.RoundRobin = true
	cfg.Run.Duration, cfg.Run.Requests = 0, 20_000
	ahead, each = run(true), run(false)
	if !bytes.Equal(ahead, each) {
		t.Fatalf("hosts in turn, 20,000 requests: results differ when arrivals are routed ahead:\n%s\neach at its arrival:\n%s", ahead, each)
	}
}

// An arrival refused at once (one task per request, client.max_waiting
// already waiting) is recorded without a request record, except in a
// traced run, which follows every request through the full path. Both
// must give the same results, per instance too: the same draws, counts,
// waits and ends. It catches a short cut that skips a draw (every later
// arrival would route differently), a count or the live-request tally.
func TestRefusedArrivalsMatchTheFullPath(t *testing.T) {
	cfg := dd1(3000)
	cfg.Workload.Arrivals = arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 12}
	cfg.Workload.Hosts = []Share{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}}
	cfg.Workload.Tenants = []Tenant{{Share: Share{Name: "x", Weight: 1}}, {Share: Share{Name: "y", Weight: 3}}}
	cfg.Upstreams = []upstream.Config{
		{Host: "a", Latency: upstream.Exponential{Average: 250 * ms}},
		{Host: "b", Latency: upstream.Exponential{Average: 250 * ms}},
	}
	cfg.Instances = 2
	cfg.MaxParked = models.AtMost(2)
	run := func(trace io.Writer) []byte {
		out, err := Run(cfg, Options{Trace: trace})
		if err != nil {
			t.Fatal(err)
		}
		if out.Results.Requests.RejectedIngest < 300 {
			t.Fatalf("%d refused at ingest: the test needs many", out.Results.Requests.RejectedIngest)
		}
		b, err := json.Marshal(out.Results)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fast, full := run(nil), run(io.Discard)
	if !bytes.Equal(fast, full) {
		t.Fatalf("results differ with the short cut:\n%s\nfull path:\n%s", fast, full)
	}
}

// An interval longer than the recorder's fold span has the run fold within
// it: the start schedules a fold beside the first tick (and a shorter
// interval none), and the whole run ends with the levels' figures of
// Little's law intact.
func TestLongIntervalsScheduleFolds(t *testing.T) {
	pending := func(interval time.Duration) int {
		cfg := dd1(10)
		cfg.Run.Interval = interval
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.start()
		return p.eng.Pending()
	}
	if long, short := pending(10*time.Minute), pending(time.Minute); long != short+1 {
		t.Fatalf("%d events pending at the start with 10-minute intervals, %d with 1-minute ones: want one fold more", long, short)
	}
	cfg := dd1(3000) // 300 s of arrivals: four folds within the first interval
	cfg.Run.Interval = 10 * time.Minute
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range out.Results.Little {
		if l.RelError > 1e-9 {
			t.Errorf("Little's law %+v", l)
		}
	}
}

// With replications run at once, only the latest started moves the
// progress clock: an earlier one still running neither moves it once a
// later one has started nor sets it back, whatever order they start in;
// with no replications at once (nil), every tick moves it.
func TestLatestReplicationAloneMovesTheClock(t *testing.T) {
	var clock atomic.Int64
	l := &latestRep{}
	l.started(0)
	l.tick(&clock, 0, 5)
	if got := clock.Load(); got != 5 {
		t.Fatalf("the only replication's tick: clock %d, want 5", got)
	}
	l.started(2)
	l.started(1) // started after 2: 2 stays the latest
	l.tick(&clock, 1, 9)
	l.tick(&clock, 0, 7)
	if got := clock.Load(); got != 5 {
		t.Fatalf("earlier replications' ticks moved the clock to %d, want 5", got)
	}
	l.tick(&clock, 2, 3)
	if got := clock.Load(); got != 3 {
		t.Fatalf("the latest replication's tick: clock %d, want 3 (its own time, even if earlier than the others')", got)
	}
	var nilRep *latestRep
	nilRep.tick(&clock, 4, 11)
	if got := clock.Load(); got != 11 {
		t.Fatalf("one replication alone: clock %d, want 11", got)
	}
}

// Tenants either all bring their own arrival process or all share the
// workload's: a mix is refused with ErrConfig, naming the odd tenant,
// whichever of them is first (a nil spec after a given one used to panic
// when the chains were built; a given one after a nil was ignored).
func TestMixedTenantArrivalsAreRefused(t *testing.T) {
	own := &arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 5}
	cases := []struct {
		name  string
		specs []*arrivals.Spec
		odd   string // the tenant the error names; "" when accepted
	}{
		{"own then shared", []*arrivals.Spec{own, nil}, "t1"},
		{"shared then own", []*arrivals.Spec{nil, own}, "t1"},
		{"shared, shared, own", []*arrivals.Spec{nil, nil, own}, "t2"},
		{"all own", []*arrivals.Spec{own, own, own}, ""},
		{"all shared", []*arrivals.Spec{nil, nil}, ""},
	}
	for _, c := range cases {
		cfg := dd1(20)
		cfg.Workload.Tenants = nil
		for i, spec := range c.specs {
			cfg.Workload.Tenants = append(cfg.Workload.Tenants,
				Tenant{Share: Share{Name: fmt.Sprintf("t%d", i), Weight: 1}, Arrivals: spec})
		}
		_, err := Run(cfg, Options{})
		switch {
		case c.odd == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.odd != "" && !errors.Is(err, ErrConfig):
			t.Errorf("%s: got %v, want ErrConfig", c.name, err)
		case c.odd != "" && !strings.Contains(err.Error(), "tenant "+c.odd+":"):
			t.Errorf("%s: %v does not name tenant %s", c.name, err, c.odd)
		}
	}
}
