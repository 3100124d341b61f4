package arrivals_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
)

// Helpers in this file are prefixed wl to stay clear of the other test files
// of package models_test.

// wlRand returns a fixed-seed random stream.
func wlRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// wlDraw chains a.Next from instant 0 and returns every arrival before
// horizon, and whether the process ended (ok = false) before reaching it.
func wlDraw(t *testing.T, a arrivals.Process, seed uint64, horizon time.Duration) (at []time.Duration, ended bool) {
	t.Helper()
	r := wlRand(seed)
	prev := time.Duration(0)
	for {
		next, ok := a.Next(prev, r)
		if !ok {
			return at, true
		}
		if next < prev {
			t.Fatalf("arrival at %v after one at %v: time went backwards", next, prev)
		}
		if next >= horizon {
			return at, false
		}
		at = append(at, next)
		prev = next
	}
}

// wlCountIn returns how many instants fall in [from, to).
func wlCountIn(at []time.Duration, from, to time.Duration) int {
	lo, _ := slices.BinarySearch(at, from)
	hi, _ := slices.BinarySearch(at, to)
	return hi - lo
}

// wlWithin fails unless |got − want| ≤ tol.
func wlWithin(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g", name, got, want, tol)
	}
}

// TestPoissonArrivals checks a Poisson process at 200/s over 500 s (about
// 100,000 arrivals, fixed seed): the count, the mean gap, the gaps'
// coefficient of variation (1 for exponential gaps) and the share of gaps
// longer than the mean (e⁻¹). It catches a wrong rate or unit (a gap in ms
// instead of s, rate multiplied instead of divided) and gaps of the right
// mean but the wrong law (uniform or constant gaps have a CV of 0.58 or 0).
func TestPoissonArrivals(t *testing.T) {
	const rate = 200.0
	const horizon = 500 * time.Second
	at, ended := wlDraw(t, &arrivals.Poisson{Rate: rate}, 1, horizon)
	if ended {
		t.Fatal("Poisson process ended")
	}
	n := float64(len(at))
	want := rate * horizon.Seconds() // 100,000; Poisson SD ≈ 316
	// Tolerance 5 SD of a Poisson count.
	wlWithin(t, "arrivals in 500s", n, want, 5*math.Sqrt(want))

	gaps := make([]float64, len(at))
	prev := time.Duration(0)
	for i, a := range at {
		gaps[i] = float64(a - prev)
		prev = a
	}
	var sum, sq float64
	longer := 0
	meanGap := 1e9 / rate
	for _, g := range gaps {
		sum += g
		if g > meanGap {
			longer++
		}
	}
	m := sum / n
	for _, g := range gaps {
		sq += (g - m) * (g - m)
	}
	cv := math.Sqrt(sq/(n-1)) / m
	// Mean gap: SE = mean/√n ≈ 0.32%; tolerance 1.6% (5 SE).
	wlWithin(t, "mean gap (ns)", m, meanGap, 0.016*meanGap)
	// CV of exponential gaps is 1; SE ≈ √2/√n ≈ 0.45%; tolerance 0.025.
	wlWithin(t, "gap CV", cv, 1, 0.025)
	// P(gap > mean) = e⁻¹; SE ≈ 0.0015; tolerance 0.008.
	wlWithin(t, "P(gap > mean)", float64(longer)/n, math.Exp(-1), 0.008)
}

// TestConstantArrivals checks exact spacing: the first arrival is at 1/rate,
// each later one a fixed gap after the previous, the gap rounded to the
// nearest nanosecond so that the k-th arrival is within k/2 ns of k/rate. It
// catches a first arrival at 0, a gap truncated instead of rounded (drifting
// by up to a nanosecond per arrival), and a gap of the wrong unit.
func TestConstantArrivals(t *testing.T) {
	cases := []struct {
		rate float64
		gap  time.Duration // the gap rounded to the nearest ns
	}{
		{4, 250 * time.Millisecond},
		{3, 333333333}, // 333,333,333.3 ns
		{7, 142857143}, // 142,857,142.86 ns: truncation would give …142
		{1000, time.Millisecond},
	}
	for _, c := range cases {
		a := arrivals.Constant{Rate: c.rate}
		r := wlRand(1)
		prev := time.Duration(0)
		for k := 1; k <= 10000; k++ {
			next, ok := a.Next(prev, r)
			if !ok {
				t.Fatalf("rate %v: process ended at arrival %d", c.rate, k)
			}
			if got := next - prev; got != c.gap {
				t.Fatalf("rate %v: arrival %d came %v after the previous, want %v", c.rate, k, got, c.gap)
			}
			ideal := float64(k) * 1e9 / c.rate
			if math.Abs(float64(next)-ideal) > float64(k)/2 {
				t.Fatalf("rate %v: arrival %d at %d ns, ideal %.1f ns: drift over k/2 ns", c.rate, k, next, ideal)
			}
			prev = next
		}
	}
}

// TestOnOffArrivals checks a process on for 200 ms and off for 800 ms at
// 500/s over 200 s: no arrival ever falls in an off period, the rate during
// on periods is 500/s, and arrivals are spread evenly over the on period (the
// first and second halves get the same share). It catches on/off phases
// mapped with the wrong period, arrivals leaking into off time, and a rate
// applied to the whole period instead of its on part.
func TestOnOffArrivals(t *testing.T) {
	const (
		rate    = 500.0
		on      = 200 * time.Millisecond
		off     = 800 * time.Millisecond
		period  = on + off
		horizon = 200 * time.Second
	)
	at, ended := wlDraw(t, arrivals.OnOff{Rate: rate, On: on, Off: off}, 2, horizon)
	if ended {
		t.Fatal("on/off process ended")
	}
	firstHalf := 0
	for _, a := range at {
		phase := a % period
		if phase >= on {
			t.Fatalf("arrival at %v is %v into its period: inside the off part", a, phase)
		}
		if phase < on/2 {
			firstHalf++
		}
	}
	onTime := float64(horizon/period) * on.Seconds() // 40 s of on time
	want := rate * onTime                            // 20,000 arrivals; SD ≈ 141
	// Tolerance 5 SD of a Poisson count.
	wlWithin(t, "arrivals", float64(len(at)), want, 5*math.Sqrt(want))
	wlWithin(t, "rate during on periods (/s)", float64(len(at))/onTime, rate, 5*math.Sqrt(want)/onTime)
	// Binomial(n, ½): SD = √n/2 ≈ 71; tolerance 5 SD.
	n := float64(len(at))
	wlWithin(t, "arrivals in the first half of on periods", float64(firstHalf), n/2, 5*math.Sqrt(n)/2)
}

// TestOnOffResumesAfterOff checks Next from instants that are not arrivals:
// from inside or at the start of an off period the next arrival comes just
// after the next on period starts, never in the off period and never a whole
// period late. The rate is so high (10⁷/s) that the gap is below 1 ms with
// certainty. It catches an off-period instant not clamped to the end of its
// on part, and on-time accumulated with the period instead of the on length.
func TestOnOffResumesAfterOff(t *testing.T) {
	const on, off = 200 * time.Millisecond, 800 * time.Millisecond
	a := arrivals.OnOff{Rate: 1e7, On: on, Off: off}
	cases := []struct {
		prev, from time.Duration // the arrival must fall in [from, from+1ms)
	}{
		{0, 0},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{on, time.Second},                     // the first instant of off
		{500 * time.Millisecond, time.Second}, // mid off
		{999 * time.Millisecond, time.Second}, // the end of off
		{5*time.Second + 300*time.Millisecond, 6 * time.Second},
		{7*time.Second + 50*time.Millisecond, 7*time.Second + 50*time.Millisecond},
	}
	r := wlRand(3)
	for _, c := range cases {
		next, ok := a.Next(c.prev, r)
		if !ok || next < c.from || next >= c.from+time.Millisecond {
			t.Errorf("Next(%v) = %v, %v; want an arrival in [%v, %v)", c.prev, next, ok, c.from, c.from+time.Millisecond)
		}
	}
}

// TestRampArrivals checks a ramp from 1,000/s to 5,000/s over 10 s, then 10 s
// at 5,000/s: the count in every one-second window matches the integral of
// the linear rate (5 SD of a Poisson count). It catches a slope of the wrong
// sign, a root of the integral taken at the wrong end of the ramp, and a
// rate that does not hold at To after the ramp.
func TestRampArrivals(t *testing.T) {
	const from, to = 1000.0, 5000.0
	const over = 10 * time.Second
	at, ended := wlDraw(t, arrivals.Ramp{From: from, To: to, Over: over}, 4, 20*time.Second)
	if ended {
		t.Fatal("ramp ended")
	}
	for s := range 20 {
		want := to
		if s < 10 { // ∫ from s to s+1 of from + (to−from)·t/10
			want = from + (to-from)*(float64(s)+0.5)/10
		}
		got := wlCountIn(at, time.Duration(s)*time.Second, time.Duration(s+1)*time.Second)
		wlWithin(t, fmt.Sprintf("arrivals in [%ds, %ds)", s, s+1), float64(got), want, 5*math.Sqrt(want))
	}
}

// TestRampDownToZeroEnds checks a ramp from 2,000/s to 0 over 5 s: arrivals
// thin out linearly, none comes after the ramp, and the process then ends
// instead of drawing forever. It catches a ramp that never ends (or ends at
// once) when To is 0, and a falling ramp with the wrong slope.
func TestRampDownToZeroEnds(t *testing.T) {
	const from = 2000.0
	const over = 5 * time.Second
	at, ended := wlDraw(t, arrivals.Ramp{From: from, To: 0, Over: over}, 5, time.Hour)
	if !ended {
		t.Fatal("ramp down to 0 did not end")
	}
	if len(at) > 0 && at[len(at)-1] >= over {
		t.Fatalf("arrival at %v, after the ramp reached 0 at %v", at[len(at)-1], over)
	}
	for s := range 5 {
		want := from * (1 - (float64(s)+0.5)/5)
		got := wlCountIn(at, time.Duration(s)*time.Second, time.Duration(s+1)*time.Second)
		wlWithin(t, fmt.Sprintf("arrivals in [%ds, %ds)", s, s+1), float64(got), want, 5*math.Sqrt(want))
	}
	if _, ok := (arrivals.Ramp{From: 0, To: 0, Over: over}).Next(0, wlRand(5)); ok {
		t.Fatal("a ramp from 0 to 0 produced an arrival")
	}
}

// TestRampHoldsSmallFinalRate checks that a ramp stays at To after Over even
// when To is far below From: from 10,000/s down to one arrival every 1,000 s,
// there is always a next arrival. It catches a process that reports its end
// (ok = false) where the next arrival is merely far away, as thinning at the
// peak rate did when it gave up after 2²⁰ candidates; the caller then stops
// all arrivals for good.
func TestRampHoldsSmallFinalRate(t *testing.T) {
	const over = time.Minute
	a := arrivals.Ramp{From: 10000, To: 0.001, Over: over}
	r := wlRand(6)
	prev := over
	for i := range 3 {
		next, ok := a.Next(prev, r)
		if !ok {
			t.Fatalf("arrival %d after the ramp: the process ended although its rate stays at %v/s", i+1, a.To)
		}
		prev = next
	}
}

// TestRampAcrossEightDecades checks a ramp from 0.001/s to 100,000/s over
// 10 s: the counts in each half match the integral of the rate (5 SD).
// Thinning at the peak rate needed 10⁸ candidates for the first arrival and
// gave up after 2²⁰, ending the process with no arrival at all.
func TestRampAcrossEightDecades(t *testing.T) {
	const from, to = 0.001, 1e5
	const over = 10 * time.Second
	at, ended := wlDraw(t, arrivals.Ramp{From: from, To: to, Over: over}, 7, over)
	if ended {
		t.Fatal("the ramp ended")
	}
	integral := func(s float64) float64 { return from*s + (to-from)/10*s*s/2 }
	for _, half := range [][2]float64{{0, 5}, {5, 10}} {
		want := integral(half[1]) - integral(half[0])
		got := wlCountIn(at, time.Duration(half[0]*1e9), time.Duration(half[1]*1e9))
		wlWithin(t, fmt.Sprintf("arrivals in [%vs, %vs)", half[0], half[1]), float64(got), want, 5*math.Sqrt(want))
	}
}

// Rates whose gaps pass the last instant a duration holds end the process
// rather than wrapping around to arrivals at negative instants.
func TestGapsPastTheEndOfTime(t *testing.T) {
	r := wlRand(8)
	for _, p := range []arrivals.Process{&arrivals.Poisson{Rate: 1e-15}, arrivals.Constant{Rate: 1e-15}, arrivals.OnOff{Rate: 1e-15, On: time.Second, Off: time.Second}} {
		if at, ok := p.Next(time.Hour, r); ok {
			t.Errorf("%T: an arrival at %v, 3·10¹³ s after the last", p, at)
		}
	}
}

// TestTraceReplays checks that a trace returns its instants in order,
// duplicates included, ignoring prev, and then reports the end on every
// later call. It catches an index off by one (a panic or a skipped first
// instant) and a trace that restarts.
func TestTraceReplays(t *testing.T) {
	times := []time.Duration{0, time.Second, time.Second, 2500 * time.Millisecond}
	tr := &arrivals.Trace{Times: times}
	r := wlRand(7)
	for i, want := range times {
		got, ok := tr.Next(time.Hour, r) // prev plays no part
		if !ok || got != want {
			t.Fatalf("call %d: %v, %v; want %v, true", i, got, ok, want)
		}
	}
	for i := range 3 {
		if got, ok := tr.Next(0, r); ok {
			t.Fatalf("call %d past the end: %v, true; want the end", len(times)+i, got)
		}
	}
	if _, ok := (&arrivals.Trace{}).Next(0, r); ok {
		t.Fatal("empty trace produced an arrival")
	}
}

// wlSource is a trace source of fixed instants that fails to open when
// openErr is set, or after its instants when readErr is; it counts its
// open readers.
type wlSource struct {
	times            []time.Duration
	openErr, readErr error
	open             int
}

func (s *wlSource) Open() (arrivals.TraceReader, error) {
	if s.openErr != nil {
		return nil, s.openErr
	}
	s.open++
	return &wlReader{s: s}, nil
}

type wlReader struct {
	s *wlSource
	i int
}

func (r *wlReader) Next() (time.Duration, bool) {
	if r.i >= len(r.s.times) {
		return 0, false
	}
	r.i++
	return r.s.times[r.i-1], true
}

func (r *wlReader) Close() error {
	r.s.open--
	return r.s.readErr
}

// A streamed trace replays its source's instants as an in-memory trace
// does, opening the source once, at the first arrival, and stops when the
// source fails; Close releases the reader and returns the source's
// error, every time it is called. It catches a stream opened per arrival,
// never closed, or whose error is lost.
func TestStreamReplaysItsSource(t *testing.T) {
	times := []time.Duration{0, time.Second, time.Second, 2500 * time.Millisecond}
	broken := fmt.Errorf("trace.csv:3: changed")
	for _, c := range []struct {
		src  *wlSource
		want []time.Duration
		err  error
	}{
		{&wlSource{times: times}, times, nil},
		{&wlSource{times: times, readErr: broken}, times, broken},
		{&wlSource{times: times, openErr: broken}, nil, broken},
	} {
		p := arrivals.Spec{Kind: arrivals.KindTrace, Source: c.src}.New()
		var got []time.Duration
		for range len(times) + 3 {
			if at, ok := p.Next(time.Hour, nil); ok {
				got = append(got, at)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("replayed %v, want %v", got, c.want)
		}
		s := p.(*arrivals.Stream)
		for range 2 {
			if err := s.Close(); err != c.err {
				t.Errorf("Close: %v, want %v", err, c.err)
			}
		}
		if c.src.open != 0 {
			t.Errorf("%d readers left open", c.src.open)
		}
	}
}

// TestExpDrivenProcessesDrawOneExponential holds every process that says
// it draws one standard exponential an arrival to it: Next on a stream
// gives, arrival after arrival, what NextGiven gives on that stream's
// exponentials drawn elsewhere, and the stream is left where those draws
// left it. A process drawing a second value (a uniform for a phase, say)
// would fall out of step at once. The processes come from their specs,
// every kind: the Poisson, on/off and ramp processes must say so (their
// draws are made ahead when a processor is spare), the others must not.
func TestExpDrivenProcessesDrawOneExponential(t *testing.T) {
	specs := []struct {
		spec arrivals.Spec
		exp  bool
	}{
		{arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 150}, true},
		{arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 80, On: 2 * time.Second, Off: 3 * time.Second}, true},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 5, RateTo: 400, Ramp: 20 * time.Second}, true},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 300, RateTo: 10, Ramp: 10 * time.Second}, true},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 300, RateTo: 0, Ramp: 10 * time.Second}, true},
		{arrivals.Spec{Kind: arrivals.KindConstant, Rate: 10}, false},
		{arrivals.Spec{Kind: arrivals.KindTrace, Times: []time.Duration{1, 2, 3}}, false},
	}
	for _, c := range specs {
		name := fmt.Sprintf("%v %v→%v", c.spec.Kind, c.spec.Rate, c.spec.RateTo)
		p, ok := c.spec.New().(arrivals.ExpDriven)
		if ok != c.exp {
			t.Fatalf("%s: ExpDriven %v, want %v", name, ok, c.exp)
		}
		if !ok {
			continue
		}
		direct, given := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		var a, b time.Duration
		for i := range 20_000 {
			var okA, okB bool
			a, okA = p.Next(a, direct)
			b, okB = p.NextGiven(b, given.ExpFloat64())
			if a != b || okA != okB {
				t.Fatalf("%s arrival %d: Next %v %v, NextGiven %v %v", name, i, a, okA, b, okB)
			}
			if !okA {
				break
			}
		}
		if direct.Uint64() != given.Uint64() {
			t.Fatalf("%s: Next left its stream elsewhere than one exponential an arrival", name)
		}
	}
}
