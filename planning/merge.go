package planning

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// Merge checks that parts are the shards of one plan, each complete and
// each point present once, and recomputes the recommendation over all of
// them: exactly what one run of the whole plan gives. The parts of a
// round of a refined plan carry the rounds before too; their merge is
// the state of the next round, or the refined plan (mergeRound).
func Merge(parts []*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no parts to merge")
	}
	first := parts[0]
	if first.Shard == "" {
		return nil, fmt.Errorf("part 1 is not a shard of a plan (no \"shard\")")
	}
	if first.GridPoints < 1 {
		return nil, fmt.Errorf("part 1 (shard %s) has grid_points %d: not a part of a plan", first.Shard, first.GridPoints)
	}
	if err := checkShards(parts); err != nil {
		return nil, err
	}
	refined := first.Refined != nil
	seen := map[int]bool{}
	// The fingerprint goes on with the merge: plan --from-merged checks
	// it is of the plan it finishes or goes on with.
	merged := &Result{Scenario: first.Scenario, Complete: true, Keys: first.Keys, Objective: first.Objective,
		Constraints: first.Constraints, AllowFindings: first.AllowFindings, Replications: first.Replications, Fingerprint: first.Fingerprint}
	for i, p := range parts {
		if !p.Complete {
			return nil, fmt.Errorf("part %d (shard %s) is incomplete: it was stopped before all its points ran; resume that shard from its -o folder (limitsim plan --resume DIR), or run it again", i+1, p.Shard)
		}
		if p.Scenario != first.Scenario || !slices.Equal(p.Keys, first.Keys) || p.Objective != first.Objective || p.AllowFindings != first.AllowFindings ||
			!slices.Equal(p.Constraints, first.Constraints) || p.Replications != first.Replications || p.GridPoints != first.GridPoints {
			return nil, fmt.Errorf("part %d (shard %s) belongs to another plan than part 1", i+1, p.Shard)
		}
		if p.Fingerprint != first.Fingerprint {
			return nil, fmt.Errorf("part %d (shard %s) belongs to another plan than part 1: the scenario as run (with --set) or the swept values differ (fingerprint %s, not %s)",
				i+1, p.Shard, p.Fingerprint, first.Fingerprint)
		}
		if err := sameRound(first, p, i); err != nil {
			return nil, err
		}
		for _, pt := range p.Points {
			if pt.Index < 0 || pt.Index >= first.GridPoints || (seen[pt.Index] && !refined) {
				return nil, fmt.Errorf("part %d: point %d is out of the grid or given twice", i+1, pt.Index)
			}
			if seen[pt.Index] { // a point of the rounds before, which every part carries
				if err := samePoint(merged.Points, pt, i); err != nil {
					return nil, err
				}
				continue
			}
			seen[pt.Index] = true
			merged.Points = append(merged.Points, pt)
		}
	}
	if !refined && len(seen) != first.GridPoints {
		return nil, fmt.Errorf("the parts hold %d of the grid's %d points: a shard is missing", len(seen), first.GridPoints)
	}
	sort.Slice(merged.Points, func(a, b int) bool { return merged.Points[a].Index < merged.Points[b].Index })
	o, err := ParseObjective(first.Objective)
	if err != nil {
		return nil, err
	}
	var cons []metrics.Assertion
	for _, c := range first.Constraints {
		a, err := metrics.ParseAssertion(c)
		if err != nil {
			return nil, err
		}
		cons = append(cons, a)
	}
	if refined {
		return mergeRound(merged, first, o, cons)
	}
	Recommend(merged, o, cons)
	merged.Warnings = append(horizonWarnings(merged.Points), edgeWarnings(merged)...)
	merged.Tally(first.GridPoints)
	return merged, nil
}

// checkShards checks that the parts are shards 0 to n−1 of n, each once.
func checkShards(parts []*Result) error {
	shards := map[int]bool{}
	n := 0
	for i, p := range parts {
		if strings.HasPrefix(p.Shard, "/") { // a part names its index; JOB_COMPLETION_INDEX is read when it runs
			return fmt.Errorf("part %d: shard %q has no index", i+1, p.Shard)
		}
		k, of, err := ParseShard(p.Shard, "")
		if err != nil || of < 2 {
			return fmt.Errorf("part %d: shard %q is not i/n with 0 ≤ i < n and n ≥ 2", i+1, p.Shard)
		}
		if n == 0 {
			n = of
		}
		if of != n || shards[k] {
			return fmt.Errorf("part %d (shard %s): the parts are not shards 0 to %d of %d, each once", i+1, p.Shard, n-1, n)
		}
		shards[k] = true
	}
	return nil
}

// FromMergedGrid is the plan of spec over grid from the points of its
// shards, merged (state, by grid index): the result a run of the whole
// grid gives before its recommendation is checked, running no point. A
// recommended point that ran again on a longer horizon runs its first
// run once more, for that horizon's overrides, which a merge does not
// carry.
func FromMergedGrid(spec Spec, grid [][]float64, state map[int]Point) (*Result, error) {
	res := newResult(spec)
	res.Points = make([]Point, 0, len(grid))
	for f := range grid {
		p, ok := state[f]
		if !ok {
			return nil, fmt.Errorf("point %d of the grid is missing: merge every shard's part", f)
		}
		if !equalParams(p.Params, pointParams(spec.Sweeps, grid[f])) {
			return nil, fmt.Errorf("point %d is not the grid's point %d: another plan's", f, f)
		}
		res.Points = append(res.Points, p)
	}
	if len(state) != len(grid) {
		return nil, fmt.Errorf("%d points, not the grid's %d: another plan's", len(state), len(grid))
	}
	res.Warnings = horizonWarnings(res.Points)
	Recommend(res, spec.Objective, spec.Constraints)
	res.Warnings = append(res.Warnings, edgeWarnings(res)...)
	res.Tally(len(grid))
	if res.Recommended != nil {
		if err := restoreLonger(spec, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}
