package planning

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/limitsim/limitsim/report/metrics"
)

// sameRound checks that part i is of the same round of a sharded refined
// plan as the first part, or, like it, of a plan's grid.
func sameRound(first, p *Result, i int) error {
	switch {
	case (p.Refined == nil) != (first.Refined == nil):
		return fmt.Errorf("part %d (shard %s) belongs to another plan than part 1: one is refined, the other not", i+1, p.Shard)
	case p.Refined == nil:
		return nil
	case p.Refined.Rounds != first.Refined.Rounds || !slices.Equal(p.Refined.Sizes, first.Refined.Sizes):
		return fmt.Errorf("part %d (shard %s) ran round %d of a refinement, part 1 round %d: merge the parts of one round",
			i+1, p.Shard, p.Refined.Rounds, first.Refined.Rounds)
	}
	return nil
}

// samePoint checks that pt, a point of the rounds before that part i
// carries, is the point another part carried.
func samePoint(points []Point, pt Point, i int) error {
	at := slices.IndexFunc(points, func(p Point) bool { return p.Index == pt.Index })
	a, errA := json.Marshal(points[at])
	b, errB := json.Marshal(pt)
	if errA != nil || errB != nil || string(a) != string(b) {
		return fmt.Errorf("part %d: point %d differs from another part's: the parts ran from other rounds before", i+1, pt.Index)
	}
	return nil
}

// mergeRound finishes the merge of one round of a sharded refined plan:
// it follows the refinement over the points of every part. When a later
// round remains, the merge is the state it runs from (--from-merged): not
// complete, recommending nothing, with the next round's size in
// "pending". When none does, it is the refined plan, as one run of it
// prints it but for the robustness check.
func mergeRound(merged, first *Result, o Objective, cons []metrics.Assertion) (*Result, error) {
	known := map[int]Outcome{}
	for _, p := range merged.Points {
		known[p.Index] = Outcome{Feasible: p.Feasible, Objective: objectiveValue(p, o)}
	}
	sizes := first.Refined.Sizes
	grid := 1
	for _, n := range sizes {
		grid *= n
	}
	if grid != first.GridPoints {
		return nil, fmt.Errorf("part 1: sizes %v do not make its %d grid points", sizes, first.GridPoints)
	}
	rounds, pending, used := replay(sizes, o.Better, known)
	if used != len(known) {
		return nil, fmt.Errorf("the parts hold %d points no round of the refinement runs: not the parts of one refined plan", len(known)-used)
	}
	if len(pending) > 0 && rounds < first.Refined.Rounds {
		have := 0
		for _, f := range pending {
			if _, ok := known[f]; ok {
				have++
			}
		}
		return nil, fmt.Errorf("the parts hold %d of round %d's %d points: a shard is missing", have, rounds+1, len(pending))
	}
	merged.Fingerprint = first.Fingerprint
	merged.Refined = &Refined{Points: len(merged.Points), GridPoints: first.GridPoints, Rounds: rounds, Sizes: sizes}
	if len(pending) > 0 {
		merged.Complete = false
		merged.Refined.Pending = len(pending)
		Recommend(merged, o, cons) // the Pareto marks; nothing recommended
		merged.Warnings = horizonWarnings(merged.Points)
		merged.Tally(first.GridPoints)
		return merged, nil
	}
	Recommend(merged, o, cons)
	merged.Warnings = append(horizonWarnings(merged.Points), edgeWarnings(merged)...)
	merged.Tally(first.GridPoints)
	return merged, nil
}

// replay follows Refine over known outcomes: it returns the rounds whose
// points are all known, the points of the first round with one unknown
// (none when the refinement is done), and how many known points the
// rounds it followed hold.
func replay(sizes []int, better func(a, b float64) bool, known map[int]Outcome) (rounds int, pending []int, used int) {
	Refine(sizes, better, func(round []int) ([]Outcome, bool) {
		outs := make([]Outcome, len(round))
		for k, f := range round {
			o, ok := known[f]
			if !ok {
				pending = round
			}
			outs[k] = o
		}
		for _, f := range round {
			if _, ok := known[f]; ok {
				used++
			}
		}
		if pending != nil {
			return nil, false
		}
		rounds++
		return outs, true
	})
	return rounds, pending, used
}
