package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fitting recovers known parameters from 10,000 generated samples (within
// 3%), and ranks the generating family first by its KS statistic.
func TestFitRecoversParameters(t *testing.T) {
	src := rand.New(rand.NewPCG(7, 8))
	draw := func(q func(float64) float64) []time.Duration {
		out := make([]time.Duration, 10000)
		for i := range out {
			out[i] = time.Duration(q(src.Float64()) * 1e9)
		}
		return out
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.03*math.Abs(want) }
	cases := []struct {
		dist    string
		samples []time.Duration
		check   func(s Dist) bool
	}{
		{"lognormal", draw(distuv.LogNormal{Mu: math.Log(0.2), Sigma: 0.5}.Quantile),
			func(s Dist) bool { l := s.(LogNormal); return near(l.Median.Seconds(), 0.2) && near(l.Sigma, 0.5) }},
		{"gamma", draw(distuv.Gamma{Alpha: 3, Beta: 3 / 0.15}.Quantile),
			func(s Dist) bool { g := s.(Gamma); return near(g.Average.Seconds(), 0.15) && near(g.Shape, 3) }},
		{"weibull", draw(distuv.Weibull{K: 1.5, Lambda: 0.3}.Quantile),
			func(s Dist) bool { w := s.(Weibull); return near(w.Scale.Seconds(), 0.3) && near(w.Shape, 1.5) }},
		{"exponential", draw(distuv.Exponential{Rate: 1 / 0.08}.Quantile),
			func(s Dist) bool { return near(s.(Exponential).Average.Seconds(), 0.08) }},
	}
	for _, c := range cases {
		fits, err := FitLatency(c.samples)
		if err != nil {
			t.Fatal(err)
		}
		// The exponential is a gamma and a Weibull of shape 1: on its own
		// samples those fit as well, so it need only be about as good.
		if Name(fits[0].Dist) != c.dist {
			var ks float64
			for _, f := range fits {
				if Name(f.Dist) == c.dist {
					ks = f.KS
				}
			}
			if c.dist != "exponential" || ks > fits[0].KS+0.005 {
				t.Errorf("%s samples: best fit %s (KS %.4f, %s's %.4f)", c.dist, Name(fits[0].Dist), fits[0].KS, c.dist, ks)
			}
		}
		for _, f := range fits {
			if Name(f.Dist) == c.dist && !c.check(f.Dist) {
				t.Errorf("%s fit %+v misses the generating parameters", c.dist, f.Dist)
			}
			if _, err := NewLatency(f.Dist); err != nil {
				t.Errorf("fitted %s does not build: %v", Name(f.Dist), err)
			}
		}
	}
	for _, bad := range [][]time.Duration{{time.Second}, {time.Second, 0}, {time.Second, time.Second}} {
		if _, err := FitLatency(bad); err == nil {
			t.Errorf("%v fitted", bad)
		}
	}
}

// A table of exact percentiles of each family is fitted back to that
// family's parameters (within 1%, the gamma's shape found by search) with
// a near-zero quantile error, ranked first; bad tables are refused.
func TestFitQuantilesRecoversParameters(t *testing.T) {
	ps := []float64{0.5, 0.9, 0.99, 0.999}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.01*math.Abs(want) }
	for _, c := range []struct {
		dist  string
		q     func(float64) float64
		check func(s Dist) bool
	}{
		{"lognormal", distuv.LogNormal{Mu: math.Log(0.2), Sigma: 0.5}.Quantile,
			func(s Dist) bool { l := s.(LogNormal); return near(l.Median.Seconds(), 0.2) && near(l.Sigma, 0.5) }},
		{"gamma", distuv.Gamma{Alpha: 3, Beta: 3 / 0.15}.Quantile,
			func(s Dist) bool { g := s.(Gamma); return near(g.Average.Seconds(), 0.15) && near(g.Shape, 3) }},
		{"weibull", distuv.Weibull{K: 1.5, Lambda: 0.3}.Quantile,
			func(s Dist) bool { w := s.(Weibull); return near(w.Scale.Seconds(), 0.3) && near(w.Shape, 1.5) }},
		{"exponential", distuv.Exponential{Rate: 1 / 0.08}.Quantile,
			func(s Dist) bool { return near(s.(Exponential).Average.Seconds(), 0.08) }},
	} {
		qs := make([]time.Duration, len(ps))
		for i, p := range ps {
			qs[i] = time.Duration(c.q(p) * 1e9)
		}
		fits, err := FitQuantiles(ps, qs)
		if err != nil {
			t.Fatal(err)
		}
		for rank, f := range fits {
			if Name(f.Dist) != c.dist {
				continue
			}
			if !c.check(f.Dist) || f.QuantileErr > 0.002 {
				t.Errorf("%s percentiles: fit %+v, quantile error %.4f", c.dist, f.Dist, f.QuantileErr)
			}
			// The exponential nests in the gamma and the Weibull: they tie.
			if rank > 0 && fits[0].QuantileErr < f.QuantileErr-0.002 {
				t.Errorf("%s percentiles: ranked %d behind %s", c.dist, rank, Name(fits[0].Dist))
			}
			if _, err := NewLatency(f.Dist); err != nil {
				t.Errorf("fitted %s does not build: %v", Name(f.Dist), err)
			}
		}
		if fits[len(fits)-1].QuantileErr < 0.01 && c.dist != "exponential" {
			t.Errorf("%s percentiles: every family fits within 1%%: the ranking cannot tell them apart", c.dist)
		}
	}
	ms := time.Millisecond
	for _, bad := range []struct {
		ps []float64
		qs []time.Duration
	}{
		{[]float64{0.5}, []time.Duration{ms}},
		{[]float64{0.9, 0.5}, []time.Duration{ms, 2 * ms}},
		{[]float64{0.5, 0.9}, []time.Duration{2 * ms, ms}},
		{[]float64{0.5, 1}, []time.Duration{ms, 2 * ms}},
		{[]float64{0.5, 0.9}, []time.Duration{ms, ms}},
	} {
		if _, err := FitQuantiles(bad.ps, bad.qs); err == nil {
			t.Errorf("%v %v fitted", bad.ps, bad.qs)
		}
	}
}

// BenchmarkFitLatency fits the four families to 100,000 samples, as
// `limitsim fit latency` does on a latency log.
func BenchmarkFitLatency(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]time.Duration, 100_000)
	for i := range samples {
		samples[i] = time.Duration(math.Exp(math.Log(0.1e9) + 0.5*r.NormFloat64()))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FitLatency(samples); err != nil {
			b.Fatal(err)
		}
	}
}

// The Weibull shape is the bisection's as it was written first: 200 steps
// of the likelihood equation, each summing over the samples with their
// logs taken afresh. Stopping once a step changes neither bound, with the
// logs taken once, must give the same shape and scale to the last bit.
func TestFitWeibullAsTheFullBisection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sets := map[string][]time.Duration{"two": {time.Millisecond, 3 * time.Millisecond}}
	for _, n := range []int{3, 50, 2000} {
		ln, wb, ex := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
		w := distuv.Weibull{K: 0.7, Lambda: 0.2, Src: r}
		for i := range n {
			ln[i] = time.Duration(math.Exp(math.Log(0.1e9) + 1.5*r.NormFloat64()))
			wb[i] = time.Duration(w.Rand()*1e9) + 1
			ex[i] = time.Duration(r.ExpFloat64()*5e6) + 1
		}
		sets[fmt.Sprint("lognormal ", n)], sets[fmt.Sprint("weibull ", n)], sets[fmt.Sprint("exponential ", n)] = ln, wb, ex
	}
	for name, samples := range sets {
		fits, err := FitLatency(samples)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got Weibull
		for _, f := range fits {
			if w, ok := f.Dist.(Weibull); ok {
				got = w
			}
		}
		k, lambda := fullWeibullBisection(samples)
		if got.Shape != k || got.Scale != secondsToDuration(lambda) {
			t.Errorf("%s: shape %v scale %v, the full bisection %v and %v", name, got.Shape, got.Scale, k, secondsToDuration(lambda))
		}
	}
}

// fullWeibullBisection is the Weibull fit of FitLatency as first written.
func fullWeibullBisection(samples []time.Duration) (k, lambda float64) {
	xs := make([]float64, len(samples))
	var sum, sumLog float64
	for i, s := range samples {
		xs[i] = s.Seconds()
		sum += xs[i]
		sumLog += math.Log(xs[i])
	}
	slices.Sort(xs)
	n := float64(len(xs))
	mean, meanLog := sum/n, sumLog/n
	f := func(k float64) float64 {
		var a, b float64
		for _, x := range xs {
			v := math.Pow(x/mean, k)
			a += v * math.Log(x/mean)
			b += v
		}
		return a/b - 1/k - (meanLog - math.Log(mean))
	}
	lo, hi := 0.01, 100.0
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if f(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	k = math.Sqrt(lo * hi)
	var sumPowers float64
	for _, x := range xs {
		sumPowers += math.Pow(x/mean, k)
	}
	return k, mean * math.Pow(sumPowers/n, 1/k)
}
