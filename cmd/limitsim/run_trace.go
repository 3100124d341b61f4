package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// traceOutputClash reports, before the run, a --trace file that output
// folder dir (none when "") would write over: one of the outputs of -o,
// as dataNameClash names them, or the copy of a data file of sc.
func traceOutputClash(file, dir string, sc *scenarios.Scenario) error {
	if dir == "" {
		return nil
	}
	absD, err := realPath(dir)
	if err != nil {
		return err
	}
	parent, err := realPath(filepath.Dir(file))
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(absD, filepath.Join(parent, filepath.Base(file)))
	if err != nil || !filepath.IsLocal(rel) {
		return nil // outside the folder
	}
	c := filepath.ToSlash(filepath.Clean(rel))
	if isOutputName(c) {
		return fmt.Errorf("%s is %s, an output of -o %s, which would replace the trace: choose another file", file, c, dir)
	}
	for _, p := range sc.DataFiles() {
		if filepath.ToSlash(filepath.Clean(p)) == c {
			return fmt.Errorf("%s is where -o %s copies the data file %s, which would replace the trace: choose another file", file, dir, p)
		}
	}
	// What an earlier writer left there (another scenario's data file
	// copies, its charts) is removed before this run writes its own.
	if listed, err := report.ListedOutputs(absD); err == nil && listed[c] {
		return fmt.Errorf("%s is %s, an output an earlier run wrote in -o %s (its %s lists it), which this run removes: choose another file", file, c, dir, report.OutputsManifest)
	}
	return nil
}

// noteEmptyTrace says on w why a trace holds no request, when it holds
// none: the requests it was to follow from sel.From (fromFlag: as
// --trace-from gave it, "" when not given) never came, or none of those
// it followed ended as sel.Outcomes asks. elapsedS is when the run ended.
func noteEmptyTrace(w io.Writer, sum *client.TraceSummary, sel client.TraceSelect, fromFlag string, elapsedS float64) {
	if sum == nil || sum.Written > 0 {
		return
	}
	from := "the trace's start, " + simSeconds(sel.From)
	if fromFlag != "" {
		from = "--trace-from " + strings.TrimSpace(fromFlag)
	}
	end := time.Duration(elapsedS * float64(time.Second))
	var why string
	switch {
	case sum.Followed == 0 && sel.From > end:
		why = fmt.Sprintf("the run ended at %s, before %s", simSeconds(end), from)
	case sum.Followed == 0 && sel.From > 0:
		why = fmt.Sprintf("no request arrived at or after %s (the last arrived at %s)", from, simSeconds(sum.LastArrival))
	case sum.Followed == 0:
		why = "no request arrived"
	default:
		why = fmt.Sprintf("none of the %d requests followed ended %s", sum.Followed, strings.Join(sel.Outcomes, " or "))
		if sel.From > 0 {
			why = fmt.Sprintf("none of the %d requests followed from %s ended %s", sum.Followed, from, strings.Join(sel.Outcomes, " or "))
		}
		if sum.Unfinished > 0 {
			why += fmt.Sprintf(" (%d were still in progress when the run stopped, with no outcome)", sum.Unfinished)
		}
	}
	fmt.Fprintf(w, "limitsim: --trace: no request matched, so the trace holds none: %s\n", why)
}

// simSeconds writes d as seconds to the millisecond ("66.913s").
func simSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}

// isOutputName reports whether c, a clean slash-separated path inside an
// output folder, names one of the files -o writes there: one of
// outputNames, or a chart (a PNG or SVG at the top).
func isOutputName(c string) bool {
	return slices.Contains(outputNames, c) || !strings.Contains(c, "/") && (strings.HasSuffix(c, ".png") || strings.HasSuffix(c, ".svg"))
}
