package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/limitsim/limitsim/planning"
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
	var parts []*planning.Result
	for _, p := range pos {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "limitsim merge: %v\n", err)
			return exitInvalid
		}
		var r planning.Result
		if err := json.Unmarshal(data, &r); err != nil {
			fmt.Fprintf(stderr, "limitsim merge: %s: %v\n", p, err)
			return exitInvalid
		}
		parts = append(parts, &r)
	}
	merged, err := planning.Merge(parts)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim merge: %v\n", err)
		return exitInvalid
	}
	if *asJSON {
		err = printJSON(stdout, merged)
	} else {
		err = writePlan(stdout, merged)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}
