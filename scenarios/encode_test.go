package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// TestSpecMarshalTOML pins the inline table written for every family, so a
// resolved scenario reads back as it was run. It catches a family writing
// the wrong keys (lognormal by p50/p99 written as median/sigma, a samples
// file inlined), durations not quoted in Go syntax, floats in a lossy
// format, and mixture components not nested as inline tables.
func TestSpecMarshalTOML(t *testing.T) {
	cases := []struct {
		s    upstream.Dist
		want string
	}{
		{upstream.Constant{Value: 1500 * time.Microsecond}, `{ dist = "constant", value = "1.5ms" }`},
		{upstream.Constant{}, `{ dist = "constant", value = "0s" }`},
		{upstream.Exponential{Average: 100 * time.Millisecond}, `{ dist = "exponential", mean = "100ms" }`},
		{upstream.LogNormal{Median: 200 * time.Millisecond, Sigma: 0.5}, `{ dist = "lognormal", median = "200ms", sigma = 0.5 }`},
		{upstream.LogNormal{P50: 100 * time.Millisecond, P99: 2 * time.Second}, `{ dist = "lognormal", p50 = "100ms", p99 = "2s" }`},
		{upstream.Gamma{Average: 100 * time.Millisecond, Shape: 2}, `{ dist = "gamma", mean = "100ms", shape = 2 }`},
		{upstream.Weibull{Scale: 100 * time.Millisecond, Shape: 1.5}, `{ dist = "weibull", scale = "100ms", shape = 1.5 }`},
		{upstream.Pareto{Scale: 50 * time.Millisecond, Shape: 1.0000001}, `{ dist = "pareto", scale = "50ms", shape = 1.0000001 }`},
		{upstream.Uniform{Min: 0, Max: 90 * time.Second}, `{ dist = "uniform", min = "0s", max = "1m30s" }`},
		{upstream.Empirical{Quantiles: []upstream.Quantile{{P: 0, Value: 10 * time.Millisecond}, {P: 0.5, Value: 80 * time.Millisecond}, {P: 1, Value: 2 * time.Second}}},
			`{ dist = "empirical", quantiles = [[0, "10ms"], [0.5, "80ms"], [1, "2s"]] }`},
		{upstream.Empirical{SamplesFile: "lat.csv", Samples: []time.Duration{time.Millisecond, 2 * time.Millisecond}},
			`{ dist = "empirical", samples = "lat.csv" }`},
		{upstream.Mixture{Components: []upstream.Component{
			{Weight: 0.95, Dist: upstream.Constant{Value: 10 * time.Millisecond}},
			{Weight: 0.05, Dist: upstream.LogNormal{Median: time.Second, Sigma: 0.25}},
		}}, `{ dist = "mixture", components = [{ weight = 0.95, dist = { dist = "constant", value = "10ms" } }, { weight = 0.05, dist = { dist = "lognormal", median = "1s", sigma = 0.25 } }] }`},
	}
	for _, c := range cases {
		got, err := Latency{c.s}.MarshalTOML()
		if err != nil {
			t.Fatalf("%s: %v", upstream.Name(c.s), err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", upstream.Name(c.s), got, c.want)
		}
	}
}

// TestQuotaMarshalTOML pins the inline table of every quota kind. It catches
// a kind writing another kind's keys, the window not quoted as a Go
// duration, and a rate written in a lossy format.
func TestQuotaMarshalTOML(t *testing.T) {
	cases := []struct {
		q    upstream.Quota
		want string
	}{
		{upstream.Quota{Kind: "token_bucket", Rate: 0.5, Burst: 20}, `{ kind = "token_bucket", rate = 0.5, burst = 20 }`},
		{upstream.Quota{Kind: "token_bucket", Rate: 1e-7, Burst: 1}, `{ kind = "token_bucket", rate = 1e-07, burst = 1 }`},
		{upstream.Quota{Kind: "fixed_window", Limit: 600, Window: time.Minute}, `{ kind = "fixed_window", limit = 600, window = "1m0s" }`},
		{upstream.Quota{Kind: "sliding_window", Limit: 5, Window: 1500 * time.Millisecond}, `{ kind = "sliding_window", limit = 5, window = "1.5s" }`},
		{upstream.Quota{Kind: "concurrency", Permits: 8}, `{ kind = "concurrency", permits = 8 }`},
	}
	for _, c := range cases {
		got, err := Quota(c.q).MarshalTOML()
		if err != nil {
			t.Fatalf("%s: %v", c.q.Kind, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q.Kind, got, c.want)
		}
	}
}

// TestCostRoundTrips: every family a count takes is written with counts,
// not durations, and reads back as the same cost; a constant cost is a
// plain integer. It catches counts written as durations ("1.2µs"), a
// lognormal by p50/p99 written as median/sigma, and a family dropped.
func TestCostRoundTrips(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // the encoding, when it differs from text
	}{
		{"3", ""},
		{`{ dist = "constant", value = 40 }`, ""},
		{`{ dist = "exponential", mean = 500 }`, ""},
		{`{ dist = "lognormal", median = 1200, sigma = 0.8 }`, ""},
		{`{ dist = "lognormal", p50 = 1200, p99 = 8000 }`, ""},
		{`{ dist = "gamma", mean = 300, shape = 2.5 }`, ""},
		{`{ dist = "uniform", min = 0, max = 4096 }`, ""},
		{`{ dist = "empirical", quantiles = [[0, 50], [0.5, 400], [1, 4000]] }`, ""},
		{`{ dist = "lognormal", median = 1200.4, sigma = 0.8 }`, `{ dist = "lognormal", median = 1200, sigma = 0.8 }`},
	} {
		src := strings.Replace(minimalScenario, "cost = 1", "cost = "+c.text, 1)
		sc, err := Parse("cost.toml", []byte(src))
		if err != nil {
			t.Fatalf("cost = %s: %v", c.text, err)
		}
		got, err := sc.Workload.Cost.MarshalTOML()
		want := c.want
		if want == "" {
			want = c.text
		}
		if err != nil || string(got) != want {
			t.Errorf("cost = %s encodes as %s (%v), want %s", c.text, got, err, want)
		}
	}
}
