package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/models/arrivalfit"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim"
)

// timestampFormat says where a timestamp is on a line and how it is
// written.
type timestampFormat struct {
	column int    // 1-based
	layout string // "", "s", "ms", "us", "ns", "rfc3339" or a Go layout
}

// numeric reports whether the format reads numbers, and their unit.
func (f timestampFormat) numeric() (time.Duration, bool) {
	switch f.layout {
	case "", "s":
		return time.Second, true
	case "ms":
		return time.Millisecond, true
	case "us":
		return time.Microsecond, true
	case "ns":
		return time.Nanosecond, true
	}
	return 0, false
}

// field returns the timestamp's text on a line: the column of a
// comma-separated line, else of the whitespace-separated fields (as many
// as the layout has), without surrounding brackets or quotes.
func (f timestampFormat) field(text string) (string, bool) {
	var fields []string
	width := 1
	if strings.Contains(text, ",") {
		fields = strings.Split(text, ",")
	} else {
		fields = strings.Fields(text)
		if _, num := f.numeric(); !num && f.layout != "rfc3339" {
			width = len(strings.Fields(f.layout))
		}
	}
	if f.column+width-1 > len(fields) {
		return "", false
	}
	return strings.Trim(strings.Join(fields[f.column-1:f.column-1+width], " "), ` []"'`), true
}

// parse reads one timestamp as a duration since its origin (0 for plain
// numbers, the Unix epoch for dates), with the precision it was logged
// to: a number's unit, or a second, divided by ten for each digit of its
// fraction; a layout's grain when coarser than a second.
func (f timestampFormat) parse(text string) (time.Duration, time.Duration, error) {
	if unit, ok := f.numeric(); ok {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			if t, terr := time.Parse(time.RFC3339Nano, text); terr == nil && f.layout == "" {
				return time.Duration(t.UnixNano()), logs.LayoutPrecision(time.RFC3339Nano, text), nil
			}
			return 0, 0, fmt.Errorf("%q is not a number", text)
		}
		if !(v >= 0 && v*float64(unit) <= float64(1<<62)) { // also NaN
			return 0, 0, fmt.Errorf("timestamp %s is out of range (it must be a number ≥ 0)%s", text, f.unitHint(v))
		}
		return time.Duration(v * float64(unit)), numberPrecision(text, unit), nil
	}
	layout := f.layout
	if layout == "rfc3339" {
		layout = time.RFC3339Nano
	}
	t, err := time.Parse(layout, text)
	if err != nil {
		return 0, 0, fmt.Errorf("%q does not match --time-format %q", text, f.layout)
	}
	return time.Duration(t.UnixNano()), logs.LayoutPrecision(layout, text), nil
}

// unitHint suggests a finer --time-format for a number v too large in
// the format's unit: Unix milliseconds (or microseconds) read as seconds.
func (f timestampFormat) unitHint(v float64) string {
	cur, _ := f.numeric()
	for _, u := range []struct {
		flag, name string
		unit       time.Duration
	}{{"ms", "milliseconds", time.Millisecond}, {"us", "microseconds", time.Microsecond}, {"ns", "nanoseconds", time.Nanosecond}} {
		if v > 0 && u.unit < cur && v*float64(u.unit) <= float64(1<<62) {
			return fmt.Sprintf(": Unix %s? (--time-format %s)", u.name, u.flag)
		}
	}
	return ""
}

// numberPrecision is how finely a number of units was written: the unit,
// divided by ten for each digit after its point.
func numberPrecision(text string, unit time.Duration) time.Duration {
	_, frac, ok := strings.Cut(text, ".")
	if !ok {
		return unit
	}
	p := unit
	for _, c := range frac {
		if c < '0' || c > '9' || p < 10 {
			break
		}
		p /= 10
	}
	return p
}

// readTimestamps reads one arrival per line, and the finest precision any
// was logged to. A first line without a digit is a header. Errors name
// the file and the line.
func readTimestamps(path string, f timestampFormat) ([]time.Duration, time.Duration, error) {
	if f.column < 1 {
		return nil, 0, fmt.Errorf("--column %d: columns count from 1", f.column)
	}
	var out []time.Duration
	lastLine, finest, first := 0, time.Duration(0), true
	err := eachRecord(path, func(line int, text string) error {
		if header := first && scenarios.IsHeader(text); header {
			first = false
			return nil
		}
		first = false
		field, ok := f.field(text)
		if !ok {
			return fmt.Errorf("%s:%d: no column %d", path, line, f.column)
		}
		at, prec, err := f.parse(field)
		if err != nil {
			return fmt.Errorf("%s:%d: %w%s", path, line, err, scenarios.HeaderHint(line == 1))
		}
		if len(out) > 0 && at < out[len(out)-1] {
			return fmt.Errorf("%s:%d: timestamp %s is earlier than line %d's: arrivals must be sorted", path, line, field, lastLine)
		}
		if finest == 0 || prec < finest {
			finest = prec
		}
		out, lastLine = append(out, at), line
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("%s: no timestamps", path)
	}
	return out, finest, nil
}

// spreadSeconds spreads times all logged to the second or coarser
// (precision), when more than spreadTiedShare of the seconds (minutes, …)
// that hold an arrival hold several, within their second, as calibrate
// and replay do, from the stream "fit/spread" of seed 1, so that a file
// is judged alike every time: a second's ties are no burst. Poisson
// arrivals at 0.5/s tie in a fifth of their seconds. Whole seconds with
// few ties are judged as logged, so that arrivals evenly spaced by whole
// seconds stay constant with a duplicate line or two. It reports whether
// it spread them.
func spreadSeconds(times []time.Duration, precision time.Duration) bool {
	if precision < time.Second || len(times) < 2 {
		return false
	}
	occupied, tied := 1, 0
	for i := 1; i < len(times); i++ {
		same := times[i].Truncate(precision) == times[i-1].Truncate(precision)
		switch {
		case !same:
			occupied++
		case i == 1 || times[i-1].Truncate(precision) != times[i-2].Truncate(precision):
			tied++ // the second's first tie
		}
	}
	if float64(tied) <= spreadTiedShare*float64(occupied) {
		return false
	}
	arrivalfit.SpreadTies(times, 0, precision, rand.New(sim.StreamSource(1, "fit/spread")))
	return true
}

// spreadTiedShare is the share of occupied seconds holding several
// arrivals beyond which spreadSeconds spreads them.
const spreadTiedShare = 0.01

// workloadLines are the [workload] keys for a fitted process.
func workloadLines(s arrivals.Spec, trace string) string {
	rate := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	dur := func(d time.Duration) string { return strconv.Quote(d.String()) }
	lines := []string{fmt.Sprintf("arrival = %q", s.Kind.String())}
	switch s.Kind {
	case arrivals.KindPoisson, arrivals.KindConstant:
		lines = append(lines, "rate = "+rate(s.Rate))
	case arrivals.KindOnOff:
		lines = append(lines, "rate = "+rate(s.Rate), "on = "+dur(s.On), "off = "+dur(s.Off))
	case arrivals.KindRamp:
		lines = append(lines, "rate = "+rate(s.Rate), "rate_to = "+rate(s.RateTo), "ramp = "+dur(s.Ramp))
	case arrivals.KindTrace:
		lines = append(lines, "trace = "+strconv.Quote(trace))
	}
	return strings.Join(lines, "\n")
}

// writeTrace writes arrivals as seconds since the first, one per line.
func writeTrace(path string, times []time.Duration) error {
	var b strings.Builder
	b.WriteString("seconds\n")
	for _, t := range times {
		b.WriteString(strconv.FormatFloat(t.Seconds(), 'f', -1, 64))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// fitArrivals judges the arrival process of recorded timestamps and prints
// the [workload] keys that describe it.
func fitArrivals(path string, tf timestampFormat, traceOut, chart string, asJSON bool, stdout io.Writer) error {
	times, precision, err := readTimestamps(path, tf)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %w", err))
	}
	spread := spreadSeconds(times, precision)
	fit, err := arrivalfit.Judge(times)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim fit: %s: %w", path, err))
	}
	offsets := make([]time.Duration, len(times))
	for i, t := range times {
		offsets[i] = t - times[0]
	}
	trace, note := path, ""
	if traceOut != "" {
		if err := writeTrace(traceOut, offsets); err != nil {
			return internalError(fmt.Errorf("limitsim fit: %w", err))
		}
		trace = traceOut
	}
	if fit.Spec.Kind == arrivals.KindTrace {
		if _, num := tf.numeric(); traceOut == "" && (tf.column != 1 || !num || times[0] > fit.Span) {
			// limitsim replays the first column as seconds since the start.
			trace = "TRACE.csv"
			note = "write TRACE.csv with --trace-out: limitsim replays seconds since the start from the first column"
		} else {
			note = fmt.Sprintf("put %s beside the scenario: a trace path is relative to the scenario's folder", filepath.Base(trace))
		}
		trace = filepath.Base(trace)
	}
	lines := workloadLines(fit.Spec, trace)
	if chart != "" {
		var fitted []float64
		if fit.Spec.Kind != arrivals.KindTrace {
			fitted = make([]float64, len(fit.Rates))
			for i := range fitted {
				fitted[i] = arrivalfit.MeanRate(fit.Spec, time.Duration(i)*fit.Bin, time.Duration(i+1)*fit.Bin)
			}
		}
		err := writeChart(chart, func() (report.Chart, error) {
			return report.RateChart(filepath.Base(path), fit.Bin.Seconds(), fit.Rates, fitted, "fitted: "+fit.Spec.Kind.String())
		})
		if err != nil {
			return invalidInput(fmt.Errorf("limitsim fit: %w", err))
		}
	}
	if asJSON {
		err = printJSON(stdout, struct {
			Arrivals   int       `json:"arrivals"`
			SpanS      float64   `json:"span_s"`
			Rate       float64   `json:"rate"`
			GapCV      float64   `json:"gap_cv"`
			BinS       float64   `json:"bin_s"`
			Dispersion float64   `json:"dispersion"`
			PPoisson   float64   `json:"p_poisson"`
			Process    string    `json:"process"`
			Reason     string    `json:"reason"`
			Workload   string    `json:"workload"`
			Note       string    `json:"note,omitempty"`
			Rates      []float64 `json:"rates"`
		}{fit.Count, fit.Span.Seconds(), fit.Rate, fit.GapCV, fit.Bin.Seconds(), fit.Dispersion, fit.PPoisson,
			fit.Spec.Kind.String(), fit.Reason, lines, note, fit.Rates})
	} else {
		_, err = io.WriteString(stdout, arrivalsText(fit, lines, note, spread))
	}
	if err != nil {
		return internalError(err)
	}
	return nil
}

// arrivalsText is fit arrivals' report: the numbers behind the choice,
// the rate over time in ten windows, and the keys to paste.
func arrivalsText(fit arrivalfit.Fit, lines, note string, spread bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d arrivals over %v: a mean rate of %s/s\n", fit.Count, fit.Span.Round(time.Millisecond), report.Number(fit.Rate, 4))
	if spread {
		b.WriteString("times logged to the second: spread within their second before judging (a second's ties are no burst)\n")
	}
	fmt.Fprintf(&b, "gaps between arrivals: coefficient of variation %.3f (1 for Poisson, 0 for evenly spaced)\n", fit.GapCV)
	fmt.Fprintf(&b, "counts per %v: dispersion index %.3f (1 for Poisson), p = %.3g\n\n", fit.Bin.Round(time.Millisecond), fit.Dispersion, fit.PPoisson)
	fmt.Fprintf(&b, "%12s %12s %12s\n", "from", "to", "rate (/s)")
	k := len(fit.Rates)
	for w := range 10 {
		lo, hi := w*k/10, (w+1)*k/10
		if lo == hi {
			continue
		}
		var sum float64
		for _, r := range fit.Rates[lo:hi] {
			sum += r
		}
		fmt.Fprintf(&b, "%12v %12v %12.4g\n", (time.Duration(lo) * fit.Bin).Round(time.Millisecond),
			(time.Duration(hi) * fit.Bin).Round(time.Millisecond), sum/float64(hi-lo))
	}
	fmt.Fprintf(&b, "\nprocess: %s: %s\n\nto paste into [workload]:\n%s\n", fit.Spec.Kind, fit.Reason, lines)
	if note != "" {
		fmt.Fprintf(&b, "(%s)\n", note)
	}
	return b.String()
}
