package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// cmdMerge joins the parts of a sharded plan into exactly what one run of
// the whole plan prints.
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the merged plan as JSON")
	pos, err := parse(fs, args)
	if err != nil || len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: limitsim merge PART.json ... [--json]")
		return exitUsage
	}
	var parts []*planResult
	for _, p := range pos {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "limitsim merge: %v\n", err)
			return exitInvalid
		}
		var r planResult
		if err := json.Unmarshal(data, &r); err != nil {
			fmt.Fprintf(stderr, "limitsim merge: %s: %v\n", p, err)
			return exitInvalid
		}
		parts = append(parts, &r)
	}
	merged, err := mergePlans(parts)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim merge: %v\n", err)
		return exitInvalid
	}
	if *asJSON {
		err = printJSON(stdout, merged)
	} else {
		sws := make([]sweep, len(merged.Keys))
		for i, k := range merged.Keys {
			sws[i] = sweep{key: k}
		}
		err = writePlan(stdout, merged, sws)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// mergePlans checks that the parts are the shards of one plan, each point
// present once, and recomputes the recommendation over all of them.
func mergePlans(parts []*planResult) (*planResult, error) {
	first := parts[0]
	if first.Shard == "" {
		return nil, fmt.Errorf("part 1 is not a shard of a plan (no \"shard\")")
	}
	if first.GridPoints < 1 {
		return nil, fmt.Errorf("part 1 (shard %s) has grid_points %d: not a part of a plan", first.Shard, first.GridPoints)
	}
	shards := map[int]bool{}
	n := 0
	for i, p := range parts {
		if strings.HasPrefix(p.Shard, "/") { // a part names its index; JOB_COMPLETION_INDEX is read when it runs
			return nil, fmt.Errorf("part %d: shard %q has no index", i+1, p.Shard)
		}
		k, parts, err := parseShard(p.Shard)
		if err != nil || parts < 2 {
			return nil, fmt.Errorf("part %d: shard %q is not i/n with 0 ≤ i < n and n ≥ 2", i+1, p.Shard)
		}
		if n == 0 {
			n = parts
		}
		if parts != n || shards[k] {
			return nil, fmt.Errorf("part %d (shard %s): the parts are not shards 0 to %d of %d, each once", i+1, p.Shard, n-1, n)
		}
		shards[k] = true
	}
	seen := map[int]bool{}
	merged := &planResult{Scenario: first.Scenario, Keys: first.Keys, Objective: first.Objective,
		Constraints: first.Constraints, Replications: first.Replications}
	for i, p := range parts {
		if p.Scenario != first.Scenario || !slices.Equal(p.Keys, first.Keys) || p.Objective != first.Objective ||
			!slices.Equal(p.Constraints, first.Constraints) || p.Replications != first.Replications || p.GridPoints != first.GridPoints {
			return nil, fmt.Errorf("part %d (shard %s) belongs to another plan than part 1", i+1, p.Shard)
		}
		if p.Fingerprint != first.Fingerprint {
			return nil, fmt.Errorf("part %d (shard %s) belongs to another plan than part 1: the scenario as run (with --set) or the swept values differ (fingerprint %s, not %s)",
				i+1, p.Shard, p.Fingerprint, first.Fingerprint)
		}
		for _, pt := range p.Points {
			if pt.Index < 0 || pt.Index >= first.GridPoints || seen[pt.Index] {
				return nil, fmt.Errorf("part %d: point %d is out of the grid or given twice", i+1, pt.Index)
			}
			seen[pt.Index] = true
			merged.Points = append(merged.Points, pt)
		}
	}
	if len(seen) != first.GridPoints {
		return nil, fmt.Errorf("the parts hold %d of the grid's %d points: a shard is missing", len(seen), first.GridPoints)
	}
	sort.Slice(merged.Points, func(a, b int) bool { return merged.Points[a].Index < merged.Points[b].Index })
	o, err := parseObjective(first.Objective)
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
	recommend(merged, o, cons)
	return merged, nil
}
