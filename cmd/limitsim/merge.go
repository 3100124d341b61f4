package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
)

// newMergeCommand declares `limitsim merge`.
func newMergeCommand(env *environment) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "merge PART.json...",
		Short: "Merge the shards of a plan into one plan",
		Long: `Merge the parts of a plan run with --shard (each part's --json output) into
what one run of the whole plan prints, its robustness check aside (which
runs only on a whole plan). The parts of one round of a
refined plan (--refine --shard) merge into the state the next round resumes
from (plan --refine --from-merged), or, after the last round, into the refined plan.`,
		Example: "  limitsim merge part1.json part2.json --json",
		Args:    minArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdMerge(env, asJSON, args)
		},
	}
	addJSONFlag(cmd.Flags(), &asJSON, "the merged plan")
	return cmd
}

// cmdMerge joins the parts of a sharded plan into exactly what one run of
// the whole plan prints.
func cmdMerge(env *environment, asJSON bool, pos []string) error {
	stdout := env.stdout
	var parts []*planning.Result
	for _, p := range pos {
		data, err := os.ReadFile(p)
		if err != nil {
			return invalidInput(fmt.Errorf("limitsim merge: %w", err))
		}
		var r planning.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return invalidInput(fmt.Errorf("limitsim merge: %w", report.JSONError(p, data, err)))
		}
		parts = append(parts, &r)
	}
	merged, err := planning.Merge(parts)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim merge: %w", err))
	}
	if asJSON {
		err = printJSON(stdout, merged)
	} else {
		err = writePlan(stdout, merged, nil)
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}
