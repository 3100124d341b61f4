package planning

import (
	"fmt"
	"math"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// Cost is what a plan spent, beside what an exhaustive plan would have:
// plan.json's "cost". The wall time is printed on stderr, never in an
// output: a plan's outputs are the same bytes on any machine.
type Cost struct {
	// Runs are the simulations the plan ran: every point's replications
	// (twice for a point run again on a longer horizon) and the
	// recommendation's robustness check.
	Runs int `json:"runs"`
	// RunsFull are the runs a full grid of every replication would have
	// taken: the grid's points (a search's: every value of its range at
	// its tolerance) × the replications, with the same horizon reruns and
	// robustness check.
	RunsFull int `json:"runs_full"`
	// Requests is how many requests those runs simulated.
	Requests int64 `json:"requests"`
	// gridPoints are the points of the full grid, kept between tallies.
	gridPoints int
}

// tally counts what a point's replications cost into p.
func (p *Point) tally(rs []*metrics.Results) {
	p.Runs += len(rs)
	for _, r := range rs {
		p.Requests += r.Requests.Arrived
	}
}

// Tally sets res.Cost from its points and its robustness check; full is
// the points a full grid holds (0: as tallied before, else the points
// run). The runs a full grid would take count what the plan would have
// run besides: points run again on a longer horizon, and the robustness
// check.
func (res *Result) Tally(full int) {
	c := &Cost{}
	reps := max(1, res.Replications)
	if u := res.Uncertain; u != nil {
		reps *= max(1, len(u.Draws)) // each point runs its replications in each draw
	}
	if res.Cost != nil {
		c.gridPoints = res.Cost.gridPoints
	}
	if full > 0 {
		c.gridPoints = full
	}
	if c.gridPoints == 0 {
		c.gridPoints = len(res.Points)
	}
	extra := 0 // runs a full grid would make besides its points' replications
	for _, p := range res.Points {
		c.Runs += p.Runs
		c.Requests += p.Requests
		switch {
		case res.Uncertain != nil:
			extra += max(0, p.Runs-reps) // a horizon run again, longer
		case p.Horizon != nil && p.Horizon.Lengthened > 0:
			// Every replication again, longer, whatever a sequential
			// plan cut short.
			extra += reps
		}
	}
	if rb := res.Robustness; rb != nil {
		c.Runs += rb.Runs
		c.Requests += rb.Requests
		extra += rb.Runs
	}
	c.RunsFull = c.gridPoints*reps + extra
	res.Cost = c
}

// gridSize is how many values a bisection's range holds at its tolerance:
// the points a grid over it would run.
func (b Bisection) gridSize() int {
	if !(b.Tolerance > 0) || b.High < b.Low {
		return 0
	}
	return int(math.Floor((b.High-b.Low)/b.Tolerance+1e-9)) + 1
}

// CostLine says what the plan spent: "cost: 13 runs of a full grid's 105
// (12.4%), 310,795 requests simulated". The wall time is not in it: the
// plan's outputs are the same bytes for the same plan on any machine.
func (c *Cost) CostLine() string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("cost: %s runs of a full grid's %s", report.Grouped(int64(c.Runs)), report.Grouped(int64(c.RunsFull)))
	if c.RunsFull > 0 {
		s += fmt.Sprintf(" (%s)", report.Share(float64(c.Runs)/float64(c.RunsFull)))
	}
	return s + fmt.Sprintf(", %s requests simulated", report.Grouped(c.Requests))
}
