package planning

import (
	"fmt"
	"maps"
	"slices"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/scenarios"
)

// A refined plan shards round by round. Each round of a refinement is a
// grid of its own: every shard follows the rounds before (the state,
// merged from their parts) to the same next round, runs its share of it
// (the round's points whose position in it is its index modulo the
// shards) and prints a part; Merge joins a round's parts into the state
// of the next. Since Refine decides from the points' outcomes alone, and
// a point's outcome does not depend on where it ran, the rounds, and the
// plan, are those of the refined plan run whole.

// RunRefined runs a refined plan of grid (Refine): each round's points on
// spec.Workers goroutines, the round's decisions taken after it in grid
// order, so the result does not depend on the number of workers. Every
// point runs as Run runs it (the same seeds), and the recommendation is
// Recommend's over the points run; the cost's full grid is grid. A plan
// interrupted keeps the points that finished and recommends nothing.
func RunRefined(spec Spec, grid [][]float64) *Result {
	res, _ := RunRefinedFrom(spec, grid, nil) // no state: nothing to refuse
	return res
}

// RunRefinedFrom is RunRefined taking the points of state (by grid index,
// from a merged round of a sharded refined plan) as run. With spec.Parts
// above 1 it runs the shard's share of the first round with a point not
// in state and stops there: the result is a part for Merge, holding the
// state's points and its own. It refuses a state that is not of a
// refinement of grid.
func RunRefinedFrom(spec Spec, grid [][]float64, state map[int]Point) (*Result, error) {
	for f, p := range state {
		if f < 0 || f >= len(grid) || !equalParams(p.Params, pointParams(spec.Sweeps, grid[f])) {
			return nil, fmt.Errorf("point %d of the rounds so far is not the grid's point %d: another plan's", f, f)
		}
	}
	res := newResult(spec)
	sizes := make([]int, len(spec.Sweeps))
	for k, sw := range spec.Sweeps {
		sizes[k] = len(sw.Values)
	}
	points, asked := maps.Clone(state), map[int]bool{}
	if points == nil {
		points = map[int]Point{}
	}
	sharded, interrupted := spec.Parts > 1, false
	_, rounds, complete := Refine(sizes, spec.Objective.Better, func(round []int) ([]Outcome, bool) {
		var todo []int
		missing := false
		for k, f := range round {
			asked[f] = true
			if _, ok := points[f]; !ok {
				missing = true
				if !sharded || k%spec.Parts == spec.Part {
					todo = append(todo, f)
				}
			}
		}
		if interrupted = !runRound(spec, grid, todo, points); interrupted || (sharded && missing) {
			return nil, false
		}
		outs := make([]Outcome, len(round))
		for k, f := range round {
			outs[k] = Outcome{Feasible: points[f].Feasible, Objective: objectiveValue(points[f], spec.Objective)}
		}
		return outs, true
	})
	for f := range state {
		if !asked[f] {
			return nil, fmt.Errorf("point %d of the rounds so far is in no round of this refinement: another plan's", f)
		}
	}
	res.Points = []Point{}
	for _, f := range slices.Sorted(maps.Keys(points)) {
		res.Points = append(res.Points, points[f])
	}
	res.Refined = &Refined{Points: len(res.Points), GridPoints: len(grid), Rounds: rounds, Sizes: sizes}
	res.Warnings = horizonWarnings(res.Points)
	if sharded {
		res.Complete = !interrupted
		res.Shard, res.GridPoints = fmt.Sprintf("%d/%d", spec.Part, spec.Parts), len(grid)
		res.Tally(len(grid))
		return res, nil
	}
	res.Complete = complete
	Recommend(res, spec.Objective, spec.Constraints)
	res.Warnings = append(res.Warnings, edgeWarnings(res)...)
	res.Tally(len(grid))
	if res.Recommended != nil {
		return res, restoreLonger(spec, res)
	}
	return res, nil
}

// runRound runs the points todo (flat grid indices) on spec.Workers,
// each point's replications on the workers left, and keeps those that
// finished in points. It reports false when the plan was interrupted.
func runRound(spec Spec, grid [][]float64, todo []int, points map[int]Point) bool {
	if len(todo) == 0 {
		return !spec.interrupted()
	}
	s := spec
	s.ReplicationWorkers = max(1, spec.Workers/len(todo))
	got, done := make([]Point, len(todo)), make([]bool, len(todo))
	par.Run(len(todo), spec.Workers, func(k int) bool {
		got[k] = runPoint(s, grid[todo[k]])
		got[k].Index = todo[k]
		done[k] = !spec.interrupted()
		if spec.Progress != nil {
			spec.Progress()
		}
		return !done[k]
	})
	ok := true
	for k, p := range got {
		if ok = ok && done[k]; done[k] {
			points[todo[k]] = p
		}
	}
	return ok
}

// pointParams are the swept keys' values at point.
func pointParams(sweeps []Sweep, point []float64) map[string]float64 {
	params := map[string]float64{}
	for i, sw := range sweeps {
		params[sw.Key] = point[i]
	}
	return params
}

// restoreLonger gives the recommended point, when it came from the state
// and was run again on a longer horizon, the overrides of that horizon,
// which its JSON does not carry and the robustness check runs with: its
// first run, again, says what they were.
func restoreLonger(spec Spec, res *Result) error {
	at := slices.IndexFunc(res.Points, func(p Point) bool { return equalParams(p.Params, res.Recommended) })
	return restorePointLonger(spec, &res.Points[at])
}

// restorePointLonger gives p, when it was run again on a longer horizon
// and came from a state that does not carry that horizon's overrides,
// those overrides: its first run, again, says what they were.
func restorePointLonger(spec Spec, p *Point) error {
	if p.Horizon == nil || p.Horizon.Lengthened == 0 || p.longer != nil {
		return nil
	}
	overrides := make([]scenarios.Override, 0, len(spec.Sweeps))
	for _, sw := range spec.Sweeps {
		overrides = append(overrides, scenarios.Override{Key: sw.Key, Value: p.Params[sw.Key], Flag: sw.Flag})
	}
	sc, err := spec.Source.Load(overrides...)
	if err != nil {
		return err
	}
	r, err := spec.Source.Simulate(overrides, 0, spec.Interrupt)
	if err != nil && spec.interrupted() {
		return nil // the robustness check finds the plan stopped
	}
	if err != nil {
		return fmt.Errorf("the horizon of %s: %w", ParamsText(p.Params), err)
	}
	h := HorizonOf(sc, r)
	if p.longer, _, _ = lengthened(sc, r, &h); p.longer == nil {
		return fmt.Errorf("the horizon of %s: its first run no longer needs lengthening", ParamsText(p.Params))
	}
	return nil
}
