package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Exit codes.
const (
	exitOK       = 0
	exitUsage    = 1
	exitInvalid  = 2
	exitModel    = 3
	exitGuard    = 4
	exitAssert   = 5
	exitInternal = 70
	// exitSignal and exitTerminated: stopped by SIGINT (Ctrl-C) or by
	// SIGTERM (what Kubernetes and CI runners send), as shells report
	// them (128 + the signal's number).
	exitSignal     = 130
	exitTerminated = 143
)

const usage = `limitsim simulates rate limiters, queues and 429 policies against modeled upstreams.

Usage:
  limitsim run SCENARIO [-o DIR] [--json] [--quiet] [--set KEY=VALUE ...] [--assert EXPR ...]
               [--trace FILE [--trace-requests N] [--trace-from T] [--trace-outcome LIST]]
  limitsim validate SCENARIO [--set KEY=VALUE ...]
  limitsim live SCENARIO [--speed X] [--duration D] [--max-wall D] [--redis ADDR] [-o DIR] [--json] [--quiet] [--set KEY=VALUE ...]
  limitsim compare SCENARIO SCENARIO [...] [--set KEY=VALUE ...] [--replications R] [--threshold PCT] [--json] [--quiet] [-o DIR]
  limitsim plan SCENARIO (--sweep KEY=SPEC ... | --search KEY=lo:hi) [--objective max:PATH|min:PATH]
                [--constraint EXPR ...] [--replications R] [--allow-findings] [--keep-horizon] [--headroom PCT] [--shard i/n] [--json] [-o DIR]
  limitsim merge PART.json ... [--json]
  limitsim report DIR
  limitsim scenarios [show NAME]
  limitsim fit latency SAMPLES.csv [--chart FILE.png|.svg] [--json]
  limitsim fit arrivals TIMESTAMPS [--column N] [--time-format F] [--trace-out FILE] [--chart FILE.png|.svg] [--json]
  limitsim size --quota N/s --latency-p50 D --latency-p99 D [--instances N] [--window-limit N --window D]
                [--cost-quota N/min --cost-p50 N --cost-p99 N] [--verify] [--json]
  limitsim bench [-n REQUESTS] [--reports] [--compare DIR]
  limitsim version
  limitsim completion bash|zsh|fish
  limitsim help [COMMAND]

SCENARIO is a TOML file, or the name of a bundled example (see 'limitsim scenarios').
'limitsim help COMMAND' lists the command's flags. The README and docs/ hold the
scenario reference (docs/scenario.md) and the metric catalogue (docs/metrics.md).
`

func main() {
	// A first Ctrl-C stops the run at the next event boundary (outputs are
	// written, marked incomplete); a second exits at once and says what is
	// on disk.
	var st session
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := (<-sigs).(syscall.Signal); ok {
			st.signal.Store(int32(sig))
		}
		st.interrupt.Store(true)
		<-sigs
		if msg := st.secondInterrupt(); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(st.signalExit())
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, &st))
}

// session is what the signal handler shares with the command: the
// interrupt flag, and how far the outputs of -o have been written.
type session struct {
	interrupt atomic.Bool
	// signal is the number of the first signal received (0 before one).
	signal  atomic.Int32
	outputs atomic.Pointer[outputState]
	// fsys is the file system output folders are written to: nil for
	// the operating system's (a test's fails on demand).
	fsys report.FS
}

// signalExit is the exit code of a command the first signal stopped:
// 143 for SIGTERM, 130 for SIGINT (and for a stop with no signal named).
func (s *session) signalExit() int {
	if s.signal.Load() == int32(syscall.SIGTERM) {
		return exitTerminated
	}
	return exitSignal
}

// secondInterrupt is what a second Ctrl-C prints before exiting at once.
func (s *session) secondInterrupt() string {
	o := s.outputs.Load()
	switch {
	case o == nil:
		return "limitsim: second interrupt: exiting at once; no output was written"
	case o.stage == writingData:
		return fmt.Sprintf("limitsim: second interrupt: exiting at once; %s is incomplete (%s marks it) and holds no results of this run", o.dir, incompleteMarker)
	case o.stage == dataWritten:
		return fmt.Sprintf("limitsim: second interrupt: report not written; metrics.json and timeseries.csv in %s are complete up to t=%.3fs simulated (%s marks the folder)", o.dir, o.elapsedS, incompleteMarker)
	}
	return ""
}

// run is the whole command, testable without a process.
func run(args []string, stdout, stderr io.Writer, st *session) (code int) {
	scenario := ""
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "limitsim: internal error while running %q: %v (please report it with the scenario)\n", scenario, v)
			if os.Getenv("LIMITSIM_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitInternal
		}
	}()
	if len(args) > 1 {
		scenario = args[1]
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if _, ok := commandHelp[args[0]]; ok && wantsHelp(args[1:]) && stdout != io.Discard {
		// COMMAND -h or --help: the same help as `limitsim help COMMAND`.
		writeHelp(stdout, args[0], st)
		return exitOK
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr, st)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "scenarios":
		return cmdScenarios(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "size":
		return cmdSize(args[1:], stdout, stderr)
	case "live":
		return cmdLive(args[1:], stdout, stderr, st)
	case "compare":
		return cmdCompare(args[1:], stdout, stderr, st)
	case "plan":
		return cmdPlan(args[1:], stdout, stderr, st)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "fit":
		return cmdFit(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "version", "--version":
		return cmdVersion(stdout)
	case "completion":
		return cmdCompletion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		if len(args) == 2 && args[1] != "help" {
			if writeHelp(stdout, args[1], st) {
				return exitOK
			}
			fmt.Fprintf(stderr, "limitsim: no command %q\n\n%s", args[1], usage)
			return exitUsage
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "limitsim: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// parse parses flags that may come before or after the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, emptyValue(fs)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// emptyValue reports a text flag given an empty value (-o "", --trace ""):
// taken as not given, it would be silently ignored.
func emptyValue(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && err == nil {
			if s, text := g.Get().(string); text && strings.TrimSpace(s) == "" {
				err = fmt.Errorf("-%s is given an empty value", f.Name)
				fmt.Fprintf(fs.Output(), "limitsim: %v\n", err)
			}
		}
	})
	return err
}

// load reads a scenario file, or a bundled example by name, with the
// overrides of --set applied.
func load(arg string, sets overrides) (*scenarios.Scenario, error) { return loadWith(nil, arg, sets) }

// loadWith is load reading through ld (see scenarios.Loader; nil reads
// every file afresh).
func loadWith(ld *scenarios.Loader, arg string, sets overrides) (*scenarios.Scenario, error) {
	return ld.Open(arg, sets)
}

// overrides collects repeated --set KEY=VALUE flags.
type overrides []scenarios.Override

func (o *overrides) String() string { return fmt.Sprint(*o) }

// Set parses one KEY=VALUE.
func (o *overrides) Set(s string) error {
	ov, err := scenarios.ParseOverride(s)
	if err != nil {
		return err
	}
	*o = append(*o, ov)
	return nil
}

func loadError(stderr io.Writer, err error) int {
	var probs scenarios.Problems
	if errors.As(err, &probs) {
		for _, p := range probs {
			fmt.Fprintln(stderr, p.String())
		}
		fmt.Fprintf(stderr, "limitsim: %d %s; nothing was run\n", len(probs), map[bool]string{true: "problem", false: "problems"}[len(probs) == 1])
		return exitInvalid
	}
	fmt.Fprintf(stderr, "limitsim: %v\n", err)
	return exitInvalid
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sets overrides
	fs.Var(&sets, "set", "override a scenario key: `KEY=VALUE` (repeatable; limiters by name: client.limiter.NAME.FIELD, upstreams by host)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: limitsim validate SCENARIO [--set KEY=VALUE ...]")
		return exitUsage
	}
	sc, err := load(pos[0], sets)
	if err != nil {
		return loadError(stderr, err)
	}
	fmt.Fprintf(stdout, "%s: ok (%s)\n", pos[0], sc.Name)
	for _, w := range sc.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	return exitOK
}

func cmdRun(args []string, stdout, stderr io.Writer, st *session) int {
	interrupt := &st.interrupt
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outDir := fs.String("o", "", "write metrics.json, timeseries.csv, scenario.toml, charts and reports into this `directory`")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of the summary")
	traceFile := fs.String("trace", "", "write per-request spans (Chrome trace-event JSON, for Perfetto) to this `file`")
	traceN := fs.Int("trace-requests", client.DefaultTraceRequests, "follow the first `n` requests in the trace (at most 200000)")
	traceFrom := fs.String("trace-from", "", "follow only requests arriving at or after this simulated `time` (e.g. 60s)")
	traceOutcome := fs.String("trace-outcome", "", "follow only requests that end so: a comma-separated `list` of "+strings.Join(client.TraceOutcomes, ", "))
	quiet := fs.Bool("quiet", false, "print no progress on stderr (it shows for runs over a second)")
	var sets overrides
	fs.Var(&sets, "set", "override a scenario key: `KEY=VALUE` (repeatable; limiters by name: client.limiter.NAME.FIELD, upstreams by host)")
	var asserts assertions
	fs.Var(&asserts, "assert", "fail with exit 5 unless `PATH OP VALUE` holds, e.g. 'rate_429<0.01' (repeatable)")
	noVerify := fs.Bool("no-verify", false, "print the diagnoses' fixes without running them first (the output says they are unverified)")
	writeFix := fs.Bool("fix", false, "with -o, also write fixed.toml: the scenario with the verified fix applied")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 || (*writeFix && (*outDir == "" || *noVerify)) {
		fmt.Fprintln(stderr, "usage: limitsim run SCENARIO [-o DIR [--fix]] [--json] [--quiet] [--no-verify] [--set KEY=VALUE ...] [--assert EXPR ...] [--trace FILE [--trace-requests N] [--trace-from T] [--trace-outcome LIST]]")
		return exitUsage
	}
	sc, cfg, code := loadBuilt(stderr, pos[0], sets)
	if code != exitOK {
		return code
	}
	if len(sc.Sweeps) > 0 || len(sc.Variants) > 0 {
		fmt.Fprintf(stderr, "limitsim: running the base scenario; its [[sweep]] blocks are for `limitsim plan`, its [[variant]] blocks for `limitsim compare`\n")
	}
	if *outDir != "" {
		unlock, code := holdOutputDir(stderr, *outDir, "run", args)
		if code != exitOK {
			return code
		}
		defer unlock()
		if err := checkOutputDir(*outDir, sc, "scenario.toml"); err != nil {
			fmt.Fprintf(stderr, "limitsim: -o %s: %v\n", *outDir, err)
			return exitInvalid
		}
	}
	trace, sel, code := openTrace(fs, *traceFile, *traceN, *traceFrom, *traceOutcome, stderr)
	if code != exitOK {
		return code
	}
	if trace != nil {
		defer os.Remove(trace.Name()) // no-op once renamed
	}
	opt := client.Options{Interrupt: interrupt, TraceSelect: sel, SeriesUnread: *outDir == ""}
	var prog *progress
	if !*quiet {
		prog = startRunProgress(stderr, cfg)
		opt.Progress, opt.Clock = &prog.done, prog.clock
	}
	out, err := simulate(cfg, opt, trace, *traceFile)
	if prog != nil {
		prog.finish() // before anything else is printed
	}
	if err != nil {
		if errors.Is(err, client.ErrConfig) || errors.Is(err, scenarios.ErrInvalid) {
			fmt.Fprintf(stderr, "%s: %v\n", pos[0], err)
			return exitInvalid
		}
		fmt.Fprintf(stderr, "limitsim: %s: %v\n", sc.Name, err)
		return exitInternal
	}
	report.Analyze(out.Results, out.Series)
	defer out.Series.Close()
	if err := out.Series.Err(); err != nil {
		fmt.Fprintf(stderr, "limitsim: %s: %v\n", sc.Name, err)
		return exitInternal
	}
	if !out.Interrupted {
		horizonWarning(out.Results, sc)
		fixRun(out.Results, planning.Source{Loader: scenarios.NewLoader(), Path: pos[0], Sets: sets}, *noVerify, interrupt)
	}
	if err := writeRunOutputs(*outDir, *writeFix, stderr, sc, out, planning.Source{Path: pos[0], Sets: sets}, st); err != nil {
		return outputsFailed(stderr, "limitsim", *outDir, err)
	}
	if *asJSON {
		err = metrics.WriteJSON(stdout, out.Results)
	} else {
		err = report.WriteText(stdout, out.Results)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	if code := runExit(stderr, sc.Name, out, st); code != exitOK {
		return code
	}
	if interrupt.Load() {
		fmt.Fprintf(stderr, "limitsim: %s: interrupted while verifying the fix; it is printed unverified\n", sc.Name)
		return st.signalExit()
	}
	return checkAssertions(stderr, asserts, out.Results)
}

// loadBuilt loads a scenario and builds its client configuration; on a
// problem it prints it and returns the exit code.
func loadBuilt(stderr io.Writer, name string, sets overrides) (*scenarios.Scenario, *client.Config, int) {
	sc, err := load(name, sets)
	if err != nil {
		return nil, nil, loadError(stderr, err)
	}
	cfg, err := sc.Build()
	if err != nil {
		return nil, nil, loadError(stderr, err)
	}
	return sc, cfg, exitOK
}

// assertions collects repeated --assert flags.
type assertions []metrics.Assertion

func (a *assertions) String() string { return fmt.Sprint(*a) }

// Set parses one PATH OP VALUE.
func (a *assertions) Set(s string) error {
	as, err := metrics.ParseAssertion(s)
	if err != nil {
		return err
	}
	*a = append(*a, as)
	return nil
}

// checkAssertions prints every assertion that does not hold, with the
// value found and by how much it misses, and returns exit 5 if any; exit 2
// if a path names nothing in the results (an entry in brackets that the
// run does not have), which is bad input rather than a figure that
// missed.
func checkAssertions(stderr io.Writer, asserts []metrics.Assertion, r *metrics.Results) int {
	code := exitOK
	for _, a := range asserts {
		holds, got, err := a.Check(r)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "limitsim: --assert %s: %v\n", a.Text, err)
			code = exitInvalid
		case !holds:
			fmt.Fprintf(stderr, "limitsim: assertion failed: %s: got %.6g, off by %.6g\n", a.Text, got, math.Abs(got-a.Value))
			if code == exitOK {
				code = exitAssert
			}
		}
	}
	return code
}

// openTrace checks run's --trace flags and, with --trace FILE, creates the
// temporary file the trace is written to (renamed to FILE once
// complete); on a problem it prints it and returns the exit code.
func openTrace(fs *flag.FlagSet, file string, n int, from, outcomes string, stderr io.Writer) (*os.File, client.TraceSelect, int) {
	if file == "" {
		given := ""
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "trace-") && given == "" {
				given = f.Name
			}
		})
		if given != "" {
			fmt.Fprintf(stderr, "limitsim: --%s chooses what --trace FILE follows, and no --trace is given\n", given)
			return nil, client.TraceSelect{}, exitUsage
		}
	}
	sel, err := traceSelect(n, from, outcomes)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return nil, sel, exitUsage
	}
	if file == "" {
		return nil, sel, exitOK
	}
	if err := checkOutputFile(file); err != nil {
		fmt.Fprintf(stderr, "limitsim: --trace: %v\n", err)
		return nil, sel, exitInvalid
	}
	trace, err := report.CreateOutputTemp(filepath.Dir(file), filepath.Base(file))
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: --trace: %v\n", err)
		return nil, sel, exitInvalid
	}
	return trace, sel, exitOK
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

// runExit says how a finished run ended and returns its exit code.
func runExit(stderr io.Writer, name string, out *client.Outcome, st *session) int {
	switch {
	case out.Interrupted:
		fmt.Fprintf(stderr, "limitsim: %s: interrupted at %.3fs simulated; outputs are marked incomplete\n", name, out.Results.ElapsedS)
		return st.signalExit()
	case out.Stall != nil:
		fmt.Fprintf(stderr, "limitsim: %s: %v\n", name, out.Stall)
		return exitModel
	case out.Guard != nil:
		fmt.Fprintf(stderr, "limitsim: %s: %v\n", name, out.Guard)
		return exitGuard
	}
	return exitOK
}

func cmdScenarios(args []string, stdout, stderr io.Writer) int {
	exs, err := scenarios.Examples()
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	switch {
	case len(args) == 0:
		for _, e := range exs {
			first := strings.SplitN(e.Description, ".", 2)[0]
			fmt.Fprintf(stdout, "%-28s %s\n", e.Name, strings.Join(strings.Fields(first), " "))
		}
		return exitOK
	case len(args) == 2 && args[0] == "show":
		src, err := scenarios.ExampleSource(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "limitsim: %v\n", err)
			return exitInvalid
		}
		stdout.Write(src)
		return exitOK
	}
	fmt.Fprintln(stderr, "usage: limitsim scenarios [show NAME]")
	return exitUsage
}

// cmdReport redraws the charts and reports of a finished run from its
// metrics.json and timeseries.csv, without simulating again.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: limitsim report DIR")
		return exitUsage
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() { // else ReadRun says what is wrong
		unlock, code := holdOutputDir(stderr, dir, "report", args)
		if code != exitOK {
			return code
		}
		defer unlock()
	}
	r, s, scenario, err := report.ReadRun(dir)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInvalid
	}
	if _, err := os.Stat(filepath.Join(dir, incompleteMarker)); err == nil {
		fmt.Fprintf(stderr, "limitsim: %s carries %s: the run that wrote it stopped before every output was in place; the report is drawn from the data files as they are\n", dir, incompleteMarker)
	}
	report.Analyze(r, s)
	doc, err := report.Build(r, s, scenario)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	if err := doc.WriteFiles(dir); err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	if err := report.PruneRedrawn(dir, doc); err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(stdout, "wrote %s and %s with %d charts\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"), len(doc.Charts))
	return exitOK
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
