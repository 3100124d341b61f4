package metrics

import "math"

// Spread is a metric's mean over replications with a 95% confidence
// half-width (Student t).
type Spread struct {
	Mean float64 `json:"mean"`
	CI95 float64 `json:"ci95"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Replicas summarises independent replications (seeds seed, seed+1, …).
type Replicas struct {
	N          int               `json:"n"`
	GoodputRPS Spread            `json:"goodput_rps"`
	Rate429RPS Spread            `json:"rate_429_rps"`
	Succeeded  Spread            `json:"succeeded"`
	WaitP99S   map[string]Spread `json:"wait_p99_s"`
	ElapsedS   Spread            `json:"elapsed_s"`
	// StormShare is the share of the replications in a metastable failure
	// (storm.detected); absent without a trigger that ends.
	StormShare *float64 `json:"storm_share,omitempty"`
}

// tQuantile975 holds Student's t 0.975 quantiles for 1..30 degrees of
// freedom; beyond 30 the normal 1.96 is used.
var tQuantile975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// SpreadOf is the mean of xs with its 95% confidence half-width (Student
// t), minimum and maximum.
func SpreadOf(xs []float64) Spread { return spread(xs) }

func spread(xs []float64) Spread {
	n := float64(len(xs))
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x / n
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	if len(xs) < 2 {
		return s
	}
	var sumOfSquares float64
	for _, x := range xs {
		sumOfSquares += (x - s.Mean) * (x - s.Mean)
	}
	deviation := math.Sqrt(sumOfSquares / (n - 1))
	if deviation <= 1e-12*math.Abs(s.Mean) {
		// Values alike but for the sum's rounding (10 s ± 0.00000000247 µs):
		// no spread.
		deviation = 0
	}
	t := 1.96
	if degreesOfFreedom := len(xs) - 1; degreesOfFreedom <= len(tQuantile975) {
		t = tQuantile975[degreesOfFreedom-1]
	}
	s.CI95 = t * deviation / math.Sqrt(n)
	return s
}

// Summarize computes the spread of key metrics over replications.
func Summarize(replications []*Results) *Replicas {
	across := func(f func(*Results) float64) Spread {
		xs := make([]float64, len(replications))
		for i, r := range replications {
			xs[i] = f(r)
		}
		return spread(xs)
	}
	out := &Replicas{N: len(replications),
		GoodputRPS: across(func(r *Results) float64 { return r.Throughput.GoodputRPS }),
		Rate429RPS: across(func(r *Results) float64 { return r.Throughput.Rate429RPS }),
		Succeeded:  across(func(r *Results) float64 { return float64(r.Requests.Succeeded) }),
		ElapsedS:   across(func(r *Results) float64 { return r.ElapsedS }),
		WaitP99S:   map[string]Spread{},
	}
	if replications[0].Storm != nil {
		storms := 0
		for _, r := range replications {
			if r.Storm != nil && r.Storm.Detected {
				storms++
			}
		}
		share := float64(storms) / float64(len(replications))
		out.StormShare = &share
	}
	for i, l := range replications[0].Limiters {
		out.WaitP99S[l.Name] = across(func(r *Results) float64 { return r.Limiters[i].WaitS.P99 })
	}
	return out
}
