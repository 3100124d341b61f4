package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
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

// outputState is how far writeOutputs has gone in dir.
type outputState struct {
	dir      string
	elapsedS float64 // simulated time the results cover
	stage    int     // writingData, dataWritten, allWritten
}

const (
	writingData = iota
	dataWritten
	allWritten
)

// incompleteMarker is the file that marks an output folder being written:
// it is created first and removed last, so a folder where it remains was
// left by a process stopped while writing.
const incompleteMarker = "INCOMPLETE"

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
	if *traceFile == "" {
		given := ""
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "trace-") && given == "" {
				given = f.Name
			}
		})
		if given != "" {
			fmt.Fprintf(stderr, "limitsim: --%s chooses what --trace FILE follows, and no --trace is given\n", given)
			return exitUsage
		}
	}
	var trace *os.File
	sel, err := traceSelect(*traceN, *traceFrom, *traceOutcome)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitUsage
	}
	if *traceFile != "" {
		if err := checkOutputFile(*traceFile); err != nil {
			fmt.Fprintf(stderr, "limitsim: --trace: %v\n", err)
			return exitInvalid
		}
		if trace, err = report.CreateOutputTemp(filepath.Dir(*traceFile), filepath.Base(*traceFile)); err != nil {
			fmt.Fprintf(stderr, "limitsim: --trace: %v\n", err)
			return exitInvalid
		}
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

// checkWritable makes sure dir exists (creating it) and accepts files.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".limitsim-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// holdOutputDir creates output folder dir and takes it for this command,
// name and its args (report.LockOutputs), before anything runs: it
// returns the function that releases the folder, or, printing why on
// stderr, exitInvalid (another process writing the folder among them).
func holdOutputDir(stderr io.Writer, dir, name string, args []string) (unlock func(), code int) {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		words := []string{"limitsim", name}
		for _, a := range args {
			if a == "" || strings.ContainsAny(a, " \t\n'\"\\") {
				a = strconv.Quote(a)
			}
			words = append(words, a)
		}
		if unlock, err = report.LockOutputs(dir, strings.Join(words, " ")); err == nil {
			return unlock, exitOK
		}
	}
	if le := (*report.OutputsLockedError)(nil); errors.As(err, &le) {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
	} else {
		fmt.Fprintf(stderr, "limitsim: -o %s: %v\n", dir, err)
	}
	return nil, exitInvalid
}

// checkOutputDir reports, before the run, whether output folder dir takes
// the outputs of sc (writes: the scenario file the command writes there):
// checkWritable, then dataNameClash.
func checkOutputDir(dir string, sc *scenarios.Scenario, writes string) error {
	if err := checkWritable(dir); err != nil {
		return err
	}
	return dataNameClash(dir, sc, writes)
}

// checkOutputFile reports whether a file can be written at path, before
// the work that produces it: its folder exists and takes a new file, and
// path is not a folder.
func checkOutputFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := report.CreateOutputTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write a file in %s: %w", filepath.Dir(path), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// outputsFailed prints err, a failure to write output folder dir, after
// prefix, and returns its exit code: exitInvalid for the file system's
// refusal (a full disk, a read-only folder, a permission denied: the
// error names the file and the cause), exitInternal for anything else.
func outputsFailed(stderr io.Writer, prefix, dir string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	var oe *report.OutputError
	if !errors.As(err, &oe) || !(errors.Is(oe.Err, syscall.ENOSPC) || errors.Is(oe.Err, syscall.EDQUOT) ||
		errors.Is(oe.Err, syscall.EROFS) || errors.Is(oe.Err, fs.ErrPermission)) {
		return exitInternal
	}
	if _, serr := os.Stat(filepath.Join(dir, incompleteMarker)); serr == nil {
		fmt.Fprintf(stderr, "limitsim: %s is incomplete (%s marks it): free space or make it writable, and run again\n", dir, incompleteMarker)
	}
	return exitInvalid
}

// writeOutputs writes metrics.json, timeseries.csv, scenario.toml (with
// copies of the data files it reads), the charts and the reports into dir,
// each file through a temporary name and a rename, so a crash or Ctrl-C
// never leaves a half-written file. It records its progress
// in state (for a second Ctrl-C to report). The folder carries the
// incompleteMarker while it is being written, and a previous run's reports
// are removed first, so a folder never mixes two runs' reports or looks
// complete when it is not.
func writeOutputs(dir string, sc *scenarios.Scenario, out *client.Outcome, state *atomic.Pointer[outputState]) error {
	return writeOutputsLive(dir, sc, out, nil, state)
}

// writeOutputsLive is writeOutputs for a live run held against its
// simulation (live nil: a simulated run).
func writeOutputsLive(dir string, sc *scenarios.Scenario, out *client.Outcome, live *report.LiveComparison, state *atomic.Pointer[outputState]) error {
	return writeOutputsTo(report.Folder{Dir: dir}, sc, out, live, state)
}

// writeOutputsTo is writeOutputsLive into folder f, through its file
// system.
func writeOutputsTo(f report.Folder, sc *scenarios.Scenario, out *client.Outcome, live *report.LiveComparison, state *atomic.Pointer[outputState]) (err error) {
	dir := f.Dir
	var written []string // so far: listed in the manifest if a later step fails
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Record(written))
		}
	}()
	// The charts are drawn while the data files are written: both only
	// read the results.
	var charts []report.Chart
	var omitted []report.Omitted
	var chartErr error
	drawn := make(chan struct{})
	go func() {
		defer close(drawn)
		charts, omitted, chartErr = report.Charts(out.Results, out.Series)
	}()
	defer func() { <-drawn }()
	resolved, err := sc.Resolved()
	if err != nil {
		return err
	}
	stage := func(s int) { state.Store(&outputState{dir: dir, elapsedS: out.Results.ElapsedS, stage: s}) }
	stage(writingData)
	note := "limitsim is writing this folder; if this file remains, the process was stopped before every output was written\n"
	if err := f.Mark(incompleteMarker, note); err != nil {
		return err
	}
	for _, stale := range []string{"report.md", "report.html"} {
		if err := f.Remove(stale); err != nil {
			return err
		}
	}
	written, err = writeRunFiles(f, out.Results, out.Series, resolved)
	if err != nil {
		return err
	}
	data, kept, err := copyDataFiles(f, sc, written)
	written = append(written, data...)
	if err != nil {
		return err
	}
	stage(dataWritten)
	if <-drawn; chartErr != nil {
		return chartErr
	}
	doc := &report.Document{Results: out.Results, Series: out.Series, Scenario: resolved, Charts: charts, Omitted: omitted, Live: live}
	if live != nil {
		if err := f.WriteFile("live.json", func(w io.Writer) (int64, error) {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return 0, enc.Encode(live)
		}); err != nil {
			return err
		}
		written = append(written, "live.json")
	}
	if err := doc.WriteFilesTo(f, func(n string) { written = append(written, n) }); err != nil {
		return err
	}
	if err := out.Series.Err(); err != nil { // the charts read it
		return err
	}
	if err := f.Prune(written, append(kept, inputsIn(dir, sc)...), []string{"tenants.csv", "scopes.csv", "live.json"}); err != nil {
		return err
	}
	if err := f.Remove(incompleteMarker); err != nil {
		return err
	}
	stage(allWritten)
	return nil
}

// writeRunFiles writes a run's data files and scenario.toml into folder
// f and returns their names (on failure, of those written before it).
func writeRunFiles(f report.Folder, r *metrics.Results, s *metrics.Series, resolved string) ([]string, error) {
	count := func(f func(io.Writer) error) func(io.Writer) (int64, error) {
		return func(w io.Writer) (int64, error) { return 0, f(w) }
	}
	files := []struct {
		name string
		fill func(io.Writer) error
	}{
		{"metrics.json", func(w io.Writer) error { return metrics.WriteJSON(w, metrics.Listed(r)) }},
		{"tenants.csv", func(w io.Writer) error { return metrics.WriteTenantsCSV(w, r) }},
		{"scopes.csv", func(w io.Writer) error { return metrics.WriteScopesCSV(w, r) }},
		{"timeseries.csv", func(w io.Writer) error { return s.WriteColumnsCSV(w, metrics.ListedColumns(r, s)) }},
		{"scenario.toml", func(w io.Writer) error {
			_, err := io.WriteString(w, resolved)
			return err
		}},
	}
	tenants, scopes := metrics.HasEntities(r)
	var written []string
	for _, file := range files {
		if (file.name == "tenants.csv" && !tenants) || (file.name == "scopes.csv" && !scopes) {
			continue
		}
		if err := f.WriteFile(file.name, count(file.fill)); err != nil {
			return written, err
		}
		written = append(written, file.name)
	}
	return written, nil
}

// copyDataFiles copies the data files sc reads (a trace, latency samples)
// into folder f at the same relative paths, so that the scenario.toml or
// recommended.toml written there runs again: its paths are relative to its
// own folder. It returns the files it wrote (on failure too: those copied
// before it), and those it kept: a file already there (dir is the
// scenario's own folder) is the user's, not written, and stays. A data
// file named as one of the outputs in taken (clean, slash-separated paths)
// is refused: its copy would replace it.
func copyDataFiles(f report.Folder, sc *scenarios.Scenario, taken []string) (written, kept []string, err error) {
	dir := f.Dir
	if err := dataNameClash(dir, sc, ""); err != nil { // checked before the run too
		return nil, nil, err
	}
	from := filepath.Dir(sc.File)
	for _, p := range sc.DataFiles() {
		if slices.Contains(taken, filepath.ToSlash(filepath.Clean(p))) {
			return nil, nil, fmt.Errorf("data file %s has the name of one of the outputs: rename it", p)
		}
		src, dst := filepath.Join(from, p), filepath.Join(dir, p)
		si, err := os.Stat(src)
		if err != nil {
			return written, nil, fmt.Errorf("data file %s: %w", p, err)
		}
		if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
			kept = append(kept, p)
			continue
		}
		if err := f.MkdirAll(filepath.Dir(p)); err != nil {
			return written, nil, err
		}
		if err := f.WriteFile(p, func(w io.Writer) (int64, error) {
			in, err := sc.OpenDataFile(p)
			if err != nil {
				return 0, err
			}
			defer in.Close()
			return io.Copy(w, in)
		}); err != nil {
			return written, nil, err
		}
		written = append(written, p)
	}
	return written, kept, nil
}

// outputNames are the files a run's output folder may hold besides its
// charts: a data file of the scenario must not be named as one of them.
var outputNames = []string{"metrics.json", "timeseries.csv", "scenario.toml", "tenants.csv", "scopes.csv",
	"report.md", "report.html", "live.json", "plan.json", "plan.md", "plan.html", "recommended.toml", "fixed.toml", report.OutputsManifest, report.LockFile, incompleteMarker}

// realPath is path made absolute with its symbolic links resolved, so
// that a folder reached through a link is the same folder.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// inputsIn lists the files of sc (its own file, its data files) that lie
// in dir, as paths relative to it: a command writing into dir keeps them,
// whoever wrote them.
func inputsIn(dir string, sc *scenarios.Scenario) []string {
	if sc.File == "" {
		return nil
	}
	absD, err := realPath(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range append([]string{sc.File}, sc.DataFiles()...) {
		if f != sc.File {
			f = filepath.Join(filepath.Dir(sc.File), f)
		}
		absF, err := realPath(f)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(absD, absF); err == nil && filepath.IsLocal(rel) {
			out = append(out, rel)
		}
	}
	return out
}

// dataNameClash reports, before the run, a data file of sc that its copy
// into output folder dir could not take the place of: one named as an
// output (a chart, a report, a data file of the run), or a file already
// there that no run wrote.
func dataNameClash(dir string, sc *scenarios.Scenario, writes string) error {
	listed, err := report.ListedOutputs(dir)
	if err != nil {
		return err
	}
	// The scenario itself, in the folder under the name of the scenario
	// the command writes there (writes: scenario.toml, or a plan's
	// recommended.toml): a run's own file is rewritten alike; one no run
	// wrote would lose its comments and layout.
	if in := inputsIn(dir, sc); writes != "" && len(in) > 0 && filepath.ToSlash(in[0]) == writes && !listed[writes] && !scenarios.IsResolved(sc) {
		return fmt.Errorf("%s is the scenario being run and no run wrote it: the %s written there would replace it; choose another folder", writes, writes)
	}
	for _, p := range sc.DataFiles() {
		c := filepath.ToSlash(filepath.Clean(p))
		if slices.Contains(outputNames, c) || !strings.Contains(c, "/") && (strings.HasSuffix(c, ".png") || strings.HasSuffix(c, ".svg")) {
			return fmt.Errorf("data file %s has the name of an output of -o, which would replace it: rename it", p)
		}
		si, err1 := os.Stat(filepath.Join(filepath.Dir(sc.File), p))
		di, err2 := os.Stat(filepath.Join(dir, p))
		if err1 == nil && err2 == nil && !os.SameFile(si, di) && !listed[c] {
			return fmt.Errorf("data file %s: the folder already holds a %s that no run wrote, which the copy would replace: choose another folder", p, p)
		}
	}
	return nil
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
