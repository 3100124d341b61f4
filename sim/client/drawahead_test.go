package client

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/upstream"
)

// streamedTrace is a trace read as the run goes: its length is unknown
// before the run.
type streamedTrace struct{}

func (streamedTrace) Open() (arrivals.TraceReader, error) { return nil, nil }

// TestExpectedArrivals holds the estimate that decides whether a run
// draws ahead: run.requests, cut by run.duration at the workload's
// mean rate (a ramp's integral, an on/off process's rate over its on
// time), and unbounded when neither limits the run.
func TestExpectedArrivals(t *testing.T) {
	burst := arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 5_000, On: 30 * time.Second, Off: 600 * time.Second}
	millis := make([]time.Duration, 5_000) // 0, 1, …, 4999 ms
	for i := range millis {
		millis[i] = time.Duration(i) * ms
	}
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
		// A ramp counts its rate's integral: a trapezoid, then the end rate.
		{"ramp up over the run", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 2_000, Ramp: 100 * time.Second}, 100_500},
		{"ramp down over the run", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 2_000, RateTo: 10, Ramp: 100 * time.Second}, 100_500},
		{"ramp over half the run", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 2_000, Ramp: 50 * time.Second}, 150_250},
		// Cut at 80% of the ramp: the rate reached is 1,602/s.
		{"run ends on the ramp", 0, 80 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 2_000, Ramp: 100 * time.Second}, 64_480},
		{"ramp of no length", 0, 100 * time.Second, arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 2_000}, 200_000},
		{"unbounded", 0, 0, arrivals.Spec{Rate: 150}, math.Inf(1)},
		{"trace in memory", 0, 0, arrivals.Spec{Kind: arrivals.KindTrace, Times: make([]time.Duration, 5_000)}, 5_000},
		{"trace in memory, requests first", 1_000, 0, arrivals.Spec{Kind: arrivals.KindTrace, Times: make([]time.Duration, 5_000)}, 1_000},
		// Its instants before the end: 0 to 999 ms; one at the end is not.
		{"trace in memory, duration first", 0, time.Second, arrivals.Spec{Kind: arrivals.KindTrace, Times: millis}, 1_000},
		{"streamed trace, duration", 0, time.Second, arrivals.Spec{Kind: arrivals.KindTrace, Source: streamedTrace{}}, math.Inf(1)},
		{"streamed trace, requests", 1_000, time.Second, arrivals.Spec{Kind: arrivals.KindTrace, Source: streamedTrace{}}, 1_000},
		// On a third of the time, at 150/s: 50/s over 90 s.
		{"on/off", 0, 90 * time.Second, arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 150, On: time.Second, Off: 2 * time.Second}, 4_500},
		// On four fifths of the time: 0.8 as well as a third.
		{"on/off, mostly on", 0, 10 * time.Second, arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 1_000, On: 4 * time.Second, Off: time.Second}, 8_000},
		// It starts on: a run that ends in its first burst is all on
		// (the on share would say 7,143), one that ends in an off spell
		// has had its bursts whole, one that ends in a burst part of it.
		{"on/off, ends in the first burst", 0, 30 * time.Second, burst, 150_000},
		{"on/off, ends off", 0, 100 * time.Second, burst, 150_000},
		{"on/off, ends in a later burst", 0, 650 * time.Second, burst, 250_000},
	}
	for _, c := range cases {
		cfg := &Config{}
		cfg.Run.Requests, cfg.Run.Duration, cfg.Workload.Arrivals = c.requests, c.duration, c.spec
		if got := expectedArrivals(cfg); !near(got, c.want, 1e-12) && got != c.want {
			t.Errorf("%s: %v arrivals expected, want %v", c.name, got, c.want)
		}
	}
}

// Tenants that bring their own processes add up theirs, whatever the
// workload's own spec says (it has none then).
func TestExpectedArrivalsOfTenants(t *testing.T) {
	tenants := []Tenant{
		{Share: Share{Name: "batch", Weight: 1}, Arrivals: &arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 400, On: 5 * time.Second, Off: 10 * time.Second}},
		{Share: Share{Name: "interactive", Weight: 1}, Arrivals: &arrivals.Spec{Rate: 5}},
	}
	cases := []struct {
		name     string
		requests int64
		duration time.Duration
		want     float64
	}{
		{"duration", 0, 180 * time.Second, 400.0/3*180 + 5*180}, // the fail-tenant-starvation scenario's workload
		{"requests first", 1_000, 180 * time.Second, 1_000},
		{"unbounded", 0, 0, math.Inf(1)},
	}
	for _, c := range cases {
		cfg := &Config{}
		cfg.Run.Requests, cfg.Run.Duration, cfg.Workload.Tenants = c.requests, c.duration, tenants
		if got := expectedArrivals(cfg); !near(got, c.want, 1e-12) && got != c.want {
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
	one := []upstream.Config{{Host: "a", Latency: lognormal}}
	poisson := &arrivals.Spec{Rate: 10}
	onOff := &arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 10, On: time.Second, Off: time.Second}
	constant := &arrivals.Spec{Kind: arrivals.KindConstant, Rate: 10}
	tenantCases := []struct {
		name      string
		tenants   []*arrivals.Spec
		upstreams []upstream.Config
		want      int
	}{
		{"tenants' own poisson and on/off", []*arrivals.Spec{poisson, onOff}, one, 3},
		// All or none: one tenant's constant process draws nothing.
		{"a tenant's constant process", []*arrivals.Spec{poisson, constant}, one, 1},
		// The upstream first; then the 15 streams left hold 15 tenants, not 16.
		{"tenants filling the drawer", slices.Repeat([]*arrivals.Spec{poisson}, ahead.MaxStreams-1), one, ahead.MaxStreams},
		{"more tenants than streams", slices.Repeat([]*arrivals.Spec{poisson}, ahead.MaxStreams), one, 1},
	}
	for _, c := range tenantCases {
		cfg := dd1(1000)
		cfg.Upstreams, cfg.Workload.Hosts = c.upstreams, []Share{{Name: "a", Weight: 1}}
		cfg.Workload.Tenants = nil
		for i, spec := range c.tenants {
			cfg.Workload.Tenants = append(cfg.Workload.Tenants, Tenant{Share: Share{Name: fmt.Sprintf("t%d", i), Weight: 1}, Arrivals: spec})
		}
		if got := drawnAheadOf(t, cfg); got != c.want {
			t.Errorf("%s: %d streams drawn ahead, want %d", c.name, got, c.want)
		}
	}
	for _, c := range cases {
		cfg := dd1(1000)
		cfg.Workload.Arrivals, cfg.Upstreams, cfg.Workload.Hosts = c.spec, c.upstreams, nil
		for _, u := range c.upstreams {
			cfg.Workload.Hosts = append(cfg.Workload.Hosts, Share{Name: u.Host, Weight: 1})
		}
		if got := drawnAheadOf(t, cfg); got != c.want {
			t.Errorf("%s: %d streams drawn ahead, want %d", c.name, got, c.want)
		}
	}
}

// drawnAheadOf builds cfg's pipeline and returns how many streams it draws
// ahead.
func drawnAheadOf(t *testing.T, cfg *Config) int {
	t.Helper()
	p, err := newPipeline(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stopDrawing()
	return p.startDrawingAhead()
}
