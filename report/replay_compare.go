package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// ReplayRun is one configuration replayed on a log.
type ReplayRun struct {
	Name   string            `json:"name"`
	Replay *ReplayComparison `json:"-"`
}

// ReplayVerdict judges a configuration against the first on the same
// log: each figure lower is better (failures, the p99 delay, the
// upstream's refusals), exactly, the arrivals and latencies being the
// same.
type ReplayVerdict struct {
	Name    string `json:"name"`
	Against string `json:"against"`
	// Verdict is better (no figure worse, one better), worse (no figure
	// better, one worse), mixed or same.
	Verdict string `json:"verdict"`
	// Failures are rejected + throttled + other_failures of the total row.
	Failures     int64   `json:"failures"`
	FailuresDiff int64   `json:"failures_diff"`
	DelayP99S    float64 `json:"delay_p99_s"`
	DelayP99Diff float64 `json:"delay_p99_diff_s"`
	Refusals     int64   `json:"upstream_refusals"`
	RefusalsDiff int64   `json:"upstream_refusals_diff"`
}

// failures is what did not succeed in a replay's total.
func failures(r *ReplayRow) int64 { return r.Rejected + r.Throttled + r.OtherFailure }

// ReplayVerdicts judges every run after the first against it.
func ReplayVerdicts(runs []ReplayRun) []ReplayVerdict {
	if len(runs) < 2 {
		return nil
	}
	base := &runs[0].Replay.Total
	var out []ReplayVerdict
	for _, run := range runs[1:] {
		t := &run.Replay.Total
		v := ReplayVerdict{Name: run.Name, Against: runs[0].Name, Failures: failures(t), FailuresDiff: failures(t) - failures(base),
			DelayP99S: t.DelayP99S, DelayP99Diff: t.DelayP99S - base.DelayP99S, Refusals: t.Refusals, RefusalsDiff: t.Refusals - base.Refusals}
		better, worse := 0, 0
		for _, d := range []float64{float64(v.FailuresDiff), v.DelayP99Diff, float64(v.RefusalsDiff)} {
			switch {
			case d < 0:
				better++
			case d > 0:
				worse++
			}
		}
		switch {
		case better > 0 && worse == 0:
			v.Verdict = "better"
		case worse > 0 && better == 0:
			v.Verdict = "worse"
		case better > 0:
			v.Verdict = "mixed"
		default:
			v.Verdict = "same"
		}
		out = append(out, v)
	}
	return out
}

// WriteReplayCompare writes the configurations' totals side by side and
// each later one's verdict against the first.
func WriteReplayCompare(w io.Writer, runs []ReplayRun) error {
	fmt.Fprintf(w, "\nthe same log through %d configurations (the same arrivals and latencies):\n", len(runs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tdelayed\tdelay p50\tdelay p99\trejected\tupstream 429\tfailures\tavoided\tverdict\t")
	verdicts := ReplayVerdicts(runs)
	for i, run := range runs {
		t := &run.Replay.Total
		verdict := "(baseline)"
		if i > 0 {
			verdict = verdicts[i-1].Verdict
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%+d\t%s\t\n", run.Name, Grouped(t.Delayed), secs(t.DelayP50S), secs(t.DelayP99S),
			Grouped(t.Rejected), Grouped(t.Refusals), Grouped(failures(t)), t.Avoided, verdict)
	}
	return tw.Flush()
}
