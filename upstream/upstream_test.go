package upstream

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func draw(t *testing.T, s Dist, n int) ([]float64, Latency) {
	t.Helper()
	l, err := NewLatency(s)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(l.Sample(r))
	}
	slices.Sort(xs)
	return xs, l
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Each family's sample mean matches its stated mean (200,000 draws; the
// tolerance is several standard errors for the family's spread).
func TestDistributionMeans(t *testing.T) {
	cases := []struct {
		s   Dist
		tol float64
	}{
		{Constant{Value: 5 * ms}, 0},
		{Exponential{Average: 100 * ms}, 0.01},
		{LogNormal{Median: 200 * ms, Sigma: 0.5}, 0.01},
		{Gamma{Average: 100 * ms, Shape: 2}, 0.01},
		{Weibull{Scale: 100 * ms, Shape: 1.5}, 0.01},
		{Pareto{Scale: 50 * ms, Shape: 3}, 0.02},
		{Uniform{Min: 10 * ms, Max: 30 * ms}, 0.005},
		{Empirical{Quantiles: []Quantile{{0, 10 * ms}, {0.5, 80 * ms}, {1, 2 * time.Second}}}, 0.01},
		{Mixture{Components: []Component{
			{Weight: 0.95, Dist: Constant{Value: 10 * ms}},
			{Weight: 0.05, Dist: Constant{Value: 1 * time.Second}}}}, 0.02},
	}
	for _, c := range cases {
		xs, l := draw(t, c.s, 200000)
		got, want := mean(xs), float64(l.Mean())
		if math.Abs(got-want) > c.tol*want+1 {
			t.Errorf("%s: sample mean %v, stated mean %v", Name(c.s), time.Duration(got), time.Duration(want))
		}
	}
}

// Lognormal given by p50 and p99 reproduces those quantiles.
func TestLognormalByQuantiles(t *testing.T) {
	xs, _ := draw(t, LogNormal{P50: 100 * ms, P99: 900 * ms}, 200000)
	p50, p99 := xs[len(xs)/2], xs[len(xs)*99/100]
	if math.Abs(p50/float64(100*ms)-1) > 0.01 || math.Abs(p99/float64(900*ms)-1) > 0.03 {
		t.Fatalf("p50 %v p99 %v", time.Duration(p50), time.Duration(p99))
	}
}

func TestEmpiricalInterpolates(t *testing.T) {
	xs, _ := draw(t, Empirical{Quantiles: []Quantile{{0, 0}, {1, 100 * ms}}}, 100000)
	if xs[0] < 0 || xs[len(xs)-1] > float64(100*ms) || math.Abs(xs[len(xs)/2]-float64(50*ms)) > float64(ms) {
		t.Fatalf("uniform by quantiles: min %v median %v max %v", time.Duration(xs[0]), time.Duration(xs[len(xs)/2]), time.Duration(xs[len(xs)-1]))
	}
	_, l := draw(t, Empirical{Samples: []time.Duration{30 * ms, 10 * ms, 20 * ms}}, 10)
	if l.Mean() != 20*ms {
		t.Fatalf("mean of samples %v", l.Mean())
	}
}

func TestInvalidSpecs(t *testing.T) {
	for _, s := range []Dist{
		Exponential{},
		LogNormal{Median: ms},
		LogNormal{P50: 2 * ms, P99: ms},
		Pareto{Scale: ms, Shape: 1},
		Uniform{Min: 5 * ms, Max: 5 * ms},
		Empirical{Quantiles: []Quantile{{0.1, ms}, {1, 2 * ms}}},
		Mixture{Components: []Component{{Weight: 1, Dist: Constant{Value: ms}}}},
		nil,
	} {
		if _, err := NewLatency(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

func TestServerQuotaAndRetryAfter(t *testing.T) {
	cfg := Config{Host: "api", Latency: Constant{Value: 100 * ms},
		Quotas: []Quota{{Kind: "fixed_window", Limit: 2, Window: time.Minute}}, RetryAfter: RetryAfter{Reset: true},
		RejectLatency: 5 * ms}
	s, err := NewServer(cfg, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	at := 10*time.Second + 300*ms
	a1, a2, a3 := s.Start(at, 1), s.Start(at, 1), s.Start(at, 1)
	if !a1.OK || !a2.OK || a1.After != 100*ms {
		t.Fatalf("first two: %+v %+v", a1, a2)
	}
	// 49.7 s to the window's reset, sent as whole seconds.
	if a3.OK || a3.After != 5*ms || !a3.HasRetryAfter || a3.RetryAfter != 50*time.Second {
		t.Fatalf("third: %+v", a3)
	}
	cfg.Quotas = []Quota{{Kind: "concurrency", Permits: 1}}
	cfg.RetryAfter = RetryAfter{None: true}
	s, _ = NewServer(cfg, rand.New(rand.NewPCG(1, 1)), nil)
	if !s.Start(0, 1).OK || s.Start(0, 1).OK {
		t.Fatal("concurrency quota of 1 admitted two")
	}
	if a := s.Start(0, 1); a.HasRetryAfter {
		t.Fatal("retry_after \"\" sent a header")
	}
	s.Finish(ms, &Answer{})
	if !s.Start(ms, 1).OK {
		t.Fatal("permit not returned by Finish")
	}
}
