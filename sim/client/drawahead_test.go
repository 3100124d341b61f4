package client

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
)

// TestExpectedArrivals holds the estimate that decides whether a run
// draws ahead: run.requests, cut by run.duration at the workload's
// highest rate (a ramp's end rate when it is the higher), and unbounded
// when neither limits the run.
func TestExpectedArrivals(t *testing.T) {
	cases := []struct {
		name     string
		requests int64
		duration time.Duration
		spec     arrivals.Spec
		want     float64
	}{
		{"requests", 1_000_000, 0, arrivals.Spec{Rate: 150}, 1_000_000},
		{"duration", 0, 10 * time.Second, arrivals.Spec{Rate: 150}, 1_500},
		{"duration first", 1_000_000, 10 * time.Second, arrivals.Spec{Rate: 150}, 1_500},
		{"requests first", 1_000, 10 * time.Second, arrivals.Spec{Rate: 150}, 1_000},
		{"ramp up", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 2_000}, 200_000},
		{"ramp down", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 2_000, RateTo: 10}, 200_000},
		{"unbounded", 0, 0, arrivals.Spec{Rate: 150}, math.Inf(1)},
	}
	for _, c := range cases {
		cfg := &Config{}
		cfg.Run.Requests, cfg.Run.Duration, cfg.Workload.Arrivals = c.requests, c.duration, c.spec
		if got := expectedArrivals(cfg); got != c.want {
			t.Errorf("%s: %v arrivals expected, want %v", c.name, got, c.want)
		}
	}
}
