package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/upstream"
)

// eachRecord calls fn with the trimmed text and number of every line of
// path that is neither blank nor a # comment, and wraps read errors with
// the file name. A byte-order mark opening the file is skipped.
func eachRecord(path string, fn func(line int, text string) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := fn(line, text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// latencyOf reads a latency: seconds, or a duration such as 120ms. ok is
// false for text that is neither; err is set for a latency that is not
// positive, or past the longest duration (NaN and infinities too).
func latencyOf(text string) (d time.Duration, ok bool, err error) {
	outOfRange := func() error { return fmt.Errorf("latency %s must be positive seconds, below about 285 years", text) }
	if f, ferr := strconv.ParseFloat(text, 64); ferr == nil || errors.Is(ferr, strconv.ErrRange) {
		if ferr != nil || !(f > 0 && f < 9e9) {
			return 0, true, outOfRange()
		}
		return time.Duration(f * 1e9), true, nil
	}
	pd, perr := time.ParseDuration(text)
	if perr != nil {
		if scenarios.DurationShaped(text) { // well formed, past the longest duration
			return 0, true, outOfRange()
		}
		return 0, false, nil
	}
	if pd <= 0 {
		return 0, true, fmt.Errorf("latency %v must be positive", pd)
	}
	return pd, true, nil
}

// readSamples reads one latency per line: seconds, or a duration such as
// 120ms. A first line without a digit is a header; a line of several
// fields (a CSV row) is refused rather than read by one of them. Errors
// name the file and the line.
func readSamples(path string) ([]time.Duration, error) {
	var out []time.Duration
	first := true
	err := eachRecord(path, func(line int, text string) error {
		if header := first && scenarios.IsHeader(text); header {
			first = false
			return nil
		}
		first = false
		if fields := strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(",;\t", r) }); len(fields) > 1 {
			return fmt.Errorf("%s:%d: %q holds %d fields: fit latency reads one latency a line (cut the column out first, e.g. cut -d, -f2 %s)",
				path, line, text, len(fields), filepath.Base(path))
		}
		d, ok, err := latencyOf(text)
		switch {
		case !ok:
			return fmt.Errorf("%s:%d: %q is not a latency (seconds, or a duration such as 120ms)%s", path, line, text, scenarios.HeaderHint(line == 1))
		case err != nil:
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%s: %d samples; a fit needs at least two", path, len(out))
	}
	return out, nil
}

// fitOptions are the flags of `limitsim fit latency` and `fit arrivals`.
type fitOptions struct {
	asJSON                  bool
	chart, traceOut, layout string
	column                  int
}

// newFitCommand declares `limitsim fit` with its two subcommands.
func newFitCommand(env *environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fit",
		Short: "Fit latencies or arrivals and print the scenario keys to paste",
		Long:  "Fit a latency distribution to samples, or an arrival process to timestamps, and print the scenario keys to paste.",
		Example: "  limitsim fit latency samples.csv --chart fit.png\n" +
			"  limitsim fit arrivals access.log --column 4 --time-format '02/Jan/2006:15:04:05 -0700'",
		Args: cobra.ArbitraryArgs,
		RunE: needsSubcommand,
	}
	var latency fitOptions
	latencyCmd := &cobra.Command{
		Use:     "latency SAMPLES.csv",
		Short:   "Fit latency families to samples (or a percentile table)",
		Long:    "Fit latency families to samples, one duration a line (or a table of percentiles), and print the [[upstream]] latency line to paste.",
		Example: "  limitsim fit latency samples.csv --chart fit.png",
		Args:    exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkFitOutputs(&latency); err != nil {
				return err
			}
			return fitLatency(args[0], latency.chart, latency.asJSON, env.stdout)
		},
	}
	addJSONFlag(latencyCmd.Flags(), &latency.asJSON, "the fits")
	latencyCmd.Flags().StringVar(&latency.chart, "chart", "", "draw the data against the fits to this .png or .svg `file`")
	var arrivals fitOptions
	arrivalsCmd := &cobra.Command{
		Use:     "arrivals TIMESTAMPS",
		Short:   "Fit an arrival process to timestamps",
		Long:    "Fit an arrival process to request timestamps (a log or a CSV) and print the [workload] keys to paste.",
		Example: "  limitsim fit arrivals access.log --column 4 --time-format '02/Jan/2006:15:04:05 -0700' --trace-out arrivals.txt",
		Args:    exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkFitOutputs(&arrivals); err != nil {
				return err
			}
			return fitArrivals(args[0], timestampFormat{column: arrivals.column, layout: arrivals.layout}, arrivals.traceOut, arrivals.chart, arrivals.asJSON, env.stdout)
		},
	}
	fs := arrivalsCmd.Flags()
	addJSONFlag(fs, &arrivals.asJSON, "the fit")
	fs.StringVar(&arrivals.chart, "chart", "", "draw the data against the fit to this .png or .svg `file`")
	fs.IntVar(&arrivals.column, "column", 1, "the column holding the timestamp (1 = first; comma-separated, else whitespace-separated)")
	fs.StringVar(&arrivals.layout, "time-format", "", "s (default: seconds), ms, us, ns, rfc3339, or a Go time layout such as '02/Jan/2006:15:04:05 -0700'")
	fs.StringVar(&arrivals.traceOut, "trace-out", "", "write the arrivals as a trace (seconds since the first) to this `file`")
	cmd.AddCommand(latencyCmd, arrivalsCmd)
	return cmd
}

// checkFitOutputs checks that the files of --chart and --trace-out can
// be written.
func checkFitOutputs(o *fitOptions) error {
	for _, out := range []struct{ flag, path string }{{"--trace-out", o.traceOut}, {"--chart", o.chart}} {
		if out.path == "" {
			continue
		}
		if err := checkOutputFile(out.path); err != nil {
			return invalidInput(fmt.Errorf("limitsim fit: %s: %w", out.flag, err))
		}
	}
	return nil
}

// fitLatency fits latency families to the samples in path and prints the
// line to paste into an [[upstream]].
func fitLatency(path, chart string, asJSON bool, stdout io.Writer) error {
	pos := []string{"latency", path}
	if ps, qs, err := readPercentiles(path); err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %w", err))
	} else if ps != nil {
		return fitLatencyTable(path, chart, ps, qs, asJSON, stdout)
	}
	samples, err := readSamples(pos[1])
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %w", err))
	}
	fits, err := upstream.FitLatency(samples)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %s: %w", pos[1], err))
	}
	secs := make([]float64, len(samples))
	for i, d := range samples {
		secs[i] = d.Seconds()
	}
	if err := writeFitChart(chart, path, secs, nil, fits); err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %w", err))
	}
	ps := []float64{0.5, 0.9, 0.99, 0.999}
	data := empiricalQuantiles(samples, ps)
	type row struct {
		Dist      string             `json:"dist"`
		KS        float64            `json:"ks"`
		Latency   string             `json:"latency"`
		Quantiles map[string]float64 `json:"quantiles_s"`
	}
	var rows []row
	// A samples path is relative to the scenario's folder: the line names
	// the file alone, to be put beside the scenario.
	for _, f := range append(fits, upstream.Fit{Dist: upstream.Empirical{SamplesFile: filepath.Base(pos[1])}}) {
		line, err := latencyLine(f.Dist)
		if err != nil {
			return internalError(fmt.Errorf("limitsim fit: %w", err))
		}
		r := row{Dist: upstream.Name(f.Dist), KS: f.KS, Latency: line, Quantiles: map[string]float64{}}
		for _, p := range ps {
			if _, fromData := f.Dist.(upstream.Empirical); fromData {
				r.Quantiles[pName(p)] = data[p].Seconds()
			} else {
				r.Quantiles[pName(p)] = f.Quantile(p).Seconds()
			}
		}
		rows = append(rows, r)
	}
	if asJSON {
		err = printJSON(stdout, struct {
			Samples int   `json:"samples"`
			Fits    []row `json:"fits"`
		}{len(samples), rows})
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "%d samples; families ranked by the Kolmogorov–Smirnov statistic (smaller fits better)\n\n", len(samples))
		fmt.Fprintf(&b, "%-12s %8s %10s %10s %10s %10s\n", "", "KS", "p50", "p90", "p99", "p99.9")
		fmt.Fprintf(&b, "%-12s %8s %10s %10s %10s %10s\n", "data", "", data[0.5], data[0.9], data[0.99], data[0.999])
		for _, r := range rows[:len(rows)-1] {
			fmt.Fprintf(&b, "%-12s %8.4f", r.Dist, r.KS)
			for _, p := range ps {
				fmt.Fprintf(&b, " %10s", time.Duration(r.Quantiles[pName(p)]*1e9).Round(time.Microsecond))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nbest fit, to paste into [[upstream]]:\n%s\nor the samples themselves (put %s beside the scenario: a samples path is relative to the scenario's folder):\n%s\n",
			rows[0].Latency, filepath.Base(pos[1]), rows[len(rows)-1].Latency)
		_, err = io.WriteString(stdout, b.String())
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}

func pName(p float64) string {
	return "p" + strings.TrimPrefix(strconv.FormatFloat(100*p, 'g', -1, 64), "0")
}

// empiricalQuantiles are the samples' quantiles (nearest rank).
func empiricalQuantiles(samples []time.Duration, ps []float64) map[float64]time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	out := map[float64]time.Duration{}
	for _, p := range ps {
		i := int(float64(len(s))*p+0.999999999) - 1
		out[p] = s[min(max(i, 0), len(s)-1)].Round(time.Microsecond)
	}
	return out
}

// latencyLine is the scenario line for a latency distribution.
func latencyLine(d upstream.Dist) (string, error) {
	text, err := scenarios.Latency{Dist: d}.MarshalTOML()
	return "latency = " + string(text), err
}

// writeFitChart draws the data against the fits to path (.png or .svg);
// an empty path draws nothing.
func writeFitChart(path, source string, data, ps []float64, fits []upstream.Fit) error {
	if path == "" {
		return nil
	}
	curves := make([]report.Curve, len(fits))
	for i, f := range fits {
		curves[i] = report.Curve{Name: upstream.Name(f.Dist), CDF: f.CDF}
	}
	return writeChart(path, func() (report.Chart, error) { return report.FitCDFChart(filepath.Base(source), data, ps, curves) })
}

// writeChart renders a chart to path as PNG or SVG, by its extension.
func writeChart(path string, draw func() (report.Chart, error)) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("--chart %s: the file must end in .png or .svg", path)
	}
	c, err := draw()
	if err != nil {
		return err
	}
	body := c.PNG
	if ext == ".svg" {
		body = c.SVG
	}
	return os.WriteFile(path, body, 0o644)
}
