package planning

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report"
)

// WriteText writes the calibration as text: each host's fits and the
// evidence for its quota, the errors of the model against the log, the
// minutes, and the verdict.
func (c *Calibration) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "calibrated from %s (%s): %d records over %v from %s", c.Log, c.Format, c.Records,
		time.Duration(c.SpanS*1e9).Round(time.Second), c.Start)
	if c.BadLines > 0 {
		fmt.Fprintf(b, "; %d bad lines skipped", c.BadLines)
	}
	fmt.Fprintln(b)
	for _, bad := range c.FirstBad {
		fmt.Fprintf(b, "  bad line %s\n", bad)
	}
	for _, h := range c.Hosts {
		writeHostText(b, h)
	}
	writeWorkloadText(b, c)
	e := c.Errors
	fmt.Fprintf(b, "\nmodel on the log's arrivals, against the log, per minute (mean absolute percentage error):\n")
	fmt.Fprintf(b, "  goodput %5.1f%% over %d minutes\n", 100*e.Goodput, e.GoodputMinutes)
	word := c.refusalWord()
	fmt.Fprintf(b, "  %-7s %5.1f%% over %d minutes\n", word, 100*e.Refused, e.RefusedMinutes)
	fmt.Fprintf(b, "  p50     %5.1f%% over %d minutes\n", 100*e.LatencyP50, e.P50Minutes)
	fmt.Fprintf(b, "  p99     %5.1f%% over %d minutes\n", 100*e.LatencyP99, e.P99Minutes)
	if w := c.Workload; w != nil {
		over := "the whole log"
		if w.LogMinutes > 0 {
			over = fmt.Sprintf("the log's %d whole minutes", w.LogMinutes)
		}
		fmt.Fprintf(b, "\nthe scenario written, with its own arrivals (%s), %d runs of %v, against %s:\n", w.Arrivals,
			w.Replications, time.Duration(w.RunDurationS*1e9), over)
		fmt.Fprintf(b, "  goodput %s/s ± %s, the log's %s/s (%.1f%% off)\n", report.Number(w.SimGoodputRPS, 4), report.Number(w.SimGoodputCI95, 2),
			report.Number(w.LogGoodputRPS, 4), 100*w.GoodputError)
		fmt.Fprintf(b, "  %-7s %s, the log's %s (%.1f%% off)\n", word, shareText(w.Sim429Share, w.Sim429CI95), shareText(w.Log429Share, math.NaN()), 100*w.RefusedError)
	}
	fmt.Fprintf(b, "\n%-20s %9s %9s %7s %7s %8s %8s %8s %8s\n", "minute (UTC)", "goodput", "sim", word, "sim",
		"p50 s", "sim", "p99 s", "sim")
	for _, m := range c.Minutes {
		fmt.Fprintf(b, "%-20s %9d %9d %7d %7d %8s %8s %8s %8s\n", m.Minute, m.LogGoodput, m.SimGoodput, m.LogRefused,
			m.SimRefused, seconds(m.LogLatencyP50S), seconds(m.SimLatencyP50S), seconds(m.LogLatencyP99S), seconds(m.SimLatencyP99S))
	}
	fmt.Fprintf(b, "\n%s\n", c.Verdict)
	return b.Flush()
}

// writeHostText writes one host's fits.
func writeHostText(b *bufio.Writer, h HostCalibration) {
	name := h.Host
	if name == "" {
		name = "(every request)"
	}
	fmt.Fprintf(b, "\nhost %s: %d requests, %d answered, %d refused, %d other statuses\n", name, h.Requests, h.Admitted, h.Refused, h.Other)
	a := h.Arrivals
	fmt.Fprintf(b, "  arrivals  %s, %s/s on average, %s/s in the busiest minute (gap CV %.2f, dispersion %.2f): %s\n",
		a.Process, report.Number(a.Rate, 4), report.Number(a.PeakMinute, 4), a.GapCV, a.Dispersion, a.Reason)
	fmt.Fprintf(b, "            in the scenario: %s\n", a.InScenario)
	l := h.Latency
	fmt.Fprintf(b, "  latency   %s (KS %.3f over %d answers): p50 %ss, p99 %ss (the log's: %ss, %ss)\n",
		l.Family, l.KS, l.Samples, report.Number(l.P50S, 4), report.Number(l.P99S, 4), report.Number(l.DataP50S, 4), report.Number(l.DataP99S, 4))
	if l.Zeros > 0 {
		fmt.Fprintf(b, "            %d logged as 0, under the log's resolution: fitted as half the least latency above 0\n", l.Zeros)
	}
	if l.RejectS > 0 {
		fmt.Fprintf(b, "            refusals answered in %v\n", time.Duration(l.RejectS*1e9))
	}
	q := h.Quota
	fmt.Fprintf(b, "  quota     %s: %s\n", quotaText(q.QuotaShape), q.Reason)
	if hd := q.Headers; hd != nil {
		fmt.Fprintf(b, "            headers on %d records: remaining up to %d", hd.Records, hd.RemainingMax)
		if hd.ResetAligned != nil {
			fmt.Fprintf(b, ", %.0f%% of resets on a window's end", 100**hd.ResetAligned)
		}
		fmt.Fprintln(b)
	}
	for _, c := range q.Candidates {
		fmt.Fprintf(b, "            tried %-32s agreement %.3f (%d refusals predicted, %d matched)\n",
			quotaText(c.QuotaShape),
			c.Score, c.Predicted, c.Matched)
	}
}

// maxTenantLines bounds the tenants the text lists (the JSON has all).
const maxTenantLines = 20

// writeWorkloadText writes the costs' distribution and the tenants, when
// logged.
func writeWorkloadText(b *bufio.Writer, c *Calibration) {
	if k := c.Cost; k != nil {
		fmt.Fprintf(b, "\ncost: %d requests, mean %s, p50 %d, p99 %d, max %d (%d values): workload.cost = %s\n",
			k.Requests, report.Number(k.Mean, 4), k.P50, k.P99, k.Max, k.Distinct, k.Dist)
	}
	if len(c.Tenants) == 0 {
		return
	}
	word := c.refusalWord()
	fmt.Fprintf(b, "\n%d tenants (answered and %s: the log's, the model's on the log's arrivals):\n", len(c.Tenants), word)
	for i, t := range c.Tenants {
		if i == maxTenantLines {
			fmt.Fprintf(b, "  … %d more in calibration.json\n", len(c.Tenants)-i)
			break
		}
		a := t.Arrivals
		fmt.Fprintf(b, "  tenant %s: %d requests, share %s%%, arrivals %s at %s/s; answered %d, model %d; %s %d, model %d\n",
			t.Tenant, t.Requests, report.Number(100*t.Share, 4), a.Process, report.Number(a.Rate, 4), t.LogGoodput, t.SimGoodput, word, t.LogRefused, t.SimRefused)
		fmt.Fprintf(b, "            in the scenario: %s\n", a.InScenario)
	}
}

// quotaText names a quota: "fixed_window 2400/1m0s",
// "token_bucket 40/s burst 80", "fixed_window 900/1m0s cost" for one
// that counts cost, or "none".
func quotaText(q QuotaShape) string {
	suffix := ""
	if q.Unit != "" {
		suffix = " " + q.Unit
	}
	switch q.Kind {
	case kindname.QuotaFixedWindow, kindname.QuotaSlidingWindow:
		return fmt.Sprintf("%s %d/%s%s", q.Kind, q.Limit, q.Window, suffix)
	case kindname.QuotaConcurrency:
		return fmt.Sprintf("%s %d in service", q.Kind, q.Limit)
	case kindname.QuotaTokenBucket:
		return fmt.Sprintf("%s %s/s burst %s%s", q.Kind, strconv.FormatFloat(q.Rate, 'g', -1, 64),
			strconv.FormatFloat(q.Burst, 'g', -1, 64), suffix)
	}
	return "none"
}

// seconds writes an optional quantile, "-" when absent.
func seconds(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}
