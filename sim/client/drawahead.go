package client

import (
	"math"
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
	"github.com/limitsim/limitsim/models/arrivals"
)

// drawnAhead is the pipeline's part that has variates drawn on a spare
// processor (package ahead): the workload process's exponentials and the
// servers' latencies, each stream read there alone and in the same order,
// so the run is the same with it or without.
type drawnAhead struct {
	drawer *ahead.Drawer // nil: every draw is made where it is used
	// expArrivals is the workload's process when it draws one exponential
	// an arrival, with gaps the exponentials drawn ahead for it.
	expArrivals arrivals.ExpDriven
	gaps        *ahead.Stream
}

// drawAheadFrom is the fewest arrivals a run must expect for its draws to
// be made ahead: below, starting the goroutine and waking it for its
// first batches costs more than the draws. Measured on the reference
// model against drawing in place: 20,000 requests took 1.6 times as
// long, 200,000 0.94 times, 10^6 0.87 times.
const drawAheadFrom = 100_000

// startDrawingAhead starts drawing ahead: the workload's arrivals when
// its process allows, then the servers' latencies in host order, as many
// as one drawer serves. It returns how many streams are drawn ahead.
func (p *pipeline) startDrawingAhead() int {
	d := ahead.NewDrawer()
	p.drawer = d
	streams := 0
	if e, ok := p.arrivals.(arrivals.ExpDriven); ok && p.recorded == nil {
		rng := p.arrivalRand
		if st, err := d.Stream(func() uint64 { return math.Float64bits(rng.ExpFloat64()) }); err == nil {
			p.expArrivals, p.gaps = e, st
			streams++
		}
	}
	for _, s := range p.servers {
		if s.DrawAhead(d) {
			streams++
		}
	}
	return streams
}

// expectedArrivals is about how many arrivals a replication of cfg brings:
// run.requests, or fewer when run.duration at the workload's highest rate
// ends it first, or when a trace held in memory has fewer.
func expectedArrivals(cfg *Config) float64 {
	n := math.Inf(1)
	if cfg.Run.Requests > 0 {
		n = float64(cfg.Run.Requests)
	}
	if a := cfg.Workload.Arrivals; a.Kind == arrivals.KindTrace && a.Source == nil {
		n = min(n, float64(len(a.Times)))
	}
	if d := cfg.Run.Duration; d > 0 {
		a := cfg.Workload.Arrivals
		n = min(n, max(a.Rate, a.RateTo)*d.Seconds())
	}
	return n
}

// nextArrival is the workload process's next arrival after prev.
func (p *pipeline) nextArrival(prev time.Duration) (time.Duration, bool) {
	if p.gaps != nil {
		return p.expArrivals.NextGiven(prev, math.Float64frombits(p.gaps.Next()))
	}
	return p.arrivals.Next(prev, p.arrivalRand)
}

// stopDrawing stops the drawer's goroutine, if any.
func (p *pipeline) stopDrawing() {
	if p.drawer != nil {
		p.drawer.Close()
		p.drawer = nil
	}
}
