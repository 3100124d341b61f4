package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/upstream"
)

// percentileName reads p50, p90, p99, p999 or p99.9 as a fraction: digits
// after a point are a percentage, a single digit is a percentage, and
// longer digits are the decimals of the fraction (p999 is 0.999).
func percentileName(name string) (float64, bool) {
	digits, ok := strings.CutPrefix(strings.ToLower(name), "p")
	if !ok || digits == "" || digits[0] < '0' || digits[0] > '9' {
		return 0, false
	}
	if strings.Contains(digits, ".") || len(digits) == 1 {
		v, err := strconv.ParseFloat(digits, 64)
		return v / 100, err == nil
	}
	v, err := strconv.ParseFloat("0."+digits, 64)
	return v, err == nil
}

// readPercentiles reads a table of percentiles, one "p99,0.8" (or
// "p99 = 800ms", "p99: 0.8") per line. It returns nil slices, and no
// error, when the file's first record is not a percentile: the file holds
// samples. Errors name the file and the line.
func readPercentiles(path string) ([]float64, []time.Duration, error) {
	var ps []float64
	var qs []time.Duration
	notTable, records := false, 0
	err := eachRecord(path, func(line int, text string) error {
		if records++; notTable {
			return nil
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(",=: \t", r) })
		p, isP := 0.0, len(fields) > 0
		if isP {
			p, isP = percentileName(fields[0])
		}
		if !isP {
			if ps == nil {
				// A header (a first line without a digit), or samples.
				notTable = records > 1 || !scenarios.IsHeader(text)
				return nil
			}
			return fmt.Errorf("%s:%d: %q is not a percentile such as p99 = 800ms", path, line, text)
		}
		if len(fields) != 2 {
			return fmt.Errorf("%s:%d: %q: want a percentile and a latency, such as p99 = 800ms", path, line, text)
		}
		d, ok, lerr := latencyOf(fields[1])
		if !ok {
			return fmt.Errorf("%s:%d: %q is not a latency (seconds, or a duration such as 120ms)", path, line, fields[1])
		}
		if !(p > 0 && p < 1) || lerr != nil {
			return fmt.Errorf("%s:%d: %q: the percentile must be between 0 and 100 and the latency positive", path, line, text)
		}
		if n := len(ps); n > 0 && (p <= ps[n-1] || d < qs[n-1]) {
			return fmt.Errorf("%s:%d: %q: percentiles must rise line by line, and latencies must not fall", path, line, text)
		}
		ps, qs = append(ps, p), append(qs, d)
		return nil
	})
	if err != nil || notTable || len(ps) == 0 {
		return nil, nil, err
	}
	if len(ps) < 2 {
		return nil, nil, fmt.Errorf("%s: %d percentiles; a fit needs at least two", path, len(ps))
	}
	return ps, qs, nil
}

// fitLatencyTable fits latency families to a table of percentiles and
// prints the line to paste into an [[upstream]].
func fitLatencyTable(path, chart string, ps []float64, qs []time.Duration, asJSON bool, stdout io.Writer) error {
	fits, err := upstream.FitQuantiles(ps, qs)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %s: %w", path, err))
	}
	secs := make([]float64, len(qs))
	for i, q := range qs {
		secs[i] = q.Seconds()
	}
	if err := writeFitChart(chart, path, secs, ps, fits); err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %w", err))
	}
	type row struct {
		Dist        string             `json:"dist"`
		QuantileErr float64            `json:"quantile_err"`
		Latency     string             `json:"latency"`
		Quantiles   map[string]float64 `json:"quantiles_s"`
	}
	var rows []row
	for _, f := range fits {
		line, err := latencyLine(f.Dist)
		if err != nil {
			return internalError(fmt.Errorf("limitsim fit: %w", err))
		}
		r := row{Dist: upstream.Name(f.Dist), QuantileErr: f.QuantileErr, Latency: line, Quantiles: map[string]float64{}}
		for _, p := range ps {
			r.Quantiles[pName(p)] = f.Quantile(p).Seconds()
		}
		rows = append(rows, r)
	}
	if asJSON {
		err = printJSON(stdout, struct {
			Percentiles int   `json:"percentiles"`
			Fits        []row `json:"fits"`
		}{len(ps), rows})
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "%d percentiles; families ranked by the largest relative gap to them (smaller fits better)\n\n%-12s %8s", len(ps), "", "max gap")
		for _, p := range ps {
			fmt.Fprintf(&b, " %10s", pName(p))
		}
		fmt.Fprintf(&b, "\n%-12s %8s", "data", "")
		for _, q := range qs {
			fmt.Fprintf(&b, " %10s", q.Round(time.Microsecond))
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "\n%-12s %7.2f%%", r.Dist, 100*r.QuantileErr)
			for _, p := range ps {
				fmt.Fprintf(&b, " %10s", time.Duration(r.Quantiles[pName(p)]*1e9).Round(time.Microsecond))
			}
		}
		fmt.Fprintf(&b, "\n\nbest fit, to paste into [[upstream]]:\n%s\n(an empirical distribution needs the samples themselves, not their percentiles)\n", rows[0].Latency)
		_, err = io.WriteString(stdout, b.String())
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}
