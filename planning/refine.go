package planning

import (
	"fmt"
	"slices"
)

// Refinement: a coarse grid first, then only the cells around the
// feasibility boundary and the best feasible point, down to the sweep's
// step.
//
// Each key's values are indexed 0…n−1. Round 0 takes every s-th index of
// each key and its last (s a power of two, so that a key has at most 5
// values); each round after it halves every spacing above 1 and runs the
// new grid points in the cells of the round before whose corners disagree
// on feasibility or touch the best feasible point so far (ties go to the
// first in grid order, as Recommend picks), and that may hold a point
// better than that best (promising). A cell is looked at only when
// every one of its corners has run. Every point run is a point of the
// full grid, run as the full grid runs it.
//
// When feasibility falls as every key rises and the objective rises with
// every key, or with the first and no other (the best feasible point is
// then on the boundary, or at the grid's top corner), the full grid's
// recommendation is always run: the cell holding it at each round has a
// feasible bottom corner, and its top corner is either infeasible or the
// point itself; the cell holds a point at least as good as any run, and
// earlier in grid order on a tie, so it is promising. The mirror
// (feasibility rising with the keys, the objective to minimise) holds
// alike.

// Outcome is what refinement needs of a point: whether it is feasible and
// its objective's value.
type Outcome struct {
	Feasible  bool
	Objective float64
}

// refiner holds the state of a refinement over a grid of dims values per
// key (the last key varying fastest).
type refiner struct {
	dims     []int
	spacing  []int
	better   func(a, b float64) bool
	outcomes map[int]Outcome // by flat grid index: the points run
	best     int             // flat index of the best feasible point run, or −1
}

// coarseSpacing is the smallest power of two that leaves a key of n
// values at most 5 (its last always among them).
func coarseSpacing(n int) int {
	s := 1
	for (n-1+s-1)/s > 4 {
		s *= 2
	}
	return s
}

// lattice lists the indices 0, s, 2s, … below n, and n−1.
func lattice(n, s int) []int {
	var out []int
	for i := 0; i < n-1; i += s {
		out = append(out, i)
	}
	return append(out, n-1)
}

// flat is the grid index of the per-key indices idx.
func (r *refiner) flat(idx []int) int {
	f := 0
	for k, i := range idx {
		f = f*r.dims[k] + i
	}
	return f
}

// product calls fn with every combination of one value of each list, in
// grid order (the last list varying fastest).
func product(lists [][]int, fn func(idx []int)) {
	idx := make([]int, len(lists))
	var walk func(k int)
	walk = func(k int) {
		if k == len(lists) {
			fn(idx)
			return
		}
		for _, v := range lists[k] {
			idx[k] = v
			walk(k + 1)
		}
	}
	walk(0)
}

// Refine runs a refinement over a grid of dims values per key: run is
// called once a round with the round's new points (flat grid indices, in
// grid order) and returns their outcomes in that order, or false to stop
// (the plan was interrupted). better reports whether an objective value
// is strictly better than another. Refine returns the points run, in grid
// order, the rounds run and whether it ran to its end.
func Refine(dims []int, better func(a, b float64) bool, run func(points []int) ([]Outcome, bool)) (ran []int, rounds int, complete bool) {
	r := &refiner{dims: dims, better: better, outcomes: map[int]Outcome{}, best: -1}
	lists := make([][]int, len(dims))
	for k, n := range dims {
		if n < 1 {
			return nil, 0, true
		}
		r.spacing = append(r.spacing, coarseSpacing(n))
		lists[k] = lattice(n, r.spacing[k])
	}
	var round []int
	product(lists, func(idx []int) { round = append(round, r.flat(idx)) })
	for {
		if len(round) > 0 { // a round may add nothing where its cells have no new values
			rounds++
			outs, ok := run(round)
			if !ok {
				return r.ran(), rounds, false
			}
			r.record(round, outs)
		}
		if !slices.ContainsFunc(r.spacing, func(s int) bool { return s > 1 }) {
			break
		}
		round = r.next()
	}
	return r.ran(), rounds, true
}

// record keeps a round's outcomes and the best feasible point so far.
func (r *refiner) record(round []int, outs []Outcome) {
	for i, f := range round {
		r.outcomes[f] = outs[i]
	}
	r.best = -1
	for _, f := range r.ran() {
		o := r.outcomes[f]
		if o.Feasible && (r.best < 0 || r.better(o.Objective, r.outcomes[r.best].Objective)) {
			r.best = f
		}
	}
}

// ran is the points run, in grid order.
func (r *refiner) ran() []int {
	out := make([]int, 0, len(r.outcomes))
	for f := range r.outcomes {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// next halves the spacings and lists the new points, in grid order, that
// lie in a cell of the previous spacing whose corners have all run and
// disagree on feasibility or include the best feasible point.
func (r *refiner) next() []int {
	prev := make([][]int, len(r.dims))
	cells := make([][]int, len(r.dims)) // each key's cells, by their first index in prev
	for k, n := range r.dims {
		prev[k] = lattice(n, r.spacing[k])
		r.spacing[k] = max(1, r.spacing[k]/2)
		cells[k] = []int{0}
		if len(prev[k]) > 1 {
			cells[k] = make([]int, len(prev[k])-1)
			for j := range cells[k] {
				cells[k][j] = j
			}
		}
	}
	add := map[int]bool{}
	lo, hi := make([]int, len(r.dims)), make([]int, len(r.dims))
	product(cells, func(cell []int) {
		for k, j := range cell {
			lo[k], hi[k] = prev[k][j], prev[k][min(j+1, len(prev[k])-1)]
		}
		if !r.interesting(lo, hi) {
			return
		}
		inside := make([][]int, len(r.dims))
		for k, n := range r.dims {
			for _, i := range lattice(n, r.spacing[k]) {
				if i >= lo[k] && i <= hi[k] {
					inside[k] = append(inside[k], i)
				}
			}
		}
		product(inside, func(idx []int) {
			if f := r.flat(idx); !r.has(f) {
				add[f] = true
			}
		})
	})
	out := make([]int, 0, len(add))
	for f := range add {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// has reports whether the point f has run.
func (r *refiner) has(f int) bool {
	_, ok := r.outcomes[f]
	return ok
}

// interesting reports whether the cell between the corners lo and hi has
// run at every corner, may hold a point that would beat the best feasible
// point so far (promising), and its corners disagree on feasibility or
// one is the best feasible point.
func (r *refiner) interesting(lo, hi []int) bool {
	corners := make([][]int, len(lo))
	for k := range lo {
		corners[k] = []int{lo[k]}
		if hi[k] != lo[k] {
			corners[k] = append(corners[k], hi[k])
		}
	}
	all, feasible, infeasible, best := true, false, false, false
	var values []float64
	product(corners, func(idx []int) {
		f := r.flat(idx)
		o, ok := r.outcomes[f]
		all = all && ok
		feasible = feasible || (ok && o.Feasible)
		infeasible = infeasible || (ok && !o.Feasible)
		best = best || f == r.best
		values = append(values, o.Objective)
	})
	return all && r.promising(r.flat(lo), values) && ((feasible && infeasible) || best)
}

// promising reports whether a cell whose first point (in grid order) is
// first and whose corners' objectives are values may hold a point the
// plan would recommend over the best feasible point so far. An objective
// that only rises or only falls with each key takes its extremes over a
// cell at its corners, so a cell none of whose corners beats the best
// holds no better point; a corner equal to the best may hide a point as
// good and earlier in grid order, which wins the tie.
func (r *refiner) promising(first int, values []float64) bool {
	if r.best < 0 {
		return true
	}
	top := r.outcomes[r.best].Objective
	for _, v := range values {
		if r.better(v, top) || (v == top && first < r.best) {
			return true
		}
	}
	return false
}

// Refined says how much of a grid a refined plan ran: plan.json's
// "refined".
type Refined struct {
	Points     int `json:"points"`      // the points run
	GridPoints int `json:"grid_points"` // the full grid's
	Rounds     int `json:"rounds"`      // the coarse round and the refining ones
	// Sizes are how many values each swept key has, in grid order: what
	// merge needs to follow the rounds of a sharded refined plan.
	Sizes []int `json:"sizes"`
	// Pending, in a merged round of a sharded refined plan, is how many
	// points the next round runs (with --from-merged); 0 once the refinement
	// is done.
	Pending int `json:"pending,omitempty"`
}

// Line is "refined: 23 of 105 points in 4 rounds".
func (rf *Refined) Line() string {
	if rf == nil {
		return ""
	}
	line := fmt.Sprintf("refined: %d of %d points in %d rounds", rf.Points, rf.GridPoints, rf.Rounds)
	if rf.Pending > 0 {
		line += fmt.Sprintf("; the next round runs %d more (--from-merged)", rf.Pending)
	}
	return line
}
