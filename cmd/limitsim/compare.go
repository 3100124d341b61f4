package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// compared is one scenario's run in a comparison.
type compared struct {
	name string
	res  *metrics.Results
}

// comparedMetric is one row of a comparison: how to read it from a run
// and which way is better.
type comparedMetric struct {
	name    string
	higher  bool // higher is better
	neutral bool // neither way is better: no best is marked
	value   func(r *metrics.Results) float64
	format  func(float64) string
}

// comparedMetrics are the headline rows of `limitsim compare`.
func comparedMetrics() []comparedMetric {
	rps := func(v float64) string { return fmt.Sprintf("%.4g/s", v) }
	share := func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	sec := func(v float64) string { return fmt.Sprintf("%.4gs", v) }
	return []comparedMetric{
		{"goodput_rps", true, false, func(r *metrics.Results) float64 { return r.Throughput.GoodputRPS }, rps},
		{"offered_rps", true, true, func(r *metrics.Results) float64 { return r.Throughput.OfferedRPS }, rps},
		{"rate_429", false, false, func(r *metrics.Results) float64 { return r.Rate429 }, share},
		{"succeeded", true, false, func(r *metrics.Results) float64 { return float64(r.Requests.Succeeded) }, count},
		{"failed", false, false, func(r *metrics.Results) float64 {
			q := r.Requests
			return float64(q.Throttled429 + q.Rejected + q.AcquireTimeouts + q.TimedOut + q.InProgress)
		}, count},
		{"worst_wait_p99_s", false, false, func(r *metrics.Results) float64 {
			w := 0.0
			for _, l := range r.Limiters {
				w = math.Max(w, l.WaitS.P99)
			}
			return w
		}, sec},
		{"mean_in_flight", false, true, func(r *metrics.Results) float64 { return r.InFlight.Mean }, func(v float64) string { return fmt.Sprintf("%.3g", v) }},
		{"diagnoses", false, false, func(r *metrics.Results) float64 { return float64(len(r.Diagnoses)) }, count},
	}
}

// difference is one row of a comparison in the JSON.
type difference struct {
	Metric string    `json:"metric"`
	Values []float64 `json:"values"`
	Best   string    `json:"best,omitempty"`
}

// cmdCompare runs several scenarios on common random numbers and prints
// them side by side.
func cmdCompare(args []string, stdout, stderr io.Writer, interrupt *atomic.Bool) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, `print {"runs": [...], "differences": [...]} instead of the table`)
	var sets overrides
	fs.Var(&sets, "set", "override a key in every scenario: `KEY=VALUE` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) < 2 {
		fmt.Fprintln(stderr, "usage: limitsim compare SCENARIO SCENARIO [...] [--set KEY=VALUE ...] [--json]")
		return exitUsage
	}
	var runs []compared
	for _, arg := range pos {
		sc, err := load(arg, sets)
		if err != nil {
			return loadError(stderr, err)
		}
		cfg, err := sc.Build()
		if err != nil {
			return loadError(stderr, err)
		}
		out, err := client.Run(cfg, client.Options{Interrupt: interrupt})
		if err != nil {
			fmt.Fprintf(stderr, "limitsim: %s: %v\n", arg, err)
			return exitInternal
		}
		report.Analyze(out.Results, out.Series)
		runs = append(runs, compared{name: sc.Name, res: out.Results})
	}
	diffs := differences(runs)
	if *asJSON {
		err = writeComparisonJSON(stdout, runs, diffs)
	} else {
		err = writeComparison(stdout, runs, diffs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// differences reads every headline metric of every run and names the
// best (ties go to the first; none when all are equal or the metric has
// no better direction).
func differences(runs []compared) []difference {
	var out []difference
	for _, m := range comparedMetrics() {
		d := difference{Metric: m.name}
		best := 0
		for i, r := range runs {
			v := m.value(r.res)
			d.Values = append(d.Values, v)
			if (m.higher && v > d.Values[best]) || (!m.higher && v < d.Values[best]) {
				best = i
			}
		}
		if !m.neutral && !allEqual(d.Values) {
			d.Best = runs[best].name
		}
		out = append(out, d)
	}
	return out
}

func writeComparisonJSON(w io.Writer, runs []compared, diffs []difference) error {
	var all []map[string]any
	for _, r := range runs {
		data, err := json.Marshal(r.res)
		if err != nil {
			return err
		}
		m := map[string]any{}
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		m["name"] = r.name
		all = append(all, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Runs        []map[string]any `json:"runs"`
		Differences []difference     `json:"differences"`
	}{all, diffs})
}

// writeComparison prints the runs side by side, the best value of each row
// marked with *, then each run's headline.
func writeComparison(w io.Writer, runs []compared, diffs []difference) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t", r.name)
	}
	fmt.Fprintln(tw)
	for i, m := range comparedMetrics() {
		fmt.Fprintf(tw, "%s\t", m.name)
		for j, v := range diffs[i].Values {
			mark := ""
			if diffs[i].Best != "" && runs[j].name == diffs[i].Best {
				mark = " *"
			}
			fmt.Fprintf(tw, "%s%s\t", m.format(v), mark)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n* best of the row; every run draws its arrivals, routing and latencies from the same named random streams\n")
	for _, r := range runs {
		h := report.Headline(r.res)
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n", r.name, h[0], h[1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func allEqual(vs []float64) bool {
	for _, v := range vs {
		if v != vs[0] {
			return false
		}
	}
	return true
}
