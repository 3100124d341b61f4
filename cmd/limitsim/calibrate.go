package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Files calibrate writes into its output folder.
const (
	calibratedScenarioFile = "scenario.toml"
	calibrationJSONFile    = "calibration.json"
	calibrationTextFile    = "calibration.txt"
)

// calibrateOptions are the flags of `limitsim calibrate`.
type calibrateOptions struct {
	log          replayOptions // the --log-* flags
	thresholdPct percentValue
	seed         uint64
	name         string
}

// newCalibrateCommand declares `limitsim calibrate`.
func newCalibrateCommand(env *environment) *cobra.Command {
	var o calibrateOptions
	cmd := &cobra.Command{
		Use:   "calibrate LOG",
		Short: "Build a scenario from an access log and say how well it fits",
		Long: `Build a scenario from an access log: per host, the arrival process (as
'fit arrivals' judges it), the latency of the answered requests (the
family 'fit latency' fits best) and the server quota inferred from when
the 429s came and what the rate-limit headers said (a fixed window, a
sliding window or a token bucket, with its limit and window, or its rate
and burst; or a concurrency limit, from the latencies logged). The
evidence for
each quota is printed: the candidates tried and how well each predicts
the refusals. A host with no 429s gets no quota.

With --log-cost, windows and buckets that count each request's cost
(unit = "cost") are tried too, and the workload takes the logged costs'
distribution; with --log-tenant, the workload has each tenant with its
share, or with its own arrival process when one comes in bursts or
evenly spaced (a scenario's hosts share one process: a host's own fit is
reported, and used only for a log of one host).

The model is then run on the log's own arrivals, as replay does, and
compared with the log minute by minute: goodput, 429s and latency p50
and p99, and the mean absolute percentage error of each. The model is
trusted for planning when every error is under --threshold percent,
every host's refusals follow a quota, and the scenario written, run with
its own arrivals, serves and refuses within --threshold of the log's
whole minutes; otherwise calibrate exits 6.

-o DIR writes scenario.toml (ready for 'limitsim plan'), calibration.txt
(what is printed) and calibration.json. The --log-* flags say how to
read the log, as for replay.`,
		Example: "  limitsim calibrate access.log -o calibrated\n" +
			"  limitsim calibrate calls.csv --log-cost points --log-tenant api_key -o calibrated\n" +
			"  limitsim calibrate calls.jsonl --log-host upstream --log-remaining x_ratelimit_remaining --log-reset x_ratelimit_reset -o calibrated\n" +
			"  limitsim plan calibrated/scenario.toml --sweep workload.rate=50,100,150 --constraint 'rate_429<0.01'",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.log.given = func(name string) bool { return cmd.Flags().Changed(name) }
			return cmdCalibrate(env, &o, args[0])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.log.outDir, "scenario.toml, calibration.txt and calibration.json")
	addJSONFlag(fs, &o.log.asJSON, "the calibration")
	o.thresholdPct = percentValue(100 * planning.DefaultCalibrationThreshold)
	fs.Var(&o.thresholdPct, "threshold",
		"the largest mean absolute percentage error, in `percent`, of each figure under which the model is trusted")
	fs.Uint64Var(&o.seed, "seed", 1, "the `seed` of the streams that spread times logged to the second for the arrival fit and sample a host's latencies beyond its 200,000th")
	fs.StringVar(&o.name, "name", "", "the scenario's `name` (default: the log's file name, calibrated)")
	addLogFlags(fs, &o.log)
	return cmd
}

// cmdCalibrate calibrates a scenario from the log at logPath.
func cmdCalibrate(env *environment, o *calibrateOptions, logPath string) error {
	if !(o.thresholdPct > 0 && o.thresholdPct <= 100) { // also NaN
		return invalidInput(fmt.Errorf("--threshold %g: want a percentage above 0, at most 100", float64(o.thresholdPct)))
	}
	o.log.latency = "model"
	log, err := o.log.logOptions(nil)
	if err != nil {
		return err
	}
	log.Path, log.Interrupt = logPath, &env.session.interrupt
	dir := o.log.outDir
	if dir != "" {
		unlock, err := holdOutputDir(dir, "calibrate", env.args)
		if err != nil {
			return err
		}
		defer unlock()
		if err := checkWritable(dir); err != nil {
			return invalidInput(fmt.Errorf("-o %s: %w", dir, err))
		}
	}
	c, err := calibrate(env, o, log)
	if err != nil {
		return err
	}
	if err := printCalibration(env.stdout, o.log.asJSON, c.cal); err != nil {
		return internalError(err)
	}
	if dir != "" {
		if err := writeCalibration(report.Folder{Dir: dir, FS: env.session.fsys}, c); err != nil {
			return outputsFailed("", dir, err)
		}
	}
	if !c.cal.Trusted {
		return &exitError{code: exitUntrusted, err: fmt.Errorf("%s: %s", logPath, c.cal.Verdict)}
	}
	return nil
}

// calibrated is a calibration and the scenario it wrote.
type calibrated struct {
	cal      *planning.Calibration
	scenario string
}

// calibrate fits the log, renders the scenario, loads it back and
// checks it on the log's arrivals.
func calibrate(env *environment, o *calibrateOptions, log planning.ReplayLog) (calibrated, error) {
	c, err := planning.Calibrate(log, o.seed)
	if errors.Is(err, planning.ErrInterrupted) {
		return calibrated{}, env.session.stopped(fmt.Errorf("limitsim calibrate: %w: nothing is written", err))
	}
	if err != nil {
		return calibrated{}, calibrateError(err)
	}
	name := o.name
	if name == "" {
		name = calibratedName(log.Path)
	}
	text, err := c.Scenario(name)
	if err != nil {
		return calibrated{}, internalError(err)
	}
	sc, err := scenarios.Parse(calibratedScenarioFile, []byte(text))
	if err != nil && o.name != "" {
		return calibrated{}, invalidInput(fmt.Errorf("--name %q: %w", o.name, err))
	}
	if err != nil {
		return calibrated{}, internalError(fmt.Errorf("the calibrated scenario does not load: %w", err))
	}
	cfg, err := sc.Build()
	if err != nil {
		return calibrated{}, internalError(fmt.Errorf("the calibrated scenario does not build: %w", err))
	}
	out, err := c.Check(cfg, float64(o.thresholdPct)/100, client.Options{Interrupt: &env.session.interrupt, SeriesUnread: true})
	if errors.Is(err, planning.ErrInterrupted) { // reading the log again, for the check
		return calibrated{}, env.session.stopped(fmt.Errorf("limitsim calibrate: %w, to check the model: nothing is written", err))
	}
	if err != nil {
		return calibrated{}, calibrateError(err)
	}
	out.Series.Close()
	if out.Interrupted {
		return calibrated{}, env.session.stopped(fmt.Errorf("limitsim calibrate: interrupted while checking the model, at %.3fs simulated: nothing is written", out.Results.ElapsedS))
	}
	if err := runExit(sc.Name, out, env.session); err != nil {
		return calibrated{}, err
	}
	if err := checkWritten(env, c, sc); err != nil {
		return calibrated{}, err
	}
	return calibrated{cal: c, scenario: text}, nil
}

// checkWritten runs the written scenario with its own arrivals and
// compares it with the whole log (Calibration.CheckWorkload).
func checkWritten(env *environment, c *planning.Calibration, sc *scenarios.Scenario) error {
	cfg, err := sc.Build()
	if err != nil {
		return internalError(fmt.Errorf("the calibrated scenario does not build: %w", err))
	}
	out, err := c.CheckWorkload(cfg, client.Options{Interrupt: &env.session.interrupt, SeriesUnread: true})
	if err != nil {
		return calibrateError(err)
	}
	if out.Interrupted {
		return env.session.stopped(fmt.Errorf("limitsim calibrate: interrupted while running the written scenario, at %.3fs simulated: nothing is written", out.Results.ElapsedS))
	}
	return nil
}

// calibratedName is the default name of the scenario calibrated from
// the log at path: its file name without extension, each character a
// name may not have made '-', and "-calibrated".
func calibratedName(path string) string {
	base := filepath.Base(path)
	base = strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '-'
	}, strings.TrimSuffix(base, filepath.Ext(base)))
	return base + "-calibrated"
}

// calibrateError is invalid input for a log that cannot be read or
// fitted, an internal error otherwise.
func calibrateError(err error) error {
	if errors.Is(err, planning.ErrCalibrate) || errors.Is(err, planning.ErrReplay) || errors.Is(err, client.ErrConfig) || errors.Is(err, scenarios.ErrInvalid) {
		return invalidInput(verbatim(err))
	}
	return internalError(err)
}

// printCalibration prints the calibration as text or JSON.
func printCalibration(w io.Writer, asJSON bool, c *planning.Calibration) error {
	if asJSON {
		return printJSON(w, c)
	}
	return c.WriteText(w)
}

// writeCalibration writes the scenario, the text and the JSON into f.
func writeCalibration(f report.Folder, c calibrated) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{calibratedScenarioFile, func(w io.Writer) error { _, err := io.WriteString(w, c.scenario); return err }},
		{calibrationTextFile, c.cal.WriteText},
		{calibrationJSONFile, func(w io.Writer) error { return printJSON(w, c.cal) }},
	}
	for _, file := range files {
		err := f.WriteFile(file.name, func(w io.Writer) (int64, error) { return 0, file.write(w) })
		if err != nil {
			return err
		}
	}
	return nil
}

// percentValue is a flag's number of percent, written 10 or 10% alike
// (compare's --threshold takes the sign, so calibrate's takes it too).
type percentValue float64

// String prints the percentage without its sign, as the default shows.
func (p *percentValue) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) }

// Set reads a number of percent, with or without a trailing %.
func (p *percentValue) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil {
		return fmt.Errorf("want a number of percent such as 10 or 10%%")
	}
	*p = percentValue(v)
	return nil
}

// Type names the flag's value in help.
func (p *percentValue) Type() string { return "percent" }
