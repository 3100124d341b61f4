package planning

import (
	"strings"
	"testing"
)

// A plan's cost counts every run it made (replications, a horizon run
// again longer, the robustness check) and the runs an exhaustive plan of
// the same grid would have made: the same, for a grid; a search's range
// at its tolerance, for a bisection.
func TestPlanCostTallies(t *testing.T) {
	longer := &Horizon{Lengthened: 30}
	res := &Result{Replications: 3, Points: []Point{{Runs: 3, Requests: 300}, {Runs: 6, Requests: 900, Horizon: longer}, {Runs: 3, Requests: 300}},
		Robustness: &Robustness{Runs: 6, Requests: 1200}}
	res.Tally(3)
	if c := res.Cost; c.Runs != 18 || c.RunsFull != 18 || c.Requests != 2700 {
		t.Errorf("a full grid: %+v, want 18 runs of 18 (9 + 3 rerun + 6 robustness), 2,700 requests", *c)
	}
	// Sequential replications cut the lengthened point short (one run at
	// the horizon given, one longer): an exhaustive plan still runs its
	// three replications twice.
	seq := &Result{Replications: 3, Points: []Point{{Runs: 1}, {Runs: 2, Horizon: longer}, {Runs: 3}}}
	seq.Tally(3)
	if c := seq.Cost; c.Runs != 6 || c.RunsFull != 12 {
		t.Errorf("sequential: %+v, want 6 runs of 12 (9 + 3 rerun)", *c)
	}
	// Tallied again (after the robustness check), the grid's size is kept.
	res.Robustness.Runs = 9
	res.Tally(0)
	if c := res.Cost; c.Runs != 21 || c.RunsFull != 21 {
		t.Errorf("tallied again: %+v", *c)
	}
	// A bisection of 50..150 to 1 ran 3 points of the 101 values.
	b := Bisection{Key: "k", Low: 50, High: 150, Tolerance: 1}
	if n := b.gridSize(); n != 101 {
		t.Fatalf("gridSize %d, want 101", n)
	}
	res = &Result{Replications: 1, Points: []Point{{Runs: 1}, {Runs: 1}, {Runs: 1}}}
	res.Tally(b.gridSize())
	if c := res.Cost; c.Runs != 3 || c.RunsFull != 101 {
		t.Errorf("a search: %+v, want 3 of 101", *c)
	}
	if line := res.Cost.CostLine(); !strings.Contains(line, "3 runs of a full grid's 101 (2.97%)") || strings.Contains(line, "wall") {
		t.Errorf("cost line %q", line)
	}
	if (Bisection{Low: 1, High: 0, Tolerance: 1}).gridSize() != 0 || (Bisection{Low: 0, High: 1}).gridSize() != 0 {
		t.Error("an empty range or no tolerance has no grid")
	}
}
