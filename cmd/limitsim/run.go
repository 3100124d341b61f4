package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// runOptions are the flags of `limitsim run`.
type runOptions struct {
	outDir, traceFile, traceFrom, traceOutcome string
	traceRequests                              int
	asJSON, quiet, noVerify, writeFix          bool
	sets                                       overrides
	asserts                                    assertions
	// given reports whether a flag was set on the command line.
	given func(name string) bool
}

// newRunCommand declares `limitsim run`.
func newRunCommand(env *environment) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Simulate a scenario and print its summary",
		Long: `Simulate a scenario and print its summary, or its JSON with --json.

-o writes every output (metrics.json, timeseries.csv, charts, report.md and
report.html); --trace writes a Perfetto trace, to a file that is not one
of those. stderr says why a trace holds no request, when it holds none.
A diagnosis's fix is run before it is printed, unless --no-verify.`,
		Example:           "  limitsim run seed-crawler -o out --set client.limiter.bucket.rate=80 --assert 'rate_429<0.01'",
		Args:              exactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.writeFix && (o.outDir == "" || o.noVerify) {
				return usageError(cmd, "--fix writes fixed.toml into the folder of -o, from a verified fix: give -o DIR and leave out --no-verify")
			}
			o.given = func(name string) bool { return cmd.Flags().Changed(name) }
			return cmdRun(env, &o, args[0])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "metrics.json, timeseries.csv, scenario.toml, charts and reports")
	addJSONFlag(fs, &o.asJSON, "the results")
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "of the scenario")
	fs.Var(&o.asserts, "assert", "fail with exit 5 unless `PATH OP VALUE` holds, e.g. 'rate_429<0.01' (repeatable)")
	fs.BoolVar(&o.noVerify, "no-verify", false, "print the diagnoses' fixes without running them first (the output says they are unverified)")
	fs.BoolVar(&o.writeFix, "fix", false, "with -o, also write fixed.toml: the scenario with the verified fix applied")
	fs.StringVar(&o.traceFile, "trace", "", "write per-request spans (Chrome trace-event JSON, for Perfetto) to this `file`")
	fs.IntVar(&o.traceRequests, "trace-requests", client.DefaultTraceRequests, "follow the first `n` requests in the trace (at most 200000)")
	fs.StringVar(&o.traceFrom, "trace-from", "", "follow only requests arriving at or after this simulated `time` (e.g. 60s); without it, from a little before the first critical finding set in (0 with none)")
	fs.StringVar(&o.traceOutcome, "trace-outcome", "", "follow only requests that end so: a comma-separated `list` of "+strings.Join(client.TraceOutcomes, ", "))
	return cmd
}

// cmdRun simulates the scenario at path and prints its results.
func cmdRun(env *environment, o *runOptions, path string) error {
	stdout, stderr, st := env.stdout, env.stderr, env.session
	interrupt := &st.interrupt
	sets := o.sets
	sc, cfg, err := loadBuilt(path, sets)
	if err != nil {
		return err
	}
	noteBaseScenario(stderr, sc)
	if o.outDir != "" {
		unlock, err := holdOutputDir(o.outDir, "run", env.args)
		if err != nil {
			return err
		}
		defer unlock()
		if err := checkOutputDir(o.outDir, sc, "scenario.toml"); err != nil {
			return invalidInput(fmt.Errorf("-o %s: %w", o.outDir, err))
		}
	}
	trace, sel, err := openTrace(o, sc)
	if err != nil {
		return err
	}
	if trace != nil {
		defer os.Remove(trace.Name()) // no-op once renamed
	}
	if trace != nil && !o.given("trace-from") {
		if sel, err = traceAroundFinding(cfg, sel, o.quiet, stderr, interrupt); err != nil {
			return internalError(fmt.Errorf("%s: %w", sc.Name, err))
		}
	}
	opt := client.Options{Interrupt: interrupt, TraceSelect: sel, SeriesUnread: o.outDir == ""}
	var prog *progress
	if !o.quiet {
		prog = startRunProgress(stderr, cfg)
		opt.Progress, opt.Clock = &prog.done, prog.clock
	}
	out, err := simulate(cfg, opt, trace, o.traceFile)
	if prog != nil {
		prog.finish() // before anything else is printed
	}
	if err != nil {
		if errors.Is(err, client.ErrConfig) || errors.Is(err, scenarios.ErrInvalid) {
			return invalidInput(verbatim(fmt.Errorf("%s: %w", path, err)))
		}
		return internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	noteEmptyTrace(stderr, out.Trace, sel, o.traceFrom, out.Results.ElapsedS)
	report.Analyze(out.Results, out.Series)
	defer out.Series.Close()
	if err := out.Series.Err(); err != nil {
		return internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	verifyCut := false
	if !out.Interrupted {
		horizonWarning(out.Results, sc)
		verifyCut = fixRun(out.Results, planning.Source{Loader: scenarios.NewLoader(), Path: path, Sets: sets}, o.noVerify, interrupt)
	}
	if err := writeRunOutputs(o.outDir, o.writeFix, stderr, sc, out, planning.Source{Path: path, Sets: sets}, st); err != nil {
		return outputsFailed("", o.outDir, err)
	}
	if o.asJSON {
		err = metrics.WriteJSON(stdout, out.Results)
	} else {
		err = report.WriteText(stdout, out.Results)
	}
	if err != nil {
		return internalError(err)
	}
	if err := runExit(sc.Name, out, st); err != nil {
		return err
	}
	if err := lateInterrupt(sc.Name, verifyCut, interrupt.Load(), st); err != nil {
		return err
	}
	return checkAssertions(o.asserts, out.Results)
}

// lateInterrupt is the error of a run whose simulation finished before
// a signal came (nil when none came): one that stopped the fix's
// verification (verifyCut), the fix printed unverified and marked so
// everywhere; or one that came later still, every output then complete.
func lateInterrupt(name string, verifyCut, interrupted bool, st *session) error {
	switch {
	case verifyCut:
		return st.stopped(fmt.Errorf("%s: interrupted while verifying the fix; the run's outputs are complete, and its fix is printed unverified", name))
	case interrupted:
		return st.stopped(fmt.Errorf("%s: interrupted once the run was done; its outputs are complete", name))
	}
	return nil
}

// noteBaseScenario says on w what of the scenario a run leaves aside:
// its [[sweep]] and [[variant]] blocks, and the ranges it takes the mid of.
func noteBaseScenario(w io.Writer, sc *scenarios.Scenario) {
	if note := baseScenarioNote(len(sc.Sweeps), len(sc.Variants)); note != "" {
		fmt.Fprintln(w, note)
	}
	for _, r := range sc.Ranges {
		fmt.Fprintf(w, "limitsim: %s is a range, %s: this run takes its mid, %s ('limitsim plan --uncertain N' draws it)\n",
			r.Key, r, strconv.FormatFloat(r.Mid, 'g', -1, 64))
	}
}

// checkAssertions is nil when every assertion holds; else it says, in
// order, each that does not hold, with the value found and by how much it
// misses (exit 5), and each path that names nothing in the results (an
// entry in brackets that the run does not have), which is bad input
// rather than a figure that missed (exit 2, over exit 5).
func checkAssertions(asserts []metrics.Assertion, r *metrics.Results) error {
	code := exitOK
	var msgs messageList
	for _, a := range asserts {
		holds, got, err := a.Check(r)
		switch {
		case err != nil:
			msgs = append(msgs, fmt.Errorf("--assert %s: %w", a.Text, err))
			code = exitInvalid
		case !holds:
			msgs = append(msgs, fmt.Errorf("assertion failed: %s: got %.6g, off by %.6g", a.Text, got, math.Abs(got-a.Value)))
			if code == exitOK {
				code = exitAssert
			}
		}
	}
	if code == exitOK {
		return nil
	}
	return &exitError{code: code, err: msgs}
}

// openTrace checks run's --trace flags and, with --trace FILE, creates the
// temporary file the trace is written to (renamed to FILE once
// complete). FILE must not be one of the files -o writes (sc's data
// files among them).
func openTrace(o *runOptions, sc *scenarios.Scenario) (*os.File, client.TraceSelect, error) {
	file := o.traceFile
	if file == "" {
		for _, name := range []string{"trace-requests", "trace-from", "trace-outcome"} {
			if o.given(name) {
				return nil, client.TraceSelect{}, badUsage(fmt.Errorf("--%s chooses what --trace FILE follows, and no --trace is given", name))
			}
		}
	}
	sel, err := traceSelect(o.traceRequests, o.traceFrom, o.traceOutcome)
	if err != nil {
		return nil, sel, badUsage(err)
	}
	if file == "" {
		return nil, sel, nil
	}
	if err := checkOutputFile(file); err != nil {
		return nil, sel, invalidInput(fmt.Errorf("--trace: %w", err))
	}
	if err := traceOutputClash(file, o.outDir, sc); err != nil {
		return nil, sel, invalidInput(fmt.Errorf("--trace: %w", err))
	}
	trace, err := report.CreateOutputTemp(filepath.Dir(file), filepath.Base(file))
	if err != nil {
		return nil, sel, invalidInput(fmt.Errorf("--trace: %w", err))
	}
	return trace, sel, nil
}

// traceLeadIntervals is how many intervals before a finding set in a
// trace around it starts: the requests that build up to it.
const traceLeadIntervals = 2

// traceAroundFinding is where --trace starts when --trace-from is not
// given: a run without the trace (the same seed, so the same run) finds
// the first critical finding, and the trace follows the requests from
// traceLeadIntervals before it set in; from the start when there is none.
func traceAroundFinding(cfg *client.Config, sel client.TraceSelect, quiet bool, stderr io.Writer, interrupt *atomic.Bool) (client.TraceSelect, error) {
	out, err := client.Run(cfg, client.Options{Interrupt: interrupt})
	if err != nil {
		return sel, err
	}
	defer out.Series.Close()
	if out.Interrupted {
		return sel, nil
	}
	report.Analyze(out.Results, out.Series)
	code, at, ok := report.FirstCriticalOnset(out.Results, out.Series)
	if !ok {
		return sel, nil
	}
	from := max(0, at-traceLeadIntervals*out.Results.IntervalS)
	sel.From = time.Duration(from * float64(time.Second))
	if !quiet {
		fmt.Fprintf(stderr, "limitsim: --trace follows the requests from %s, %d intervals before %s set in at %s (--trace-from chooses another start)\n",
			sel.From, traceLeadIntervals, code, time.Duration(at*float64(time.Second)))
	}
	return sel, nil
}

// traceSelect reads --trace-requests, --trace-from and --trace-outcome.
func traceSelect(n int, from, outcomes string) (client.TraceSelect, error) {
	sel := client.TraceSelect{Requests: n}
	if n < 1 || n > client.MaxTraceRequests {
		return sel, fmt.Errorf("--trace-requests must be between 1 and %d", client.MaxTraceRequests)
	}
	if from != "" {
		d, err := time.ParseDuration(strings.TrimSpace(from))
		if err != nil || d < 0 {
			return sel, fmt.Errorf("--trace-from %q: want a simulated time such as 60s or 1m30s", from)
		}
		sel.From = d
	}
	if outcomes != "" {
		for _, o := range strings.Split(outcomes, ",") {
			o = strings.TrimSpace(o)
			if !slices.Contains(client.TraceOutcomes, o) {
				return sel, fmt.Errorf("--trace-outcome %q: want a comma-separated list of %s", o, strings.Join(client.TraceOutcomes, ", "))
			}
			sel.Outcomes = append(sel.Outcomes, o)
		}
	}
	return sel, nil
}

// simulate runs cfg, writing the trace (when trace is set) to its
// temporary file and renaming it to traceFile once complete.
func simulate(cfg *client.Config, opt client.Options, trace *os.File, traceFile string) (*client.Outcome, error) {
	if trace == nil {
		return client.Run(cfg, opt)
	}
	opt.Trace = trace
	out, err := client.Run(cfg, opt)
	if cerr := trace.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(trace.Name(), traceFile)
	}
	return out, err
}

// runExit is nil for a run that finished, else the error that says how
// it ended: stopped by a signal, stalled (a deadlock of the model, exit
// 3) or stopped by a guard (exit 4).
func runExit(name string, out *client.Outcome, st *session) error {
	switch {
	case out.Interrupted:
		return st.stopped(fmt.Errorf("%s: interrupted at %.3fs simulated; outputs are marked incomplete", name, out.Results.ElapsedS))
	case out.Stall != nil:
		return &exitError{code: exitModel, err: fmt.Errorf("%s: %w", name, out.Stall)}
	case out.Guard != nil:
		return &exitError{code: exitGuard, err: fmt.Errorf("%s: %w", name, out.Guard)}
	}
	return nil
}

// baseScenarioNote says that run runs the base scenario of a file with
// [[sweep]] or [[variant]] blocks, naming only the blocks it has ("":
// none).
func baseScenarioNote(sweeps, variants int) string {
	var blocks []string
	if sweeps > 0 {
		blocks = append(blocks, "its [[sweep]] blocks are for `limitsim plan`")
	}
	if variants > 0 {
		blocks = append(blocks, "its [[variant]] blocks for `limitsim compare`")
	}
	if len(blocks) == 0 {
		return ""
	}
	return "limitsim: running the base scenario; " + strings.Join(blocks, ", ")
}
