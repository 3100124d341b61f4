package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
)

// compareOptions are the flags of `limitsim compare`.
type compareOptions struct {
	outDir        string
	asJSON, quiet bool
	replications  int
	threshold     thresholdFlag
	sets          overrides
}

// newCompareCommand declares `limitsim compare`.
func newCompareCommand(env *environment) *cobra.Command {
	o := compareOptions{threshold: thresholdFlag(planning.DefaultThreshold)}
	cmd := &cobra.Command{
		Use:   "compare SCENARIO [SCENARIO...]",
		Short: "Compare scenarios, or one scenario's variants, on the same arrivals",
		Long: `Run scenarios (or one scenario's [[variant]] blocks) on the same arrivals and
latencies and compare them: each later one against the first, better, worse
or indistinguishable on every headline metric, from the paired confidence
interval and the --threshold.`,
		Example:           "  limitsim compare seed-crawler seed-crawler-fifo --replications 5 --threshold 2% -o cmp",
		Args:              minArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.replications < 1 || o.replications > 1000 {
				return invalidInput(fmt.Errorf("limitsim compare: --replications %d: want 1 to 1000", o.replications))
			}
			return cmdCompare(env, &o, args)
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "compare.md, compare.html and overlay charts")
	addJSONFlag(fs, &o.asJSON, `{"runs": [...], "differences": [...], "verdicts": [...], ...}`)
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "in every scenario")
	fs.IntVar(&o.replications, "replications", 1, "runs per scenario on seeds seed, seed+1, …: means, confidence intervals and paired differences")
	fs.Var(&o.threshold, "threshold", "the practical threshold: a difference within this `percentage` of the first run's mean (1%, 0.5%, or a share: 0.01) is indistinguishable")
	return cmd
}

// cmdCompare runs several scenarios on common random numbers and prints
// them side by side, with each later one's verdicts against the first.
func cmdCompare(env *environment, o *compareOptions, pos []string) error {
	stdout, stderr, st := env.stdout, env.stderr, env.session
	interrupt := &st.interrupt
	sets := o.sets
	entries, err := comparedEntries(pos, sets)
	if err != nil {
		return loadError(err)
	}
	if len(entries) < 2 {
		return badUsage(errors.New("limitsim compare: give two scenarios or more, or one that declares [[variant]] blocks"))
	}
	if o.outDir != "" {
		unlock, err := holdOutputDir(o.outDir, "compare", env.args)
		if err != nil {
			return err
		}
		defer unlock()
		if err := checkWritable(o.outDir); err != nil {
			return invalidInput(fmt.Errorf("-o %s: %w", o.outDir, err))
		}
	}
	opt := planning.CompareOptions{Replications: o.replications, Charted: o.outDir != "", Interrupt: interrupt}
	var prog *progress
	if !o.quiet {
		prog = startProgress(stderr, "compare", len(entries)*o.replications)
		opt.Step = prog.step
	}
	runs, err := planning.RunCompared(entries, opt)
	if prog != nil {
		prog.finish() // before anything else is printed
	}
	if err != nil {
		return compareFailed(err)
	}
	if interrupt.Load() {
		// Runs cut short compare nothing: no verdict, no report.
		for _, r := range runs {
			r.Series.Close()
		}
		return st.stopped(errors.New("limitsim compare: interrupted: the runs stopped early, so nothing is compared and no report is written"))
	}
	defer func() {
		for _, r := range runs {
			r.Series.Close()
		}
	}()
	c, err := planning.Compare(runs, float64(o.threshold))
	if err != nil {
		return internalError(err)
	}
	if c.Warnings, c.Unpaired, err = compareWarnings(entries, pos, o.replications); err != nil {
		return internalError(err)
	}
	return printComparison(stdout, runs, c, o.asJSON, report.Folder{Dir: o.outDir, FS: st.fsys})
}

// compareFailed is the error of err, a failure of planning.RunCompared: a
// scenario that does not build is invalid, a run that fails an internal
// error.
func compareFailed(err error) error {
	var ce *planning.CompareError
	if errors.As(err, &ce) && ce.Build {
		return loadError(ce.Err)
	}
	return internalError(err)
}

// printComparison writes the report into folder out (when it names one),
// then the table or the JSON on stdout.
func printComparison(stdout io.Writer, runs []planning.ComparedRun, c *planning.Comparison, asJSON bool, out report.Folder) error {
	if out.Dir != "" {
		if err := writeComparisonReport(out, runs, c); err != nil {
			return outputsFailed("-o "+out.Dir, out.Dir, err)
		}
	}
	for _, r := range runs {
		if err := r.Series.Err(); err != nil { // read by the diagnoses and the charts
			return internalError(fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	var err error
	if asJSON {
		err = writeComparisonJSON(stdout, runs, c)
	} else {
		err = writeComparison(stdout, runs, c)
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}

// thresholdFlag is --threshold: a percentage (1%) or a share below 1.
type thresholdFlag float64

func (t *thresholdFlag) String() string { return planning.ThresholdText(float64(*t)) }

// Type names the flag's value in help.
func (t *thresholdFlag) Type() string { return "PCT" }

// Set parses a threshold with planning.ParseThreshold.
func (t *thresholdFlag) Set(s string) error {
	v, err := planning.ParseThreshold(s)
	if err != nil {
		return err
	}
	*t = thresholdFlag(v)
	return nil
}

// comparedEntries loads the scenarios to compare: each file given, or the
// one file given and each of its [[variant]] blocks (the base first).
func comparedEntries(args []string, sets overrides) ([]planning.CompareEntry, error) {
	var out []planning.CompareEntry
	ld := scenarios.NewLoader() // variants share the file's tree and data files
	for _, arg := range args {
		sc, err := loadWith(ld, arg, sets)
		var probs scenarios.Problems
		if err != nil && len(args) > 1 && errors.As(err, &probs) {
			// An override applies to every file: say which it failed on.
			for i := range probs {
				if probs[i].File == "--set" {
					probs[i].File = "--set on " + arg
				}
			}
			return nil, probs
		}
		if err != nil {
			return nil, err
		}
		out = append(out, planning.CompareEntry{Name: sc.Name, Scenario: sc})
	}
	if len(args) != 1 {
		taken := map[string]int{}
		for i := range out { // two files may name their scenarios alike
			out[i].Name = numbered(out[i].Name, taken)
		}
		return out, nil
	}
	for _, v := range out[0].Scenario.Variants {
		sc, err := loadWith(ld, args[0], append(slices.Clone([]scenarios.Override(sets)), v.Overrides()...))
		if err != nil {
			return nil, err
		}
		out = append(out, planning.CompareEntry{Name: out[0].Name + "/" + v.Name, Scenario: sc})
	}
	return out, nil
}

// compareWarnings are what the comparison leaves out or mixes in: the
// inputs the scenarios differ in besides their policies, the variants of
// a file given among others, a file's run.replications (compare runs
// --replications).
func compareWarnings(entries []planning.CompareEntry, args []string, replications int) ([]string, bool, error) {
	warnings, unpaired, err := planning.InputDifferences(entries)
	if err != nil {
		return nil, false, err
	}
	for i, e := range entries[:len(args)] {
		if n := len(e.Scenario.Variants); n > 0 && len(args) > 1 {
			warnings = append(warnings, fmt.Sprintf("%s declares %d [[variant]] blocks, compared only when it is given alone", args[i], n))
		}
		if n := e.Scenario.Run.Replications; n > 1 && n != replications {
			warnings = append(warnings, fmt.Sprintf("%s sets run.replications = %d, which compare does not read: each runs --replications (%d)", args[i], n, replications))
		}
	}
	return warnings, unpaired, nil
}

// comparisonTable is the comparison as rows of text: the header (an empty
// cell, then each run), then one row per metric — its name, then each
// run's value with its confidence half-width, (≠) where it differs from
// the first run (significantly and beyond the threshold), and * on the
// row's best.
func comparisonTable(c *planning.Comparison) (header []string, rows [][]string) {
	header = append([]string{""}, c.Names...)
	for i, row := range c.Rows {
		cells := []string{row.Metric.Name}
		for j, v := range row.Values {
			if !row.Measures(j) && c.Measured[j] {
				cells = append(cells, "n/a") // nothing to measure it on
				continue
			}
			cell := row.Metric.Format(v)
			if len(row.CI95) > j {
				cell += " ± " + row.Metric.Format(row.CI95[j])
			}
			if c.Marked(i, j) {
				cell += " (≠)"
			}
			if row.Star == j {
				cell += " *"
			}
			cells = append(cells, cell)
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// writeComparison prints the verdicts, the runs side by side with the key
// to its marks, then each run's headline.
func writeComparison(w io.Writer, runs []planning.ComparedRun, c *planning.Comparison) error {
	var b strings.Builder
	for _, l := range c.Lines() {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	header, rows := comparisonTable(c)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, k := range c.Key() {
		b.WriteString(k + "\n")
	}
	for _, r := range runs {
		h := report.Headline(r.Results)
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n", report.HeadlineOf(r.Name, r.Results, c.Replications), h[0], h[1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeComparisonReport writes the comparison report and its overlay
// charts into dir.
func writeComparisonReport(f report.Folder, runs []planning.ComparedRun, c *planning.Comparison) error {
	var cr []report.ComparedRun
	for _, r := range runs {
		cr = append(cr, report.ComparedRun{Name: r.Name, Results: r.Results, Series: r.Series})
	}
	header, rows := comparisonTable(c)
	doc, err := report.BuildComparison(cr, header, rows)
	if err != nil {
		return err
	}
	doc.Verdicts, doc.Key, doc.Replications = c.Lines(), c.Key(), c.Replications
	// As every writer of an output folder does: the files of whatever
	// wrote the folder before (a comparison's charts, a run's outputs)
	// that this one does not write are removed, and the manifest says
	// which files are outputs.
	var written []string
	write := func() error {
		if err := doc.WriteFilesTo(f, func(n string) { written = append(written, n) }); err != nil {
			return errors.Join(err, f.Record(written))
		}
		return f.Prune(written, nil, []string{"compare.md", "compare.html"})
	}
	return writeMarked(f, false, write, "compare.md", "compare.html")
}

// writeComparisonJSON prints every run's full results, the differences as
// they have always been printed, then the verdicts.
func writeComparisonJSON(w io.Writer, runs []planning.ComparedRun, c *planning.Comparison) error {
	var all []map[string]any
	for _, r := range runs {
		data, err := json.Marshal(r.Results)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		m["name"] = r.Name
		all = append(all, m)
	}
	return printJSON(w, comparisonJSON{
		Runs: all, Differences: differencesJSON(c),
		Threshold: c.Threshold, Replications: c.Replications,
		Verdicts: verdictsJSON(c), Starred: starredJSON(c), BestOverall: bestOverallJSON(c), Warnings: c.Warnings, Unpaired: c.Unpaired,
	})
}

// comparisonJSON is what `compare --json` prints. Runs and Differences
// are as they have always been, byte for byte; the rest was added with
// the verdicts.
type comparisonJSON struct {
	Runs        []map[string]any `json:"runs"`
	Differences []difference     `json:"differences"`
	// Threshold is the practical threshold as a share (0.01 for 1%).
	Threshold    float64 `json:"threshold"`
	Replications int     `json:"replications"`
	// Verdicts holds each run after the first against the first.
	Verdicts []versusJSON `json:"verdicts"`
	// Starred maps a metric to the run marked * on its row.
	Starred     map[string]string `json:"starred"`
	BestOverall string            `json:"best_overall,omitempty"`
	// Warnings are what the runs are given differently besides their
	// policies, and what compare left out; Unpaired, that the runs'
	// seeds differ, so their replications are not paired.
	Warnings []string `json:"warnings,omitempty"`
	Unpaired bool     `json:"unpaired,omitempty"`
}

// difference is one row of `differences`: a metric over the runs. The
// rows, their order and their fields are those printed before verdicts
// existed; Best is the best mean, noise or not.
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

// differenceMetrics are the metrics of `differences`, which keeps the rows
// it has always had; the verdicts cover every headline metric.
var differenceMetrics = []string{"goodput_rps", "offered_rps", "rate_429", "succeeded", "failed", "worst_wait_p99_s", "mean_in_flight", "diagnoses"}

func differencesJSON(c *planning.Comparison) []difference {
	var out []difference
	for _, name := range differenceMetrics {
		i := slices.IndexFunc(c.Rows, func(r planning.CompareRow) bool { return r.Metric.Name == name })
		row := c.Rows[i]
		d := difference{Metric: name, Values: row.Values, CI95: row.CI95}
		if row.Best >= 0 {
			d.Best = c.Names[row.Best]
		}
		if c.Replications > 1 {
			for _, v := range c.Versus {
				p := v.Differences[i]
				d.Paired = append(d.Paired, pairedDiff{Vs: v.Baseline, Diff: p.Diff, CI95: p.CI95, Significant: p.Significant})
			}
		}
		out = append(out, d)
	}
	return out
}

// versusJSON is one run's verdicts against the first.
type versusJSON struct {
	Run     string        `json:"run"`
	Vs      string        `json:"vs"`
	Overall string        `json:"overall"`
	Line    string        `json:"line"`
	Metrics []verdictJSON `json:"metrics"`
}

// verdictJSON is one metric's paired difference and verdict. CI95 is
// absent from one replication, Relative and RelativeCI95 when the
// baseline is 0.
type verdictJSON struct {
	Metric          string   `json:"metric"`
	Better          string   `json:"better,omitempty"`
	Baseline        float64  `json:"baseline"`
	Value           float64  `json:"value"`
	Diff            float64  `json:"diff"`
	CI95            *float64 `json:"ci95,omitempty"`
	Relative        *float64 `json:"relative,omitempty"`
	RelativeCI95    *float64 `json:"relative_ci95,omitempty"`
	Significant     bool     `json:"significant"`
	BeyondThreshold bool     `json:"beyond_threshold"`
	Verdict         string   `json:"verdict"`
}

func verdictsJSON(c *planning.Comparison) []versusJSON {
	out := []versusJSON{}
	for _, v := range c.Versus {
		vj := versusJSON{Run: v.Name, Vs: v.Baseline, Overall: string(v.Overall), Line: v.Line()}
		for _, d := range v.Differences {
			m := verdictJSON{Metric: d.Metric.Name, Better: d.Metric.Better.String(), Baseline: d.Baseline, Value: d.Value,
				Diff: d.Diff, Significant: d.Significant, BeyondThreshold: d.BeyondThreshold, Verdict: string(d.Verdict)}
			if !d.OneRun() {
				m.CI95 = &d.CI95
			}
			if rel, ci, ok := d.Relative(); ok {
				m.Relative = &rel
				if !d.OneRun() {
					m.RelativeCI95 = &ci
				}
			}
			vj.Metrics = append(vj.Metrics, m)
		}
		out = append(out, vj)
	}
	return out
}

func starredJSON(c *planning.Comparison) map[string]string {
	out := map[string]string{}
	for _, row := range c.Rows {
		if row.Star >= 0 {
			out[row.Metric.Name] = c.Names[row.Star]
		}
	}
	return out
}

func bestOverallJSON(c *planning.Comparison) string {
	if c.BestOverall < 0 {
		return ""
	}
	return c.Names[c.BestOverall]
}
