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
