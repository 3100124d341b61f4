package upstream

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
)

// TestLatenciesDrawnAheadAreTheSame runs one server with its latencies
// drawn ahead and one drawing them in place, on the same stream, over
// enough answers to cross several batches, and holds every answer to be
// the same; a server asked twice, or one with a latency_schedule, is not
// drawn ahead.
func TestLatenciesDrawnAheadAreTheSame(t *testing.T) {
	cfg := Config{Host: "api", Latency: LogNormal{Median: 200 * time.Millisecond, Sigma: 0.5}}
	in, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := ahead.NewDrawer()
	defer d.Close()
	if !drawn.DrawAhead(d) {
		t.Fatal("a server with one latency is not drawn ahead")
	}
	if drawn.DrawAhead(d) {
		t.Fatal("a server drawn ahead was drawn ahead again: two drawers on one stream")
	}
	for i := range 3 * ahead.BatchSize {
		now := time.Duration(i) * time.Millisecond
		if a, b := in.Start(now, 1), drawn.Start(now, 1); a != b {
			t.Fatalf("answer %d: %+v in place, %+v drawn ahead", i, a, b)
		}
	}
	cfg.LatencySchedule = []LatencyStep{{At: time.Second, Latency: Constant{Value: time.Millisecond}}}
	scheduled, err := NewServer(cfg, rand.New(rand.NewPCG(1, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if scheduled.DrawAhead(d) {
		t.Fatal("a server whose latency changes in the run was drawn ahead")
	}
}
