package upstream

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

// Standard normal quantiles used for the lognormal's analytic quantiles.
const (
	z90 = 1.2815515655446004
	z50 = 0
)

// cdfPoint is one point of a distribution function: P(X ≤ x) = p.
type cdfPoint struct {
	x time.Duration
	p float64
}

// analyticCase is a distribution with its analytic mean and distribution
// function at a few points (for most families, the analytic quantiles).
type analyticCase struct {
	name     string
	s        Dist
	mean     float64 // analytic mean, ns
	points   []cdfPoint
	min, max time.Duration // support, when bounded (max 0: unbounded above)
}

func ln(x float64) float64 { return math.Log(x) }

func analyticCases() []analyticCase {
	expMean := float64(100 * ms)
	ln1Med, ln1Sig := float64(200*ms), 0.5
	ln2Med := float64(100 * ms)
	ln2Sig := ln(9) / z99 // p50 100 ms, p99 900 ms
	gMean, gShape := float64(100*ms), 2.0
	gRate := gShape / gMean
	gammaCDF := func(x float64) float64 { // shape 2: 1 − e^(−βx)(1 + βx)
		return 1 - math.Exp(-gRate*x)*(1+gRate*x)
	}
	wLam, wK := float64(100*ms), 1.5
	wQ := func(p float64) time.Duration { return time.Duration(wLam * math.Pow(-ln(1-p), 1/wK)) }
	pXm, pA := float64(50*ms), 3.0
	pQ := func(p float64) time.Duration { return time.Duration(pXm * math.Pow(1-p, -1/pA)) }
	lnQ := func(med, sig, z float64) time.Duration { return time.Duration(med * math.Exp(sig*z)) }
	return []analyticCase{
		{
			name: "exponential", s: Exponential{Average: 100 * ms}, mean: expMean,
			points: []cdfPoint{
				{time.Duration(expMean * ln(2)), 0.5},
				{time.Duration(-expMean * ln(0.1)), 0.9},
				{time.Duration(-expMean * ln(0.01)), 0.99},
			},
		},
		{
			name: "lognormal by median and sigma", s: LogNormal{Median: 200 * ms, Sigma: 0.5},
			mean: ln1Med * math.Exp(ln1Sig*ln1Sig/2),
			points: []cdfPoint{
				{lnQ(ln1Med, ln1Sig, -z90), 0.1},
				{lnQ(ln1Med, ln1Sig, z50), 0.5},
				{lnQ(ln1Med, ln1Sig, z90), 0.9},
				{lnQ(ln1Med, ln1Sig, z99), 0.99},
			},
		},
		{
			name: "lognormal by p50 and p99", s: LogNormal{P50: 100 * ms, P99: 900 * ms},
			mean: ln2Med * math.Exp(ln2Sig*ln2Sig/2),
			points: []cdfPoint{
				{100 * ms, 0.5},
				{lnQ(ln2Med, ln2Sig, z90), 0.9},
				{900 * ms, 0.99},
			},
		},
		{
			name: "gamma", s: Gamma{Average: 100 * ms, Shape: 2}, mean: gMean,
			points: []cdfPoint{
				{50 * ms, gammaCDF(float64(50 * ms))},
				{100 * ms, gammaCDF(float64(100 * ms))}, // 1 − 3e⁻² ≈ 0.594
				{300 * ms, gammaCDF(float64(300 * ms))},
			},
		},
		{
			name: "weibull", s: Weibull{Scale: 100 * ms, Shape: 1.5}, mean: wLam * math.Gamma(1+1/wK),
			points: []cdfPoint{{wQ(0.1), 0.1}, {wQ(0.5), 0.5}, {wQ(0.9), 0.9}, {wQ(0.99), 0.99}},
		},
		{
			name: "pareto", s: Pareto{Scale: 50 * ms, Shape: 3}, mean: pA * pXm / (pA - 1),
			points: []cdfPoint{{pQ(0.5), 0.5}, {pQ(0.9), 0.9}, {pQ(0.99), 0.99}},
			min:    50 * ms,
		},
		{
			name: "uniform", s: Uniform{Min: 10 * ms, Max: 30 * ms}, mean: float64(20 * ms),
			points: []cdfPoint{{15 * ms, 0.25}, {20 * ms, 0.5}, {29 * ms, 0.95}},
			min:    10 * ms, max: 30 * ms,
		},
		{
			// The widest range a duration allows: max − min + 1 is 2⁶³,
			// which an int64 does not hold.
			name: "uniform over every duration", s: Uniform{Min: 0, Max: math.MaxInt64}, mean: float64(math.MaxInt64 / 2),
			points: []cdfPoint{{math.MaxInt64 / 4, 0.25}, {math.MaxInt64 / 2, 0.5}},
			min:    0, max: math.MaxInt64,
		},
		{
			name: "empirical by quantiles",
			s:    Empirical{Quantiles: []Quantile{{0, 10 * ms}, {0.5, 80 * ms}, {1, 2 * time.Second}}},
			// Half uniform on [10, 80] ms, half on [80, 2000] ms.
			mean:   float64(45*ms)/2 + float64(1040*ms)/2,
			points: []cdfPoint{{45 * ms, 0.25}, {80 * ms, 0.5}, {1040 * ms, 0.75}},
			min:    10 * ms, max: 2 * time.Second,
		},
		{
			name: "empirical by samples, unsorted",
			// Sorted: 10, 20, 30, 40 ms at p = 0, ⅓, ⅔, 1, interpolated linearly.
			s:      Empirical{Samples: []time.Duration{40 * ms, 10 * ms, 30 * ms, 20 * ms}},
			mean:   float64(25 * ms),
			points: []cdfPoint{{15 * ms, 1.0 / 6}, {25 * ms, 0.5}, {35 * ms, 5.0 / 6}},
			min:    10 * ms, max: 40 * ms,
		},
		{
			name: "mixture, weights not summing to 1",
			s: Mixture{Components: []Component{
				{Weight: 3, Dist: Exponential{Average: 10 * ms}},
				{Weight: 1, Dist: Constant{Value: time.Second}},
			}},
			mean: 0.75*float64(10*ms) + 0.25*float64(time.Second),
			points: []cdfPoint{
				{10 * ms, 0.75 * (1 - math.Exp(-1))},
				{500 * ms, 0.75},
				{time.Second, 1},
			},
		},
		{
			name: "mixture of three",
			s: Mixture{Components: []Component{
				{Weight: 0.2, Dist: Constant{Value: 10 * ms}},
				{Weight: 0.5, Dist: Uniform{Min: 20 * ms, Max: 40 * ms}},
				{Weight: 0.3, Dist: Constant{Value: 100 * ms}},
			}},
			mean:   0.2*float64(10*ms) + 0.5*float64(30*ms) + 0.3*float64(100*ms),
			points: []cdfPoint{{10 * ms, 0.2}, {30 * ms, 0.45}, {50 * ms, 0.7}, {100 * ms, 1}},
			min:    10 * ms, max: 100 * ms,
		},
	}
}

// TestDistributionsAgainstAnalytic checks each family against its closed
// form, not against its own Mean method: Mean() equals the analytic mean;
// the sample mean of 100,000 draws (fixed seed) is within 5 standard errors
// of it; at each analytic quantile (or distribution function point) the
// share of draws at or below it is p within 5·√(p(1−p)/n); and bounded
// families stay in their support. It catches a parameter mapped wrongly (a
// gamma rate that ignores the shape gives a consistent but wrong mean and
// quantiles), a mixture whose weights are not normalised, empirical samples
// not sorted before interpolation, a lognormal sigma from the wrong normal
// quantile, and a uniform or Pareto draw outside its range.
func TestDistributionsAgainstAnalytic(t *testing.T) {
	const n = 100000
	for _, c := range analyticCases() {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewLatency(c.s)
			if err != nil {
				t.Fatal(err)
			}
			if got := float64(l.Mean()); math.Abs(got-c.mean) > 1e-9*c.mean+1 {
				t.Errorf("Mean() = %v, analytic %v", l.Mean(), time.Duration(c.mean))
			}
			r := rand.New(rand.NewPCG(21, 22))
			xs := make([]float64, n)
			var sum float64
			for i := range xs {
				d := l.Sample(r)
				if d < c.min || (c.max > 0 && d > c.max) {
					t.Fatalf("draw %v outside [%v, %v]", d, c.min, c.max)
				}
				xs[i] = float64(d)
				sum += xs[i]
			}
			m := sum / n
			var sq float64
			for _, x := range xs {
				sq += (x - m) * (x - m)
			}
			se := math.Sqrt(sq/(n-1)) / math.Sqrt(n)
			if math.Abs(m-c.mean) > 5*se+1 {
				t.Errorf("sample mean %v, analytic %v (SE %v)", time.Duration(m), time.Duration(c.mean), time.Duration(se))
			}
			sort.Float64s(xs)
			for _, pt := range c.points {
				below := sort.Search(n, func(i int) bool { return xs[i] > float64(pt.x) })
				got := float64(below) / n
				tol := 5*math.Sqrt(pt.p*(1-pt.p)/n) + 1.0/n
				if math.Abs(got-pt.p) > tol {
					t.Errorf("P(X ≤ %v) = %.5f, analytic %.5f ± %.5f", pt.x, got, pt.p, tol)
				}
			}
		})
	}
}

// TestConstantAndSingleSample checks the degenerate families: a constant
// (zero included) and an empirical distribution of one sample always return
// that value. It catches a constant of 0 refused and a one-sample empirical
// table that interpolates towards 0.
func TestConstantAndSingleSample(t *testing.T) {
	cases := []struct {
		s    Dist
		want time.Duration
	}{
		{Constant{Value: 5 * ms}, 5 * ms},
		{Constant{}, 0},
		{Empirical{Samples: []time.Duration{7 * ms}}, 7 * ms},
		{Empirical{Quantiles: []Quantile{{0, 3 * ms}, {1, 3 * ms}}}, 3 * ms},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		l, err := NewLatency(c.s)
		if err != nil {
			t.Fatalf("%+v: %v", c.s, err)
		}
		if l.Mean() != c.want {
			t.Errorf("%+v: Mean() = %v, want %v", c.s, l.Mean(), c.want)
		}
		for range 1000 {
			if d := l.Sample(r); d != c.want {
				t.Fatalf("%+v: drew %v, want %v", c.s, d, c.want)
			}
		}
	}
}

// TestSpecErrors drives every refusal of New: each bad specification is
// refused with an error wrapping ErrSpec that names the problem. It catches
// a check that is missing or shadowed by an earlier one (the message would
// then name a different problem), NaN and infinite parameters accepted, and
// mixture errors that lose the component index or ErrSpec.
func TestSpecErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	c := func(v time.Duration) Dist { return Constant{Value: v} }
	cases := []struct {
		name string
		s    Dist
		msg  string
	}{
		{"constant negative", Constant{Value: -ms}, "is negative"},
		{"exponential no mean", Exponential{}, "exponential mean must be positive"},
		{"exponential negative mean", Exponential{Average: -ms}, "exponential mean must be positive"},
		{"lognormal median and p50", LogNormal{Median: ms, Sigma: 1, P50: ms, P99: 2 * ms}, "not both"},
		{"lognormal sigma and p99", LogNormal{Sigma: 1, P99: 2 * ms}, "not both"},
		{"lognormal p99 only", LogNormal{P99: 2 * ms}, "0 < p50 < p99"},
		{"lognormal p99 below p50", LogNormal{P50: 2 * ms, P99: ms}, "0 < p50 < p99"},
		{"lognormal p99 equal p50", LogNormal{P50: ms, P99: ms}, "0 < p50 < p99"},
		{"lognormal no median", LogNormal{Sigma: 1}, "positive median and sigma"},
		{"lognormal negative median", LogNormal{Median: -ms, Sigma: 1}, "positive median and sigma"},
		{"lognormal no sigma", LogNormal{Median: ms}, "positive median and sigma"},
		{"lognormal NaN sigma", LogNormal{Median: ms, Sigma: nan}, "positive median and sigma"},
		{"lognormal infinite sigma", LogNormal{Median: ms, Sigma: inf}, "positive median and sigma"},
		{"gamma no mean", Gamma{Shape: 2}, "gamma needs"},
		{"gamma no shape", Gamma{Average: ms}, "gamma needs"},
		{"gamma NaN shape", Gamma{Average: ms, Shape: nan}, "gamma needs"},
		{"gamma infinite shape", Gamma{Average: ms, Shape: inf}, "gamma needs"},
		{"weibull no scale", Weibull{Shape: 1}, "weibull needs"},
		{"weibull no shape", Weibull{Scale: ms}, "weibull needs"},
		{"weibull infinite shape", Weibull{Scale: ms, Shape: inf}, "weibull needs"},
		{"pareto no scale", Pareto{Shape: 2}, "pareto needs"},
		{"pareto shape 1 (infinite mean)", Pareto{Scale: ms, Shape: 1}, "shape above 1"},
		{"pareto shape below 1", Pareto{Scale: ms, Shape: 0.5}, "shape above 1"},
		{"pareto NaN shape", Pareto{Scale: ms, Shape: nan}, "shape above 1"},
		{"pareto infinite shape", Pareto{Scale: ms, Shape: inf}, "shape above 1"},
		{"uniform negative min", Uniform{Min: -ms, Max: ms}, "0 ≤ min < max"},
		{"uniform empty", Uniform{Min: 5 * ms, Max: 5 * ms}, "0 ≤ min < max"},
		{"uniform reversed", Uniform{Min: 5 * ms, Max: ms}, "0 ≤ min < max"},
		{"empirical both", Empirical{Samples: []time.Duration{ms}, Quantiles: []Quantile{{0, ms}, {1, 2 * ms}}}, "not both"},
		{"empirical negative sample", Empirical{Samples: []time.Duration{ms, -ms}}, "is negative"},
		{"empirical nothing", Empirical{}, "at least two quantiles"},
		{"empirical one quantile", Empirical{Quantiles: []Quantile{{0, ms}}}, "at least two quantiles"},
		{"empirical not from 0", Empirical{Quantiles: []Quantile{{0.1, ms}, {1, 2 * ms}}}, "start at p = 0"},
		{"empirical not to 1", Empirical{Quantiles: []Quantile{{0, ms}, {0.9, 2 * ms}}}, "end at p = 1"},
		{"empirical decreasing", Empirical{Quantiles: []Quantile{{0, 2 * ms}, {1, ms}}}, "non-decreasing"},
		{"empirical repeated p", Empirical{Quantiles: []Quantile{{0, ms}, {0.5, 2 * ms}, {0.5, 3 * ms}, {1, 4 * ms}}}, "distinct p"},
		{"empirical negative value", Empirical{Quantiles: []Quantile{{0, -ms}, {1, ms}}}, "non-negative"},
		{"mixture of one", Mixture{Components: []Component{{Weight: 1, Dist: c(ms)}}}, "at least two components"},
		{"mixture zero weight", Mixture{Components: []Component{{Weight: 1, Dist: c(ms)}, {Weight: 0, Dist: c(ms)}}}, "component 1 needs a positive weight"},
		{"mixture negative weight", Mixture{Components: []Component{{Weight: -1, Dist: c(ms)}, {Weight: 1, Dist: c(ms)}}}, "component 0 needs a positive weight"},
		{"mixture NaN weight", Mixture{Components: []Component{{Weight: nan, Dist: c(ms)}, {Weight: 1, Dist: c(ms)}}}, "positive weight"},
		{"mixture infinite weight", Mixture{Components: []Component{{Weight: inf, Dist: c(ms)}, {Weight: 1, Dist: c(ms)}}}, "positive weight"},
		{"mixture nested", Mixture{Components: []Component{{Weight: 1, Dist: c(ms)}, {Weight: 1, Dist: Mixture{}}}}, "do not nest"},
		{"mixture bad component", Mixture{Components: []Component{{Weight: 1, Dist: c(ms)}, {Weight: 1, Dist: c(-ms)}}}, "mixture component 1: "},
		{"unregistered", unregistered{}, `unknown dist ""`},
		{"empty", nil, `unknown dist ""`},
	}
	for _, tc := range cases {
		l, err := NewLatency(tc.s)
		if err == nil {
			t.Errorf("%s: accepted (%T)", tc.name, l)
			continue
		}
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %q, want an ErrSpec naming %q", tc.name, err, tc.msg)
		}
	}
}

// TestHeavyTailSaturates draws from a lognormal so wide (median 1 s, sigma
// 30) that about a fifth of its draws exceed the largest time.Duration: they
// must saturate at math.MaxInt64, never wrap to a negative or small latency.
// It catches a float-to-duration conversion without saturation (on amd64,
// time.Duration(1e30) is math.MinInt64).
func TestHeavyTailSaturates(t *testing.T) {
	l, err := NewLatency(LogNormal{Median: time.Second, Sigma: 30})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	saturated := 0
	for range 10000 {
		d := l.Sample(r)
		if d < 0 {
			t.Fatalf("drew a negative latency %d", d)
		}
		if d == math.MaxInt64 {
			saturated++
		}
	}
	// P(draw > 2⁶³ ns) = P(Z > ln(2⁶³/10⁹)/30) ≈ 0.22; binomial SD ≈ 0.004.
	if saturated < 1900 || saturated > 2500 {
		t.Fatalf("%d of 10000 draws saturated, want about 2,200", saturated)
	}
}

// unregistered is a distribution type missing from the table of families.
type unregistered struct{ Constant }
