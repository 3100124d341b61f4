package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// replayOptions are the flags of `limitsim replay`.
type replayOptions struct {
	outDir, latency, format string
	asJSON, quiet           bool
	sets                    overrides
	mapping                 logs.Mapping
	reorder, unmatched      string
	// given reports whether a flag was set on the command line: a --log-*
	// flag given overrides the scenario's [log] key.
	given func(name string) bool
}

// newReplayCommand declares `limitsim replay`.
func newReplayCommand(env *environment) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay LOG SCENARIO [SCENARIO...]",
		Short: "Replay an access log through a scenario's client (shadow mode)",
		Long: `Replay an access log through a scenario's client configuration, in
shadow mode: the log's arrivals (their times, hosts, tenants and costs)
replace the scenario's workload, and each admitted request takes the
latency it took in production (--latency model: the scenario's upstream).
Times logged to the second are spread within their second from a seeded
stream.

It prints the run's usual summary, then what the configuration would have
done to the traffic beside what production saw: delays (p50, p99),
client rejections and upstream 429s, over the whole log, per tenant and
for the minutes where they differ most. -o writes the usual folder with
replay.json and the comparison in report.md.

The log is common or combined log format (nginx's request_time appended
is read), JSON lines or CSV; --log-* flags name its fields. A request's
logged method and URL path (CLF: its request line) choose the
scenario's [[client.path]] when they declare methods; a request that
matches none is counted and takes a path drawn by weight
(--log-unmatched refuse: the replay fails).

With several scenarios, each is replayed on the same log (the same
arrivals, spread alike, and the same latencies) and judged against the
first; -o DIR writes one folder each, DIR/NAME.`,
		Example: "  limitsim replay access.log token-bucket --log-tenant remote_user\n" +
			"  limitsim replay access.log today.toml candidate.toml\n" +
			"  limitsim replay calls.jsonl mine.toml --log-time ts --log-time-format unix_ms --log-tenant key --log-cost tokens -o out",
		Args:              minArgs(2),
		ValidArgsFunction: completeReplay,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.given = func(name string) bool { return cmd.Flags().Changed(name) }
			return cmdReplay(env, &o, args[0], args[1:])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "metrics.json, replay.json, timeseries.csv, scenario.toml, charts and reports")
	addJSONFlag(fs, &o.asJSON, "the results and the comparison")
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "of the scenario")
	fs.StringVar(&o.latency, "latency", "recorded", "where an admitted request's latency comes from: `recorded` (the log's) or model (the scenario's upstream)")
	addLogFlags(fs, &o)
	addLogPathFlags(fs, &o)
	return cmd
}

// addLogPathFlags declares the flags that say how a replayed record
// finds its [[client.path]].
func addLogPathFlags(fs *pflag.FlagSet, o *replayOptions) {
	m := &o.mapping
	fs.StringVar(&m.Method, "log-method", "", "the HTTP method's `field`, matched to the methods of the scenario's [[client.path]] (CLF: from the request line)")
	fs.StringVar(&m.Path, "log-path", "", "the URL path's `field`, telling apart paths that share a method by name (CLF: from the request line)")
	fs.StringVar(&o.unmatched, "log-unmatched", "draw", "a record whose method and URL path match no path: `draw` its path by weight, or refuse the log")
}

// addLogFlags declares the flags that say how to read the log.
func addLogFlags(fs *pflag.FlagSet, o *replayOptions) {
	m := &o.mapping
	fs.StringVar(&o.format, "log-format", "auto", "the log's `format`: auto, clf (common or combined), json (lines) or csv")
	fs.StringVar(&m.Time, "log-time", "", "the timestamp's `field` (default time; CLF: time_local)")
	fs.StringVar(&m.TimeFormat, "log-time-format", "", "the timestamp's `format`: clf, rfc3339, unix, unix_ms or a Go layout (default: guessed)")
	fs.StringVar(&m.Host, "log-host", "", "the host's or endpoint's `field` (default: one host): replay matches it to the scenario's host names, calibrate fits a model to each")
	fs.StringVar(&m.Status, "log-status", "", "the HTTP status's `field` (default status)")
	fs.StringVar(&m.Latency, "log-latency", "", "the latency's `field` (default request_time)")
	fs.StringVar(&m.LatencyUnit, "log-latency-unit", "", "the `unit` of a latency logged as a number: s (default) or ms")
	fs.StringVar(&m.Tenant, "log-tenant", "", "the tenant's or API key's `field` (default: one tenant)")
	fs.StringVar(&m.Cost, "log-cost", "", "the request cost's (tokens') `field` (default: none: replay then costs each request as its scenario costs the path, calibrate fits no cost)")
	fs.StringVar(&m.Remaining, "log-remaining", "", "the rate-limit remaining header's `field`, when logged")
	fs.StringVar(&m.Reset, "log-reset", "", "the rate-limit reset header's `field` (seconds), when logged")
	fs.StringVar(&o.reorder, "log-reorder", "5s", "how far back in time a line may be and still be put in its place (a `duration`; 0 for none)")
}

// completeReplay offers files for LOG and the bundled scenarios for
// SCENARIO.
func completeReplay(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 1 {
		return completeScenarios(cmd, args, toComplete)
	}
	return nil, cobra.ShellCompDirectiveDefault
}

// logOptions reads the flags that say how to read the log, each over the
// key of the scenario's [log] table (table nil: none) it names.
func (o *replayOptions) logOptions(table *scenarios.LogMapping) (planning.ReplayLog, error) {
	var log planning.ReplayLog
	format, reorder, unmatched, m := o.format, o.reorder, o.unmatched, o.mapping
	if table != nil {
		format, m = o.pick("log-format", o.format, table.Format), table.Mapping()
		unmatched = o.pick("log-unmatched", o.unmatched, table.Unmatched)
		if table.Reorder != nil && !o.given("log-reorder") {
			reorder = time.Duration(*table.Reorder).String()
		}
		for _, f := range []struct {
			flag      string
			dst       *string
			fromFlags string
		}{{"log-time", &m.Time, o.mapping.Time}, {"log-time-format", &m.TimeFormat, o.mapping.TimeFormat},
			{"log-host", &m.Host, o.mapping.Host}, {"log-status", &m.Status, o.mapping.Status},
			{"log-latency", &m.Latency, o.mapping.Latency}, {"log-latency-unit", &m.LatencyUnit, o.mapping.LatencyUnit},
			{"log-tenant", &m.Tenant, o.mapping.Tenant}, {"log-cost", &m.Cost, o.mapping.Cost},
			{"log-method", &m.Method, o.mapping.Method}, {"log-path", &m.Path, o.mapping.Path},
			{"log-remaining", &m.Remaining, o.mapping.Remaining}, {"log-reset", &m.Reset, o.mapping.Reset}} {
			*f.dst = o.pick(f.flag, f.fromFlags, *f.dst)
		}
	}
	f, err := logs.ParseFormat(format)
	if err != nil {
		return log, badUsage(fmt.Errorf("--log-format: %w", err))
	}
	// The table's keys were checked as the scenario loaded: a bad value
	// here is a flag's, a usage error as --log-format's is.
	if err := logs.CheckTimeFormat(m.TimeFormat); err != nil {
		return log, badUsage(fmt.Errorf("--log-time-format: %w", err))
	}
	if err := logs.CheckLatencyUnit(m.LatencyUnit); err != nil {
		return log, badUsage(fmt.Errorf("--log-latency-unit: %w", err))
	}
	d, err := parseReorder(reorder)
	if err != nil {
		return log, badUsage(err)
	}
	switch unmatched {
	case "draw", "": // "": a command without the flag
	case "refuse":
		log.RefuseUnmatched = true
	default:
		return log, badUsage(fmt.Errorf("--log-unmatched %q: want draw or refuse", unmatched))
	}
	switch o.latency {
	case "recorded":
		log.Latency = planning.LatencyRecorded
	case "model":
		log.Latency = planning.LatencyModel
	default:
		return log, badUsage(fmt.Errorf("--latency %q: want recorded or model", o.latency))
	}
	log.Options = logs.Options{Format: f, Mapping: m, Reorder: d}
	return log, nil
}

// pick is the flag's value when it was given or the table has none,
// else the table's.
func (o *replayOptions) pick(flag, fromFlag, fromTable string) string {
	if o.given != nil && o.given(flag) || fromTable == "" {
		return fromFlag
	}
	return fromTable
}

// replayed is one scenario replayed: its name, outcome and comparison.
type replayed struct {
	// name is the scenario's, numbered when an earlier run had it.
	name string
	sc   *scenarios.Scenario
	out  *client.Outcome
	cmp  *report.ReplayComparison
}

// cmdReplay replays the log at logPath through each scenario at paths.
func cmdReplay(env *environment, o *replayOptions, logPath string, paths []string) error {
	if _, err := o.logOptions(nil); err != nil { // the flags, before anything runs
		return err
	}
	var runs []replayed
	defer func() {
		for _, r := range runs {
			r.out.Series.Close()
		}
	}()
	dirs, names := map[string]int{}, map[string]int{}
	var stop error // a signal while the log was read for a later scenario
	for _, path := range paths {
		dir := o.outDir
		if dir != "" && len(paths) > 1 {
			dir = filepath.Join(o.outDir, folderName(path, dirs))
		}
		r, err := replayOne(env, o, logPath, path, dir)
		if errors.Is(err, planning.ErrInterrupted) && len(runs) > 0 {
			stop = err // the replays done are printed, then the stop exits
			break
		}
		if err != nil {
			return err
		}
		r.name = numbered(r.sc.Name, names)
		runs = append(runs, r)
		if r.out.Interrupted {
			break
		}
	}
	if err := printReplays(env.stdout, o.asJSON, runs); err != nil {
		return internalError(err)
	}
	if stop != nil {
		return stop
	}
	for _, r := range runs {
		if err := runExit(r.name, r.out, env.session); err != nil {
			return err
		}
	}
	return nil
}

// folderName is the folder of scenario path's outputs among several: its
// file's name, numbered when another took it.
func folderName(path string, taken map[string]int) string {
	return numbered(strings.TrimSuffix(filepath.Base(path), ".toml"), taken)
}

// numbered is name, with a number after it ("name-2") when taken already
// holds it; it counts name in taken. Runs and folders among several are
// told apart so.
func numbered(name string, taken map[string]int) string {
	taken[name]++
	if n := taken[name]; n > 1 {
		return fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

// replayOne replays the log at logPath through the scenario at path,
// read as its [log] table and the flags say, and writes its
// outputs into dir (none when "").
func replayOne(env *environment, o *replayOptions, logPath, path, dir string) (replayed, error) {
	st := env.session
	sc, cfg, err := loadBuilt(path, o.sets)
	if err != nil {
		return replayed{}, err
	}
	log, err := o.logOptions(sc.Log)
	if err != nil {
		return replayed{}, err
	}
	log.Path, log.Interrupt = logPath, &st.interrupt
	if dir != "" {
		unlock, err := holdOutputDir(dir, "replay", env.args)
		if err != nil {
			return replayed{}, err
		}
		defer unlock()
		if err := checkOutputDir(dir, sc, "scenario.toml"); err != nil {
			return replayed{}, invalidInput(fmt.Errorf("-o %s: %w", dir, err))
		}
	}
	opt := client.Options{Interrupt: &st.interrupt, SeriesUnread: dir == ""}
	prepared, err := planning.PrepareReplay(cfg, log)
	var out *client.Outcome
	var cmp *report.ReplayComparison
	if err == nil {
		var prog *progress
		if !o.quiet {
			prog = startRunProgress(env.stderr, prepared.Config())
			opt.Progress, opt.Clock = &prog.done, prog.clock
		}
		out, cmp, err = prepared.Run(opt)
		if prog != nil {
			prog.finish()
		}
	}
	if err != nil {
		if errors.Is(err, planning.ErrInterrupted) {
			return replayed{}, st.stopped(fmt.Errorf("limitsim replay: %s: %w: not replayed", sc.Name, err))
		}
		if errors.Is(err, planning.ErrReplay) || errors.Is(err, client.ErrConfig) || errors.Is(err, scenarios.ErrInvalid) {
			return replayed{}, invalidInput(verbatim(err))
		}
		return replayed{}, internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	report.Analyze(out.Results, out.Series)
	if err := out.Series.Err(); err != nil {
		out.Series.Close()
		return replayed{}, internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	if cmp.BadLines > 0 && !o.quiet {
		fmt.Fprintf(env.stderr, "limitsim: %s: %s skipped (first: %s)\n", log.Path, report.BadLines(cmp.BadLines), cmp.FirstBad[0])
	}
	if cmp.RecordsWithoutStatus == cmp.Records && !o.quiet {
		fmt.Fprintf(env.stderr, "limitsim: %s: no record logged a status, so production's refusals are unknown and every request counts as answered; name the status field with --log-status (or [log] status)\n", log.Path)
	} else if cmp.RecordsWithoutStatus > 0 && !o.quiet {
		fmt.Fprintf(env.stderr, "limitsim: %s: %s logged no status, each counted as answered\n", log.Path, report.Grouped(cmp.RecordsWithoutStatus))
	}
	if cmp.PathsUnmatched > 0 && !o.quiet {
		fmt.Fprintf(env.stderr, "limitsim: %s: %s matched no path by method and URL path, each drawn by weight (first: %s)\n",
			log.Path, report.Grouped(cmp.PathsUnmatched), cmp.FirstUnmatched[0])
	}
	if dir != "" {
		f := report.Folder{Dir: dir, FS: st.fsys}
		if err := writeOutputsTo(f, sc, out, sidecars{replay: cmp}, &st.outputs); err != nil {
			out.Series.Close()
			return replayed{}, outputsFailed("", dir, err)
		}
	}
	return replayed{sc: sc, out: out, cmp: cmp}, nil
}

// printReplays prints one replay as `run` prints a run, followed by its
// comparison with production; several, each's headline and comparison,
// then the configurations side by side with verdicts against the first.
func printReplays(w io.Writer, asJSON bool, runs []replayed) error {
	if len(runs) == 1 {
		r := runs[0]
		if asJSON {
			return writeReplayJSON(w, r.out.Results, r.cmp)
		}
		if err := report.WriteText(w, r.out.Results); err != nil {
			return err
		}
		return report.WriteReplayText(w, r.cmp)
	}
	named := make([]report.ReplayRun, len(runs))
	for i, r := range runs {
		named[i] = report.ReplayRun{Name: r.name, Replay: r.cmp}
	}
	if asJSON {
		return writeReplaysJSON(w, runs, report.ReplayVerdicts(named))
	}
	for _, r := range runs {
		h := report.Headline(r.out.Results)
		fmt.Fprintf(w, "== %s ==\n%s\n%s\n", r.name, h[0], h[1])
		if err := report.WriteReplayText(w, r.cmp); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return report.WriteReplayCompare(w, named)
}

// writeReplaysJSON writes {"runs": [{"name", "results", "replay"}],
// "verdicts": […]}.
func writeReplaysJSON(w io.Writer, runs []replayed, verdicts []report.ReplayVerdict) error {
	type run struct {
		Name    string                   `json:"name"`
		Results json.RawMessage          `json:"results"`
		Replay  *report.ReplayComparison `json:"replay"`
	}
	doc := struct {
		Runs     []run                  `json:"runs"`
		Verdicts []report.ReplayVerdict `json:"verdicts"`
	}{Verdicts: verdicts}
	for _, r := range runs {
		var b bytes.Buffer
		if err := metrics.WriteJSON(&b, r.out.Results); err != nil {
			return err
		}
		doc.Runs = append(doc.Runs, run{r.name, b.Bytes(), r.cmp})
	}
	return printJSON(w, doc)
}

// writeReplayJSON writes {"results": …, "replay": …}: the run's JSON as
// `limitsim run --json` prints it, and the comparison.
func writeReplayJSON(w io.Writer, r *metrics.Results, c *report.ReplayComparison) error {
	var b bytes.Buffer
	if err := metrics.WriteJSON(&b, r); err != nil {
		return err
	}
	return printJSON(w, struct {
		Results json.RawMessage          `json:"results"`
		Replay  *report.ReplayComparison `json:"replay"`
	}{b.Bytes(), c})
}

// parseReorder reads --log-reorder: a duration ≥ 0, 0 for no reordering.
func parseReorder(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--log-reorder %q: want a duration ≥ 0 such as 5s", text)
	}
	if d == 0 {
		return -1, nil // logs.Options: negative is none
	}
	return d, nil
}
