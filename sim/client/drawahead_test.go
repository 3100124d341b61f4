package client

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/upstream"
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
		{"trace in memory", 0, 0, arrivals.Spec{Kind: arrivals.KindTrace, Times: make([]time.Duration, 5_000)}, 5_000},
		{"trace in memory, requests first", 1_000, 0, arrivals.Spec{Kind: arrivals.KindTrace, Times: make([]time.Duration, 5_000)}, 1_000},
	}
	for _, c := range cases {
		cfg := &Config{}
		cfg.Run.Requests, cfg.Run.Duration, cfg.Workload.Arrivals = c.requests, c.duration, c.spec
		if got := expectedArrivals(cfg); got != c.want {
			t.Errorf("%s: %v arrivals expected, want %v", c.name, got, c.want)
		}
	}
}

// TestWhatIsDrawnAhead holds which streams a run draws ahead: the
// workload's exponentials when its process draws one an arrival, and each
// upstream's latencies unless a latency_schedule changes them in the run
// (or the drawer is full). A regression that quietly drew everything in
// place would leave TestDrawingAheadChangesNothing with nothing to
// compare.
func TestWhatIsDrawnAhead(t *testing.T) {
	lognormal := upstream.LogNormal{Median: 200 * ms, Sigma: 0.5}
	scheduled := upstream.Config{Host: "b", Latency: lognormal,
		LatencySchedule: []upstream.LatencyStep{{At: time.Second, Latency: upstream.Constant{Value: ms}}}}
	many := make([]upstream.Config, ahead.MaxStreams+2)
	for i := range many {
		many[i] = upstream.Config{Host: fmt.Sprintf("h%d", i), Latency: lognormal}
	}
	cases := []struct {
		name      string
		spec      arrivals.Spec
		upstreams []upstream.Config
		want      int
	}{
		{"poisson, one upstream", arrivals.Spec{Rate: 150}, []upstream.Config{{Host: "a", Latency: lognormal}}, 2},
		{"on/off", arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 150, On: time.Second, Off: time.Second},
			[]upstream.Config{{Host: "a", Latency: lognormal}}, 2},
		{"ramp, a scheduled upstream", arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 100, Ramp: time.Minute},
			[]upstream.Config{{Host: "a", Latency: lognormal}, scheduled}, 2},
		{"constant", arrivals.Spec{Kind: arrivals.KindConstant, Rate: 10}, []upstream.Config{{Host: "a", Latency: lognormal}}, 1},
		{"more upstreams than streams", arrivals.Spec{Rate: 150}, many, ahead.MaxStreams},
	}
	for _, c := range cases {
		cfg := dd1(1000)
		cfg.Workload.Arrivals, cfg.Upstreams, cfg.Workload.Hosts = c.spec, c.upstreams, nil
		for _, u := range c.upstreams {
			cfg.Workload.Hosts = append(cfg.Workload.Hosts, Share{Name: u.Host, Weight: 1})
		}
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := p.startDrawingAhead()
		p.stopDrawing()
		if got != c.want {
			t.Errorf("%s: %d streams drawn ahead, want %d", c.name, got, c.want)
		}
	}
}
