package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	reorder                 string
}

// newReplayCommand declares `limitsim replay`.
func newReplayCommand(env *environment) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay LOG SCENARIO",
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
is read), JSON lines or CSV; --log-* flags name its fields.`,
		Example: "  limitsim replay access.log token-bucket --log-tenant remote_user\n" +
			"  limitsim replay calls.jsonl mine.toml --log-time ts --log-time-format unix_ms --log-tenant key --log-cost tokens -o out",
		Args:              exactArgs(2),
		ValidArgsFunction: completeReplay,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdReplay(env, &o, args[0], args[1])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "metrics.json, replay.json, timeseries.csv, scenario.toml, charts and reports")
	addJSONFlag(fs, &o.asJSON, "the results and the comparison")
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "of the scenario")
	fs.StringVar(&o.latency, "latency", "recorded", "where an admitted request's latency comes from: `recorded` (the log's) or model (the scenario's upstream)")
	addLogFlags(fs, &o)
	return cmd
}

// addLogFlags declares the flags that say how to read the log.
func addLogFlags(fs *pflag.FlagSet, o *replayOptions) {
	m := &o.mapping
	fs.StringVar(&o.format, "log-format", "auto", "the log's `format`: auto, clf (common or combined), json (lines) or csv")
	fs.StringVar(&m.Time, "log-time", "", "the timestamp's `field` (default time; CLF: time_local)")
	fs.StringVar(&m.TimeFormat, "log-time-format", "", "the timestamp's `format`: clf, rfc3339, unix, unix_ms or a Go layout (default: guessed)")
	fs.StringVar(&m.Host, "log-host", "", "the host's or endpoint's `field`, matched to the scenario's host names (default: one host)")
	fs.StringVar(&m.Status, "log-status", "", "the HTTP status's `field` (default status)")
	fs.StringVar(&m.Latency, "log-latency", "", "the latency's `field` (default request_time)")
	fs.StringVar(&m.LatencyUnit, "log-latency-unit", "", "the `unit` of a latency logged as a number: s (default) or ms")
	fs.StringVar(&m.Tenant, "log-tenant", "", "the tenant's or API key's `field` (default: one tenant)")
	fs.StringVar(&m.Cost, "log-cost", "", "the request cost's (tokens') `field` (default: cost 1)")
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

// logOptions reads the flags that say how to read the log.
func (o *replayOptions) logOptions() (planning.ReplayLog, error) {
	var log planning.ReplayLog
	f, err := logs.ParseFormat(o.format)
	if err != nil {
		return log, badUsage(fmt.Errorf("--log-format: %w", err))
	}
	reorder, err := parseReorder(o.reorder)
	if err != nil {
		return log, badUsage(err)
	}
	switch o.latency {
	case "recorded":
		log.Latency = planning.LatencyRecorded
	case "model":
		log.Latency = planning.LatencyModel
	default:
		return log, badUsage(fmt.Errorf("--latency %q: want recorded or model", o.latency))
	}
	log.Options = logs.Options{Format: f, Mapping: o.mapping, Reorder: reorder}
	return log, nil
}

// cmdReplay replays the log at logPath through the scenario at path.
func cmdReplay(env *environment, o *replayOptions, logPath, path string) error {
	stdout, stderr, st := env.stdout, env.stderr, env.session
	log, err := o.logOptions()
	if err != nil {
		return err
	}
	log.Path = logPath
	sc, cfg, err := loadBuilt(path, o.sets)
	if err != nil {
		return err
	}
	if o.outDir != "" {
		unlock, err := holdOutputDir(o.outDir, "replay", env.args)
		if err != nil {
			return err
		}
		defer unlock()
		if err := checkOutputDir(o.outDir, sc, "scenario.toml"); err != nil {
			return invalidInput(fmt.Errorf("-o %s: %w", o.outDir, err))
		}
	}
	opt := client.Options{Interrupt: &st.interrupt, SeriesUnread: o.outDir == ""}
	out, cmp, err := planning.Replay(cfg, log, opt)
	if err != nil {
		if errors.Is(err, planning.ErrReplay) || errors.Is(err, client.ErrConfig) || errors.Is(err, scenarios.ErrInvalid) {
			return invalidInput(verbatim(err))
		}
		return internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	report.Analyze(out.Results, out.Series)
	defer out.Series.Close()
	if err := out.Series.Err(); err != nil {
		return internalError(fmt.Errorf("%s: %w", sc.Name, err))
	}
	if cmp.BadLines > 0 && !o.quiet {
		fmt.Fprintf(stderr, "limitsim: %s: %d bad lines skipped (first: %s)\n", logPath, cmp.BadLines, cmp.FirstBad[0])
	}
	if o.outDir != "" {
		f := report.Folder{Dir: o.outDir, FS: st.fsys}
		if err := writeOutputsTo(f, sc, out, sidecars{replay: cmp}, &st.outputs); err != nil {
			return outputsFailed("", o.outDir, err)
		}
	}
	if o.asJSON {
		err = writeReplayJSON(stdout, out.Results, cmp)
	} else {
		err = report.WriteText(stdout, out.Results)
		if err == nil {
			err = report.WriteReplayText(stdout, cmp)
		}
	}
	if err != nil {
		return internalError(err)
	}
	return runExit(sc.Name, out, st)
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
