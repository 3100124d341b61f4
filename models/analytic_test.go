package models_test

// Analytic queueing checks: limiters driven by the virtual-clock engine must
// reproduce closed-form results of queueing theory.
//
//   - TestAnalyticErlangC: a Line over a Semaphore of c permits is M/M/c
//     (FIFO, unbounded line). P(wait) and Wq against Erlang C.
//   - TestAnalyticMMcKBlocking: a Queue of capacity K−c with c workers, fed
//     by Put, is M/M/c/K. Blocking probability, L and Wq against M/M/c/K.
//   - TestAnalyticMD1TokenBucket: a Line over a token bucket of capacity 1 is
//     M/D/1 (the exact correspondence is worked out in the test). Wq against
//     Pollaczek–Khinchine, P(wait) = ρ, and every grant against the Lindley
//     recursion.
//   - TestAnalyticLittleLaw: on the M/M/c simulation, ∫Waiting dt equals the
//     sum of the waits exactly, and the time-average line length equals λ·Wq.
//
// Every run uses a fixed seed, so the tests are deterministic. Runs last a
// fixed simulated horizon of n/λ time units (so about n Poisson requests);
// the first tenth of the horizon is warm-up and is not measured. Statistical
// tolerances come from batch means: the measured window is cut into 20 equal
// time batches, the spread of the batch means gives the standard error (SE,
// printed with -v), and each tolerance is about 4–5 SE. The tolerances were
// also checked to hold for 50 other seeds. One time unit is 1 ms of simulated
// time, and rates are per unit: μ = 1 is a mean service time of 10⁶ ns, so
// rounding draws to whole nanoseconds is negligible.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// simUnit is one simulated time unit in nanoseconds.
const simUnit = float64(time.Millisecond)

// analyticSeed is the engine seed of every run in this file.
const analyticSeed = 20240611

// numBatches is the number of batches for batch-means standard errors.
const numBatches = 20

// expDuration draws an exponential duration of the given rate (per unit).
func expDuration(r *rand.Rand, rate float64) time.Duration {
	return time.Duration(math.Round(r.ExpFloat64() / rate * simUnit))
}

// inUnits converts a duration to time units.
func inUnits(d time.Duration) float64 { return float64(d) / simUnit }

// batchWindow is the measured part of a run, [from, to), cut into equal batches.
type batchWindow struct{ from, to time.Duration }

// newBatchWindow returns the window of a run whose arrivals stop at horizon
// units: the first tenth is warm-up.
func newBatchWindow(horizon float64) batchWindow {
	to := time.Duration(horizon * simUnit)
	return batchWindow{from: to / 10, to: to}
}

// edge returns the start of batch b (edge(numBatches) is the window's end).
func (w batchWindow) edge(b int) time.Duration {
	return w.from + time.Duration(int64(w.to-w.from)*int64(b)/numBatches)
}

// batch returns the batch holding instant at, or −1 outside the window.
func (w batchWindow) batch(at time.Duration) int {
	if at < w.from || at >= w.to {
		return -1
	}
	return int(int64(at-w.from) * numBatches / int64(w.to-w.from))
}

// batchMeter estimates a ratio Σnum/Σden over a window by batch means. Samples
// are binned by an instant (a request's arrival, a batch's start).
type batchMeter struct {
	w        batchWindow
	num, den [numBatches]float64
}

func (m *batchMeter) add(at time.Duration, num, den float64) {
	if b := m.w.batch(at); b >= 0 {
		m.num[b] += num
		m.den[b] += den
	}
}

// result returns the mean of the batch ratios and its standard error from
// their spread. A queue's samples are strongly autocorrelated, so the naive
// i.i.d. error would be far too small; batches much longer than the
// relaxation time are nearly independent.
func (m *batchMeter) result() (mean, se float64) {
	var r [numBatches]float64
	for b := range numBatches {
		r[b] = m.num[b] / m.den[b]
		mean += r[b]
	}
	mean /= numBatches
	v := 0.0
	for _, x := range r {
		v += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(v / (numBatches - 1) / numBatches)
}

// countIntegral is ∫ n(t) dt of a piecewise-constant count, in count·ns, plus
// its value at each batch edge of a window.
type countIntegral struct {
	area  int64
	lastT time.Duration
	lastN int
	edges [numBatches + 1]int64
}

// set records that the count is n from now on.
func (g *countIntegral) set(now time.Duration, n int) {
	g.area += int64(g.lastN) * int64(now-g.lastT)
	g.lastT, g.lastN = now, n
}

// timeAverage returns a batchMeter of the count's time average per batch.
func (g *countIntegral) timeAverage(w batchWindow) *batchMeter {
	m := &batchMeter{w: w}
	for b := range numBatches {
		m.add(w.edge(b), float64(g.edges[b+1]-g.edges[b]), float64(w.edge(b+1)-w.edge(b)))
	}
	return m
}

// scheduleEdges arranges for g.edges to be filled in during the run: at each
// batch edge, sync (which must call g.set with the current count) runs and
// the area is recorded.
func scheduleEdges(eng *sim.Engine, w batchWindow, g *countIntegral, sync func(now time.Duration)) {
	h := clock.HandlerFunc(func(now time.Duration, b uint64) {
		sync(now)
		g.edges[b] = g.area
	})
	for b := range numBatches + 1 {
		eng.At(w.edge(b), h, uint64(b))
	}
}

// Every engine in this file runs under limits, so that a limiter bug that
// keeps scheduling events (a wake-up re-armed at the same instant, a line
// that never drains) fails the test at once with the guard's message
// instead of hanging until the test binary's timeout.

// analyticEventFactor is how far above its expected event count a run may
// go before it is stopped as a runaway.
const analyticEventFactor = 20

// analyticMaxPerInstant bounds the events fired at one simulated instant. In
// these runs an instant holds a handful at most (a completion, the grant it
// releases, a batch edge).
const analyticMaxPerInstant = 1000

// runAnalytic runs eng to the end under limits sized from expectedEvents
// and fails the test with a clear message if a guard stopped it.
func runAnalytic(t *testing.T, eng *sim.Engine, expectedEvents float64) {
	t.Helper()
	eng.SetLimits(sim.Limits{
		MaxEvents:           uint64(analyticEventFactor * expectedEvents),
		MaxEventsPerInstant: analyticMaxPerInstant,
	})
	err := eng.Run()
	var g *sim.GuardError
	if errors.As(err, &g) {
		t.Fatalf("runaway simulation stopped at %v after %d events (about %.0f expected): %v",
			eng.Now(), eng.Events(), expectedEvents, err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkNear reports got against want. tol is relative to want when rel is set
// and absolute otherwise; se is the batch-means standard error of got, or 0
// for a comparison that is not a statistical estimate.
func checkNear(t *testing.T, name string, got, want, tol float64, rel bool, se float64) {
	t.Helper()
	lim := tol
	if rel {
		lim = tol * math.Abs(want)
	}
	stat := ""
	if se > 0 {
		stat = fmt.Sprintf("  SE %-9.3g z %+.2f", se, (got-want)/se)
	}
	t.Logf("%-22s got %-9.6g want %-9.6g err %+9.3g  tol ±%-9.3g%s", name, got, want, got-want, lim, stat)
	if !(math.Abs(got-want) <= lim) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (batch-means SE %.3g)", name, got, want, lim, se)
	}
}

// ---------------------------------------------------------------------------
// Formulas.

// erlangC returns the probability that an arrival waits in M/M/c with
// offered load a = λ/μ < c, through the Erlang B recursion.
func erlangC(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// mmck returns the stationary distribution p[0..K] of M/M/c/K (a
// birth–death chain with birth rate λ and death rate min(n, c)·μ).
func mmck(lambda, mu float64, c, k int) []float64 {
	p := make([]float64, k+1)
	p[0] = 1
	s := 1.0
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * lambda / (mu * float64(min(n, c)))
		s += p[n]
	}
	for n := range p {
		p[n] /= s
	}
	return p
}

// ---------------------------------------------------------------------------
// M/M/c: a FIFO Line over a c-permit Semaphore.

// mmcSim is Poisson arrivals to an unbounded FIFO line over a c-permit
// semaphore; each request holds one permit for an exponential service time.
// The grant handler's arg is the request's arrival instant.
type mmcSim struct {
	eng        *sim.Engine
	line       *models.Line
	arr, svc   *rand.Rand
	lambda, mu float64
	w          batchWindow

	requests int   // arrivals, whole run
	parked   int   // arrivals that were not granted at once, whole run
	waitSum  int64 // Σ (grant − arrival) in ns, whole run
	fifo     fifoCheck
	waiting  countIntegral
	pWait    batchMeter // fraction of arrivals in the window that waited
	wq       batchMeter // mean wait of arrivals in the window, in units

	arriveH, grantH, doneH clock.Handler
}

func runMMC(t *testing.T, c int, lambda, mu, n float64) *mmcSim {
	t.Helper()
	eng := sim.New(analyticSeed)
	sem, err := models.NewSemaphore(int64(c))
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWindow(n / lambda)
	s := &mmcSim{
		eng:    eng,
		line:   models.NewLine(sem, eng, models.Unbounded),
		arr:    eng.Stream("arrivals"),
		svc:    eng.Stream("service"),
		lambda: lambda,
		mu:     mu,
		w:      w,
		pWait:  batchMeter{w: w},
		wq:     batchMeter{w: w},
	}
	s.arriveH = clock.HandlerFunc(s.arrive)
	s.grantH = clock.HandlerFunc(s.grant)
	s.doneH = clock.HandlerFunc(s.done)
	eng.Watch(lineParker{s.line})
	scheduleEdges(eng, w, &s.waiting, s.mark)
	eng.At(expDuration(s.arr, lambda), s.arriveH, 0)
	// Per request an arrival, a completion and at most one grant event.
	runAnalytic(t, eng, 3*n+numBatches+1)
	if n := s.line.Waiting(); n != 0 {
		t.Fatalf("%d requests still waiting after the run", n)
	}
	return s
}

// fifoCheck counts grants out of arrival order.
type fifoCheck struct {
	last       time.Duration // arrival instant of the latest grant
	violations int
}

func (f *fifoCheck) granted(arrived time.Duration) {
	if arrived < f.last {
		f.violations++
	}
	f.last = max(f.last, arrived)
}

// lineParker reports a Line's waiters to the engine's stall detection.
type lineParker struct{ l *models.Line }

func (p lineParker) Name() string { return "line" }
func (p lineParker) Parked() int  { return p.l.Waiting() }

// mark records the line length; it runs after anything that may change it.
func (s *mmcSim) mark(now time.Duration) { s.waiting.set(now, s.line.Waiting()) }

func (s *mmcSim) arrive(now time.Duration, _ uint64) {
	if next := now + expDuration(s.arr, s.lambda); next < s.w.to {
		s.eng.At(next, s.arriveH, 0)
	}
	s.requests++
	_, st := s.line.Acquire(now, 1, clock.Never, s.grantH, uint64(now))
	s.mark(now)
	switch st {
	case models.Granted:
		s.fifo.granted(now)
		s.pWait.add(now, 0, 1)
		s.wq.add(now, 0, 1)
		s.startService(now)
	case models.Parked:
		s.parked++
		s.pWait.add(now, 1, 1)
	default:
		panic("unexpected acquisition status " + st.String())
	}
}

func (s *mmcSim) grant(now time.Duration, arrived uint64) {
	at := time.Duration(arrived)
	s.fifo.granted(at)
	s.waitSum += int64(now - at)
	s.wq.add(at, inUnits(now-at), 1)
	s.startService(now)
}

func (s *mmcSim) startService(now time.Duration) {
	s.eng.At(now+expDuration(s.svc, s.mu), s.doneH, 0)
}

func (s *mmcSim) done(now time.Duration, _ uint64) {
	s.line.Release(now, 1)
	s.mark(now)
}

// TestAnalyticErlangC checks a FIFO line over a c-permit semaphore against
// M/M/c: P(wait) = C(c, a) (Erlang C, a = λ/μ) and Wq = C / (cμ − λ).
func TestAnalyticErlangC(t *testing.T) {
	cases := []struct {
		c          int
		lambda, mu float64
		n          float64 // about this many simulated requests
		pwTol      float64 // absolute tolerance on P(wait)
		wqTol      float64 // relative tolerance on Wq
	}{
		// ρ = 0.5, ≈1M requests: SE(P) ≈ 0.0009, SE(Wq) ≈ 0.5%.
		{c: 1, lambda: 0.5, mu: 1, n: 1e6, pwTol: 0.004, wqTol: 0.025},
		// ρ = 0.8, ≈2M requests: SE(P) ≈ 0.0017, SE(Wq) ≈ 1.1%.
		{c: 4, lambda: 3.2, mu: 1, n: 2e6, pwTol: 0.008, wqTol: 0.05},
		// ρ = 0.95, ≈4M requests: heavy traffic, strongly autocorrelated
		// (relaxation time ≈ 1/(cμ(1−√ρ)²) ≈ 150 mean service times);
		// SE(P) ≈ 0.0024, SE(Wq) ≈ 2.4%.
		{c: 10, lambda: 9.5, mu: 1, n: 4e6, pwTol: 0.011, wqTol: 0.11},
	}
	for _, tc := range cases {
		s := runMMC(t, tc.c, tc.lambda, tc.mu, tc.n)
		a := tc.lambda / tc.mu
		wantPW := erlangC(tc.c, a)
		wantWq := wantPW / (float64(tc.c)*tc.mu - tc.lambda)
		t.Logf("M/M/%d ρ=%.2f: %d requests", tc.c, a/float64(tc.c), s.requests)
		// The line is FIFO: grants in arrival order. Tolerance 0, all requests.
		if s.fifo.violations > 0 {
			t.Errorf("%d grants out of arrival order", s.fifo.violations)
		}
		pw, pwSE := s.pWait.result()
		// Absolute tolerance tc.pwTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "P(wait)", pw, wantPW, tc.pwTol, false, pwSE)
		wq, wqSE := s.wq.result()
		// Relative tolerance tc.wqTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "Wq", wq, wantWq, tc.wqTol, true, wqSE)
	}
}

// TestAnalyticLittleLaw checks Little's law L = λW on the waiting line of the
// M/M/c simulation: once as an exact sample-path identity, and once against
// Erlang C through time averages.
func TestAnalyticLittleLaw(t *testing.T) {
	const c, lambda, mu, n = 4, 3.6, 1.0, 1.5e6 // ρ = 0.9, ≈1.5M requests
	s := runMMC(t, c, lambda, mu, n)
	t.Logf("M/M/%d ρ=%.2f: %d requests, %d waited", c, lambda/mu/c, s.requests, s.parked)

	// Over the whole run (it starts and ends with an empty line), the area
	// under Waiting() is exactly the sum of the waits: every waiter is
	// counted from its Acquire until the Release that grants it, and its
	// grant event fires at that same instant. Tolerance: 0 ns, all requests.
	if s.waiting.area != s.waitSum {
		t.Errorf("∫Waiting dt = %d waiter·ns, Σ waits = %d ns: differ by %d",
			s.waiting.area, s.waitSum, s.waiting.area-s.waitSum)
	}

	// In the measured window, the time-average line length L̂ must equal
	// λ̂·Ŵ = Σ waits of the window's arrivals ÷ window length, up to edge
	// effects (waits straddling the window's ends), which are of the order of
	// Wq ÷ window length ≈ 10⁻⁵ here.
	lq, lqSE := s.waiting.timeAverage(s.w).result()
	sum := 0.0
	for b := range numBatches {
		sum += s.wq.num[b]
	}
	lambdaW := sum / inUnits(s.w.to-s.w.from)
	// Relative tolerance 0.1%, ≈1.35M requests in the window (the largest
	// deviation over 50 seeds was 0.025%).
	checkNear(t, "L̂q vs λ̂·Ŵq", lq, lambdaW, 0.001, true, 0)

	// Against the analytic value Lq = λ·Wq = λ·C/(cμ − λ).
	wantLq := lambda * erlangC(c, lambda/mu) / (c*mu - lambda)
	// Relative tolerance 10% (≈4.5 SE; SE ≈ 2.2%), ≈1.5M requests.
	checkNear(t, "L̂q vs λ·Wq(Erlang C)", lq, wantLq, 0.10, true, lqSE)
}

// ---------------------------------------------------------------------------
// M/M/c/K: a Queue of capacity K−c with c workers.

// mmckSim is Poisson arrivals offered with Put to a bounded queue drained by
// c workers with exponential service times. Full is a blocked arrival.
type mmckSim struct {
	eng        *sim.Engine
	q          *models.Queue
	arr, svc   *rand.Rand
	lambda, mu float64
	w          batchWindow

	requests int
	fifo     fifoCheck
	inSystem countIntegral // Busy() + Waiting()
	blocked  batchMeter    // fraction of arrivals in the window that were blocked
	wq       batchMeter    // mean wait for a worker of admitted arrivals, in units

	arriveH, startH, doneH clock.Handler
}

func runMMCK(t *testing.T, c, k int, lambda, mu, n float64) *mmckSim {
	t.Helper()
	eng := sim.New(analyticSeed)
	q, err := models.NewQueue(eng, models.AtMost(k-c), c)
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWindow(n / lambda)
	s := &mmckSim{
		eng:     eng,
		q:       q,
		arr:     eng.Stream("arrivals"),
		svc:     eng.Stream("service"),
		lambda:  lambda,
		mu:      mu,
		w:       w,
		blocked: batchMeter{w: w},
		wq:      batchMeter{w: w},
	}
	s.arriveH = clock.HandlerFunc(s.arrive)
	s.startH = clock.HandlerFunc(s.start)
	s.doneH = clock.HandlerFunc(s.done)
	scheduleEdges(eng, w, &s.inSystem, s.mark)
	eng.At(expDuration(s.arr, lambda), s.arriveH, 0)
	// Per request an arrival, at most one start event and a completion.
	runAnalytic(t, eng, 3*n+numBatches+1)
	if q.Busy() != 0 || q.Waiting() != 0 {
		t.Fatalf("after the run: %d busy, %d waiting", q.Busy(), q.Waiting())
	}
	return s
}

func (s *mmckSim) mark(now time.Duration) { s.inSystem.set(now, s.q.Busy()+s.q.Waiting()) }

func (s *mmckSim) arrive(now time.Duration, _ uint64) {
	if next := now + expDuration(s.arr, s.lambda); next < s.w.to {
		s.eng.At(next, s.arriveH, 0)
	}
	s.requests++
	_, st := s.q.Put(now, s.startH, uint64(now))
	s.mark(now)
	switch st {
	case models.Granted:
		s.fifo.granted(now)
		s.blocked.add(now, 0, 1)
		s.wq.add(now, 0, 1)
		s.eng.At(now+expDuration(s.svc, s.mu), s.doneH, 0)
	case models.Parked:
		s.blocked.add(now, 0, 1)
	case models.Full:
		s.blocked.add(now, 1, 1)
	default:
		panic("unexpected put status " + st.String())
	}
}

// start runs when a worker takes a queued item; arg is its arrival instant.
func (s *mmckSim) start(now time.Duration, arrived uint64) {
	at := time.Duration(arrived)
	s.fifo.granted(at)
	s.wq.add(at, inUnits(now-at), 1)
	s.eng.At(now+expDuration(s.svc, s.mu), s.doneH, 0)
}

func (s *mmckSim) done(now time.Duration, _ uint64) {
	s.q.Done(now)
	s.mark(now)
}

// TestAnalyticMMcKBlocking checks a bounded queue with c workers against
// M/M/c/K (K = c + capacity): blocking probability p_K (PASTA: the fraction
// of arrivals that find K in the system), mean number in system L, and mean
// wait for a worker of admitted requests Wq = Lq / (λ(1 − p_K)).
func TestAnalyticMMcKBlocking(t *testing.T) {
	cases := []struct {
		c, k       int
		lambda, mu float64
		n          float64 // about this many simulated requests
		pbTol      float64 // absolute tolerance on P(blocked)
		lTol       float64 // relative tolerance on L
		wqTol      float64 // relative tolerance on Wq
	}{
		// ρ = 0.8, queue capacity 4, ≈400k requests: p_K ≈ 0.076,
		// SE(p) ≈ 0.0008, SE(L) ≈ 0.35%, SE(Wq) ≈ 0.6%.
		{c: 2, k: 6, lambda: 1.6, mu: 1, n: 4e5, pbTol: 0.004, lTol: 0.016, wqTol: 0.028},
		// ρ = 1.5 (overloaded), capacity 5, ≈400k requests: p_K ≈ 0.35,
		// SE(p) ≈ 0.0015, SE(L) ≈ 0.16%, SE(Wq) ≈ 0.4%.
		{c: 3, k: 8, lambda: 4.5, mu: 1, n: 4e5, pbTol: 0.007, lTol: 0.0075, wqTol: 0.018},
		// K = c (capacity 0): Erlang B loss system, Wq = 0 exactly,
		// ≈400k requests: p_K ≈ 0.20, SE(p) ≈ 0.001, SE(L) ≈ 0.15%.
		{c: 5, k: 5, lambda: 4, mu: 1, n: 4e5, pbTol: 0.0045, lTol: 0.007, wqTol: 0},
	}
	for _, tc := range cases {
		s := runMMCK(t, tc.c, tc.k, tc.lambda, tc.mu, tc.n)
		p := mmck(tc.lambda, tc.mu, tc.c, tc.k)
		var wantL, wantLq float64
		for n, pn := range p {
			wantL += float64(n) * pn
			wantLq += float64(max(n-tc.c, 0)) * pn
		}
		wantPB := p[tc.k]
		wantWq := wantLq / (tc.lambda * (1 - wantPB))
		t.Logf("M/M/%d/%d ρ=%.2f: %d requests", tc.c, tc.k, tc.lambda/tc.mu/float64(tc.c), s.requests)
		// Workers take items in FIFO order. Tolerance 0, all requests.
		if s.fifo.violations > 0 {
			t.Errorf("%d items taken out of arrival order", s.fifo.violations)
		}

		pb, pbSE := s.blocked.result()
		// Absolute tolerance tc.pbTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "P(blocked)", pb, wantPB, tc.pbTol, false, pbSE)
		l, lSE := s.inSystem.timeAverage(s.w).result()
		// Relative tolerance tc.lTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "L", l, wantL, tc.lTol, true, lSE)
		wq, wqSE := s.wq.result()
		// Relative tolerance tc.wqTol (≈4–5 SE; exactly 0 when K = c),
		// ≈tc.n requests (table above).
		checkNear(t, "Wq", wq, wantWq, tc.wqTol, true, wqSE)
	}
}

// ---------------------------------------------------------------------------
// M/D/1: a FIFO Line over a token bucket of capacity 1.

// TestAnalyticMD1TokenBucket checks that a FIFO line over a token bucket of
// rate μ and capacity 1 (starting full) is an M/D/1 queue.
//
// The correspondence is exact. With capacity 1 every grant takes the only
// token and the next token is complete D = 1/μ later, so the n-th grant
// happens at
//
//	G_n = max(A_n, G_{n−1} + D)
//
// (A_n the arrival instant, G_0 = −∞ for the full bucket at the start): the
// request passes at once if the token has regrown by its arrival, and
// otherwise, the line being FIFO, when the token regrows after the previous
// grant. In an M/D/1 queue (empty at the start) service starts at
// S_n = max(A_n, F_{n−1}) where the previous departure is F_{n−1} = S_{n−1} + D:
// the same recursion. So G_n = S_n path by path: a grant is the start of a
// deterministic "service" that is the token's regrowth period, an arrival
// that finds the token full is one that finds the M/D/1 system empty, and
// the wait in line G_n − A_n is exactly the M/D/1 wait in queue. (It is not
// the M/D/1 sojourn time, which would add D; no request occupies the "server"
// here, it is only the gap the bucket enforces between grants.) Hence
//
//	Wq = ρ / (2μ(1 − ρ))   (Pollaczek–Khinchine with E[S²] = D²)
//	P(wait > 0) = P(system non-empty on arrival) = ρ   (PASTA).
//
// The test also checks every grant against the recursion, up to the bucket's
// nanosecond rounding.
func TestAnalyticMD1TokenBucket(t *testing.T) {
	const mu = 1.0 // tokens per unit: 1000 per second, D = 1 ms
	d := time.Duration(simUnit / mu)
	cases := []struct {
		lambda float64
		n      float64 // about this many simulated requests
		pwTol  float64 // absolute tolerance on P(wait)
		wqTol  float64 // relative tolerance on Wq
	}{
		// ρ = 0.5, ≈500k requests: SE(P) ≈ 0.0011, SE(Wq) ≈ 0.5%.
		{lambda: 0.5, n: 5e5, pwTol: 0.005, wqTol: 0.025},
		// ρ = 0.9, ≈1M requests: SE(P) ≈ 0.001, SE(Wq) ≈ 1.6%.
		{lambda: 0.9, n: 1e6, pwTol: 0.005, wqTol: 0.07},
	}
	for _, tc := range cases {
		eng := sim.New(analyticSeed)
		tb, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: mu * 1000, Burst: 1, InitialFill: 1})
		if err != nil {
			t.Fatal(err)
		}
		line := models.NewLine(tb, eng, models.Unbounded)
		arr := eng.Stream("arrivals")
		w := newBatchWindow(tc.n / tc.lambda)
		pWait, wqm := batchMeter{w: w}, batchMeter{w: w}

		requests, mismatches := 0, 0
		var fifo fifoCheck
		var maxDev time.Duration
		prevGrant := time.Duration(math.MinInt64 / 2)
		// granted records the grant at now of the request that arrived at
		// arrived, checking it against the Lindley recursion. Grants come in
		// arrival order because the line is FIFO.
		granted := func(now, arrived time.Duration) {
			fifo.granted(arrived)
			want := max(arrived, prevGrant+d)
			dev := now - want
			if dev < 0 {
				dev = -dev
			}
			maxDev = max(maxDev, dev)
			// Tolerance ±2 ns per grant (ReadyAt rounds each regrowth to whole
			// nanoseconds, and a sub-nanosecond token residue may remain).
			if dev > 2 {
				if mismatches < 5 {
					t.Errorf("request arrived %v: granted %v, recursion gives %v", arrived, now, want)
				}
				mismatches++
			}
			prevGrant = now
			wqm.add(arrived, inUnits(now-arrived), 1)
		}
		grantH := clock.HandlerFunc(func(now time.Duration, arrived uint64) {
			granted(now, time.Duration(arrived))
		})
		var arriveH clock.HandlerFunc
		arriveH = func(now time.Duration, _ uint64) {
			if next := now + expDuration(arr, tc.lambda); next < w.to {
				eng.At(next, arriveH, 0)
			}
			requests++
			switch _, st := line.Acquire(now, 1, clock.Never, grantH, uint64(now)); st {
			case models.Granted:
				pWait.add(now, 0, 1)
				granted(now, now)
			case models.Parked:
				pWait.add(now, 1, 1)
			default:
				t.Fatalf("unexpected acquisition status %v", st)
			}
		}
		eng.Watch(lineParker{line})
		eng.At(expDuration(arr, tc.lambda), arriveH, 0)
		// Per request an arrival and, if it waits, the head's wake-up and
		// its grant event.
		runAnalytic(t, eng, 3*tc.n)

		rho := tc.lambda / mu
		t.Logf("M/D/1 ρ=%.2f: %d requests, largest deviation from the recursion %v", rho, requests, maxDev)
		// FIFO (else the recursion, which is blind to who gets each grant,
		// proves nothing about waits). Tolerance 0, all ≈tc.n requests.
		if fifo.violations > 0 {
			t.Errorf("%d grants out of arrival order", fifo.violations)
		}
		// Tolerance ±2 ns per grant, every one of the ≈tc.n requests.
		if mismatches > 0 {
			t.Errorf("%d of %d grants differ from G_n = max(A_n, G_{n−1} + D) by more than 2 ns", mismatches, requests)
		}
		pw, pwSE := pWait.result()
		// Absolute tolerance tc.pwTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "P(wait)", pw, rho, tc.pwTol, false, pwSE)
		wq, wqSE := wqm.result()
		wantWq := rho / (2 * mu * (1 - rho))
		// Relative tolerance tc.wqTol (≈4–5 SE), ≈tc.n requests (table above).
		checkNear(t, "Wq", wq, wantWq, tc.wqTol, true, wqSE)
	}
}
