package upstream

import (
	"math"
	"math/rand/v2"
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
		check   func(s Spec) bool
	}{
		{"lognormal", draw(distuv.LogNormal{Mu: math.Log(0.2), Sigma: 0.5}.Quantile),
			func(s Spec) bool { return near(s.Median.Seconds(), 0.2) && near(s.Sigma, 0.5) }},
		{"gamma", draw(distuv.Gamma{Alpha: 3, Beta: 3 / 0.15}.Quantile),
			func(s Spec) bool { return near(s.Mean.Seconds(), 0.15) && near(s.Shape, 3) }},
		{"weibull", draw(distuv.Weibull{K: 1.5, Lambda: 0.3}.Quantile),
			func(s Spec) bool { return near(s.Scale.Seconds(), 0.3) && near(s.Shape, 1.5) }},
		{"exponential", draw(distuv.Exponential{Rate: 1 / 0.08}.Quantile),
			func(s Spec) bool { return near(s.Mean.Seconds(), 0.08) }},
	}
	for _, c := range cases {
		fits, err := FitLatency(c.samples)
		if err != nil {
			t.Fatal(err)
		}
		// The exponential is a gamma and a Weibull of shape 1: on its own
		// samples those fit as well, so it need only be about as good.
		if fits[0].Spec.Dist != c.dist {
			var ks float64
			for _, f := range fits {
				if f.Spec.Dist == c.dist {
					ks = f.KS
				}
			}
			if c.dist != "exponential" || ks > fits[0].KS+0.005 {
				t.Errorf("%s samples: best fit %s (KS %.4f, %s's %.4f)", c.dist, fits[0].Spec.Dist, fits[0].KS, c.dist, ks)
			}
		}
		for _, f := range fits {
			if f.Spec.Dist == c.dist && !c.check(f.Spec) {
				t.Errorf("%s fit %+v misses the generating parameters", c.dist, f.Spec)
			}
			if _, err := NewLatency(f.Spec); err != nil {
				t.Errorf("fitted %s does not build: %v", f.Spec.Dist, err)
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
		check func(s Spec) bool
	}{
		{"lognormal", distuv.LogNormal{Mu: math.Log(0.2), Sigma: 0.5}.Quantile,
			func(s Spec) bool { return near(s.Median.Seconds(), 0.2) && near(s.Sigma, 0.5) }},
		{"gamma", distuv.Gamma{Alpha: 3, Beta: 3 / 0.15}.Quantile,
			func(s Spec) bool { return near(s.Mean.Seconds(), 0.15) && near(s.Shape, 3) }},
		{"weibull", distuv.Weibull{K: 1.5, Lambda: 0.3}.Quantile,
			func(s Spec) bool { return near(s.Scale.Seconds(), 0.3) && near(s.Shape, 1.5) }},
		{"exponential", distuv.Exponential{Rate: 1 / 0.08}.Quantile,
			func(s Spec) bool { return near(s.Mean.Seconds(), 0.08) }},
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
			if f.Spec.Dist != c.dist {
				continue
			}
			if !c.check(f.Spec) || f.QuantileErr > 0.002 {
				t.Errorf("%s percentiles: fit %+v, quantile error %.4f", c.dist, f.Spec, f.QuantileErr)
			}
			// The exponential nests in the gamma and the Weibull: they tie.
			if rank > 0 && fits[0].QuantileErr < f.QuantileErr-0.002 {
				t.Errorf("%s percentiles: ranked %d behind %s", c.dist, rank, fits[0].Spec.Dist)
			}
			if _, err := NewLatency(f.Spec); err != nil {
				t.Errorf("fitted %s does not build: %v", f.Spec.Dist, err)
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
