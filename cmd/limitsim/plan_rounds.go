package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/limitsim/limitsim/planning"
)

// runRefined runs a refined plan, or a shard's part of its next round:
// from the start, or (--from-merged) from the rounds merged in o.fromMerged, which
// must be of this plan (fp is its fingerprint).
func runRefined(o *planOptions, spec planning.Spec, grid [][]float64, fp string) (*planning.Result, error) {
	if o.fromMerged == "" {
		return planning.RunRefined(spec, grid), nil
	}
	state, err := readRounds(o.fromMerged, spec, len(grid), fp, true)
	if err != nil {
		return nil, invalidInput(fmt.Errorf("limitsim plan: --from-merged %s: %w", o.fromMerged, err))
	}
	res, err := planning.RunRefinedFrom(spec, grid, state)
	if err != nil {
		return nil, invalidInput(fmt.Errorf("limitsim plan: --from-merged %s: %w", o.fromMerged, err))
	}
	return res, nil
}

// fromMergedGrid is the grid plan merged from its shards' parts in
// o.fromMerged, which must be of this plan (fp is its fingerprint).
func fromMergedGrid(o *planOptions, spec planning.Spec, grid [][]float64, fp string) (*planning.Result, error) {
	state, err := readRounds(o.fromMerged, spec, len(grid), fp, false)
	if err == nil {
		var res *planning.Result
		if res, err = planning.FromMergedGrid(spec, grid, state); err == nil {
			return res, nil
		}
	}
	return nil, invalidInput(fmt.Errorf("limitsim plan: --from-merged %s: %w", o.fromMerged, err))
}

// readRounds reads a merged plan (refined: a merged round of a sharded
// refined plan; else a merged grid) and checks it is of the plan of spec:
// its points by grid index.
func readRounds(path string, spec planning.Spec, gridPoints int, fp string, refined bool) (map[int]planning.Point, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st planning.Result
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	keys := make([]string, len(spec.Sweeps))
	for i, sw := range spec.Sweeps {
		keys[i] = sw.Key
	}
	cons := make([]string, len(spec.Constraints))
	for i, c := range spec.Constraints {
		cons[i] = c.Text
	}
	switch {
	case st.Shard != "":
		return nil, fmt.Errorf("it is shard %s's part: merge the parts with 'limitsim merge' and go on from that", st.Shard)
	case refined && (st.Refined == nil || st.Fingerprint == ""):
		return nil, fmt.Errorf("not a merged round of a sharded refined plan (no \"refined\" or no \"fingerprint\")")
	case !refined && st.Refined != nil:
		return nil, fmt.Errorf("the rounds of a refined plan: give --refine to go on with them")
	case !refined && st.Fingerprint == "":
		return nil, fmt.Errorf("not the merge of a sharded plan's parts (no \"fingerprint\"): 'limitsim merge' writes it")
	case !refined && !st.Complete:
		return nil, fmt.Errorf("an incomplete plan: merge every shard's complete part")
	case st.Fingerprint != fp || !slices.Equal(st.Keys, keys) || st.Objective != spec.Objective.String() || !slices.Equal(st.Constraints, cons) ||
		st.Replications != max(1, spec.Replications) || st.AllowFindings != spec.AllowFindings || (refined && st.Refined.GridPoints != gridPoints):
		what := "the merge of another plan"
		if refined {
			what = "the rounds of another plan"
		}
		return nil, fmt.Errorf("%s: the scenario as run (with --set), the sweeps, objective, constraints or replications differ", what)
	}
	state := map[int]planning.Point{}
	for _, p := range st.Points {
		if _, twice := state[p.Index]; twice {
			return nil, fmt.Errorf("point %d is given twice", p.Index)
		}
		state[p.Index] = p
	}
	return state, nil
}
