package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// compared is one scenario's run in a comparison.
type compared struct {
	name   string
	res    *metrics.Results   // replication 0
	series *metrics.Series    // replication 0's
	reps   []*metrics.Results // every replication, in seed order
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
	Values []float64 `json:"values"` // per run: the mean over replications
	// CI95 is each value's 95% confidence half-width (with replications).
	CI95 []float64 `json:"ci95,omitempty"`
	Best string    `json:"best,omitempty"`
	// Paired compares each later run with the first, replication by
	// replication (the same seeds, so the same arrivals).
	Paired []pairedDiff `json:"paired,omitempty"`
}

// pairedDiff is a run's mean difference from the first run with its 95%
// confidence half-width; significant when the interval excludes 0.
type pairedDiff struct {
	Vs          string  `json:"vs"`
	Diff        float64 `json:"diff"`
	CI95        float64 `json:"ci95"`
	Significant bool    `json:"significant"`
}

// cmdCompare runs several scenarios on common random numbers and prints
// them side by side.
func cmdCompare(args []string, stdout, stderr io.Writer, interrupt *atomic.Bool) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, `print {"runs": [...], "differences": [...]} instead of the table`)
	reps := fs.Int("replications", 1, "runs per scenario on seeds seed, seed+1, …: means, confidence intervals and paired differences")
	outDir := fs.String("o", "", "write compare.md, compare.html and overlay charts into this `directory`")
	quiet := fs.Bool("quiet", false, "print no progress on stderr (it shows for comparisons over a second)")
	var sets overrides
	fs.Var(&sets, "set", "override a key in every scenario: `KEY=VALUE` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) < 1 || *reps < 1 || *reps > 1000 {
		fmt.Fprintln(stderr, "usage: limitsim compare SCENARIO SCENARIO [...] | SCENARIO-WITH-VARIANTS [--set KEY=VALUE ...] [--replications R] [--json] [--quiet]")
		return exitUsage
	}
	entries, err := comparedEntries(pos, sets)
	if err != nil {
		return loadError(stderr, err)
	}
	if len(entries) < 2 {
		fmt.Fprintln(stderr, "limitsim compare: give two scenarios or more, or one that declares [[variant]] blocks")
		return exitUsage
	}
	if *outDir != "" {
		if err := checkWritable(*outDir); err != nil {
			fmt.Fprintf(stderr, "limitsim: -o %s: %v\n", *outDir, err)
			return exitInvalid
		}
	}
	runs, code := runCompared(entries, *reps, *quiet, *outDir != "", stderr, interrupt)
	defer func() {
		for _, r := range runs {
			r.series.Close()
		}
	}()
	if code != exitOK {
		return code
	}
	diffs := differences(runs)
	if *outDir != "" {
		if err := writeComparisonReport(*outDir, runs, diffs); err != nil {
			fmt.Fprintf(stderr, "limitsim: -o %s: %v\n", *outDir, err)
			return exitInternal
		}
	}
	for _, r := range runs {
		if err := r.series.Err(); err != nil { // read by the diagnoses and the charts
			fmt.Fprintf(stderr, "limitsim: %s: %v\n", r.name, err)
			return exitInternal
		}
	}
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

// runCompared runs every entry reps times, with progress on stderr for
// comparisons over a second unless quiet; charted: the series will be
// charted. The replications run at once, one a processor (each on its own
// engine), and are read in order: the output is the same as one after
// another.
func runCompared(entries []entry, reps int, quiet, charted bool, stderr io.Writer, interrupt *atomic.Bool) ([]compared, int) {
	// Every configuration is built before anything runs: a problem in the
	// last one stops the comparison at once.
	cfgs := make([]*client.Config, len(entries))
	for i, e := range entries {
		cfg, err := e.sc.Build()
		if err != nil {
			return nil, loadError(stderr, err)
		}
		cfgs[i] = cfg
	}
	var prog *progress
	if !quiet {
		prog = startProgress(stderr, "compare", len(entries)*reps)
	}
	type done struct {
		out *client.Outcome
		err error
	}
	// Replication rep of entry i is job i·reps + rep. Once one fails, no
	// later job starts: the comparison stops at the first failure.
	jobs := make([]done, len(entries)*reps)
	par.Run(len(jobs), runtime.GOMAXPROCS(0), func(j int) bool {
		i, rep := j/reps, j%reps
		out, err := client.RunReplication(cfgs[i], rep, client.Options{Interrupt: interrupt, SeriesUnread: !charted})
		if err == nil {
			report.Analyze(out.Results, out.Series)
			if rep > 0 { // only the first replication's series is kept
				err = errors.Join(out.Series.Err(), out.Series.Close())
			}
		}
		jobs[j] = done{out, err}
		if prog != nil {
			prog.step()
		}
		return err != nil
	})
	if prog != nil {
		prog.finish() // before anything else is printed
	}
	var runs []compared
	for i, e := range entries {
		c := compared{name: e.name}
		for rep := range reps {
			d := jobs[i*reps+rep]
			if d.err != nil {
				fmt.Fprintf(stderr, "limitsim: %s: %v\n", e.name, d.err)
				for k := 0; k < len(jobs); k += reps { // the first replications' series
					if jobs[k].out != nil {
						jobs[k].out.Series.Close()
					}
				}
				return nil, exitInternal
			}
			c.reps = append(c.reps, d.out.Results)
			if rep == 0 {
				c.series = d.out.Series
			}
		}
		c.res = c.reps[0]
		// A later replication without a steady state is named on the
		// first, which the report shows: its zeros are in the means.
		named := false
		for k, r := range c.reps[1:] {
			if w, none := r.NoSteadyState(); none {
				c.res.Warnings = append(c.res.Warnings, metrics.ReplicationNoSteadyStateWarning(k+2, reps, w))
				named = true
			}
		}
		if named {
			report.Analyze(c.res, c.series)
		}
		runs = append(runs, c)
	}
	return runs, exitOK
}

// entry is one scenario to compare, as loaded.
type entry struct {
	name string
	sc   *scenarios.Scenario
}

// comparedEntries loads the scenarios to compare: each file given, or the
// one file given and each of its [[variant]] blocks (the base first).
func comparedEntries(args []string, sets overrides) ([]entry, error) {
	var out []entry
	ld := scenarios.NewLoader() // variants share the file's tree and data files
	for _, arg := range args {
		sc, err := loadWith(ld, arg, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, entry{sc.Name, sc})
	}
	if len(args) != 1 {
		return out, nil
	}
	for _, v := range out[0].sc.Variants {
		sc, err := loadWith(ld, args[0], append(copyOverrides(sets), v.Overrides()...))
		if err != nil {
			return nil, err
		}
		out = append(out, entry{out[0].name + "/" + v.Name, sc})
	}
	return out, nil
}

// differences reads every headline metric of every run and names the
// best (ties go to the first; none when all are equal or the metric has
// no better direction). A run with a replication that measured no steady
// state, whose figures are zeros, is never the best.
func differences(runs []compared) []difference {
	measured := make([]bool, len(runs))
	for i, r := range runs {
		measured[i] = !slices.ContainsFunc(r.reps, func(x *metrics.Results) bool { _, none := x.NoSteadyState(); return none })
	}
	var out []difference
	for _, m := range comparedMetrics() {
		d := difference{Metric: m.name}
		best := -1
		per := make([][]float64, len(runs)) // [run][replication]
		for i, r := range runs {
			for _, rep := range r.reps {
				per[i] = append(per[i], m.value(rep))
			}
			s := metrics.SpreadOf(per[i])
			v := s.Mean
			d.Values = append(d.Values, v)
			if len(r.reps) > 1 {
				d.CI95 = append(d.CI95, s.CI95)
			}
			if measured[i] && (best < 0 || (m.higher && v > d.Values[best]) || (!m.higher && v < d.Values[best])) {
				best = i
			}
		}
		if !m.neutral && best >= 0 && !allEqual(d.Values) {
			d.Best = runs[best].name
		}
		if len(runs[0].reps) > 1 {
			for j := 1; j < len(runs); j++ {
				diffs := make([]float64, len(per[j]))
				for k := range diffs {
					diffs[k] = per[j][k] - per[0][k]
				}
				s := metrics.SpreadOf(diffs)
				d.Paired = append(d.Paired, pairedDiff{Vs: runs[0].name, Diff: s.Mean, CI95: s.CI95,
					Significant: math.Abs(s.Mean) > s.CI95})
			}
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
	return printJSON(w, struct {
		Runs        []map[string]any `json:"runs"`
		Differences []difference     `json:"differences"`
	}{all, diffs})
}

// comparisonTable is the comparison as rows of text: the header (an empty
// cell, then each run), then one row per metric — its name, then each
// run's value with its confidence half-width, (≠) where it differs
// significantly from the first run, and * on the best.
func comparisonTable(runs []compared, diffs []difference) (header []string, rows [][]string) {
	header = []string{""}
	for _, r := range runs {
		header = append(header, r.name)
	}
	for i, m := range comparedMetrics() {
		row := []string{m.name}
		for j, v := range diffs[i].Values {
			cell := m.format(v)
			if len(diffs[i].CI95) > j {
				cell += " ± " + m.format(diffs[i].CI95[j])
			}
			if j > 0 && len(diffs[i].Paired) >= j && diffs[i].Paired[j-1].Significant {
				cell += " (≠)"
			}
			if diffs[i].Best != "" && runs[j].name == diffs[i].Best {
				cell += " *"
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// writeComparison prints the runs side by side, then each run's headline.
func writeComparison(w io.Writer, runs []compared, diffs []difference) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	header, rows := comparisonTable(runs, diffs)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n* best of the row; every run draws its arrivals, routing and latencies from the same named random streams\n")
	if len(runs[0].reps) > 1 {
		fmt.Fprintf(&b, "means over %d replications ± 95%% confidence; (≠): differs from %s, paired by seed, beyond its 95%% interval\n", len(runs[0].reps), runs[0].name)
	}
	for _, r := range runs {
		h := report.Headline(r.res)
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n", r.name, h[0], h[1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeComparisonReport writes the comparison report and its overlay
// charts into dir.
func writeComparisonReport(dir string, runs []compared, diffs []difference) error {
	if err := checkWritable(dir); err != nil {
		return err
	}
	var cr []report.ComparedRun
	for _, r := range runs {
		cr = append(cr, report.ComparedRun{Name: r.name, Results: r.res, Series: r.series})
	}
	header, rows := comparisonTable(runs, diffs)
	c, err := report.BuildComparison(cr, header, rows)
	if err != nil {
		return err
	}
	return c.WriteFiles(dir)
}

func allEqual(vs []float64) bool {
	for _, v := range vs {
		if v != vs[0] {
			return false
		}
	}
	return true
}
