package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/limitsim/limitsim/report/metrics"
)

// LiveComparison holds a live run against the simulation of the same scenario
// and seed (limitsim live).
type LiveComparison struct {
	Speed float64   `json:"speed"`
	Rows  []LiveRow `json:"differences"`
}

// LiveRow is one figure of a LiveComparison. Relative is (live −
// simulated) ÷ simulated, absent when the simulated value is 0.
type LiveRow struct {
	Metric    string   `json:"metric"`
	Simulated float64  `json:"simulated"`
	Live      float64  `json:"live"`
	Relative  *float64 `json:"relative,omitempty"`
	unit      func(float64) string
}

// CompareLive lists the figures a live run is held against its simulation by:
// goodput, offered load, the 429 rate, successes, end-to-end time, the
// mean in flight, and each limiter's wait p50 and p99.
func CompareLive(sim, live *metrics.Results, speed float64) *LiveComparison {
	rps := func(v float64) string { return human(v, 4) + "/s" }
	c := &LiveComparison{Speed: speed}
	add := func(metric string, s, l float64, unit func(float64) string) {
		row := LiveRow{Metric: metric, Simulated: s, Live: l, unit: unit}
		if s != 0 {
			rel := (l - s) / s
			row.Relative = &rel
		}
		c.Rows = append(c.Rows, row)
	}
	add("goodput_rps", sim.Throughput.GoodputRPS, live.Throughput.GoodputRPS, rps)
	add("offered_rps", sim.Throughput.OfferedRPS, live.Throughput.OfferedRPS, rps)
	add("rate_429", sim.Rate429, live.Rate429, pct)
	add("succeeded", float64(sim.Requests.Succeeded), float64(live.Requests.Succeeded), func(v float64) string { return Grouped(int64(v)) })
	add("request_p50_s", sim.RequestS.P50, live.RequestS.P50, secs)
	add("request_p99_s", sim.RequestS.P99, live.RequestS.P99, secs)
	add("mean_in_flight", sim.InFlight.Mean, live.InFlight.Mean, func(v float64) string { return human(v, 3) })
	for i, l := range sim.Limiters {
		if i < len(live.Limiters) && live.Limiters[i].Name == l.Name {
			add(l.Name+".wait_p50_s", l.WaitS.P50, live.Limiters[i].WaitS.P50, secs)
			add(l.Name+".wait_p99_s", l.WaitS.P99, live.Limiters[i].WaitS.P99, secs)
		}
	}
	return c
}

// relText is a row's relative difference for people.
func (r LiveRow) relText() string {
	if r.Relative == nil {
		if r.Live == 0 {
			return "same"
		}
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", 100**r.Relative)
}

func (r LiveRow) text(v float64) string {
	if r.unit == nil {
		return human(v, 4)
	}
	return r.unit(v)
}

// WriteComparison writes c as an aligned table.
func WriteComparison(w io.Writer, c *LiveComparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tsimulated\tlive\tdifference\t")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.Metric, r.text(r.Simulated), r.text(r.Live), r.relText())
	}
	return tw.Flush()
}

// comparisonMarkdown is c as a report section.
func comparisonMarkdown(c *LiveComparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Live against simulated (speed %s)\n\n", human(c.Speed, 3))
	b.WriteString("This run was live: real HTTP requests to a loopback server answering with the scenario's upstream model, the client on the wall clock. The simulated column is the same scenario and seed in virtual time.\n\n")
	b.WriteString("| figure | simulated | live | difference |\n|---|---:|---:|---:|\n")
	for _, r := range c.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(r.Metric), r.text(r.Simulated), r.text(r.Live), r.relText())
	}
	return b.String()
}

// comparisonRows is c as table cells for the HTML report.
func comparisonRows(c *LiveComparison) [][]string {
	if c == nil {
		return nil
	}
	out := make([][]string, len(c.Rows))
	for i, r := range c.Rows {
		out[i] = []string{r.Metric, r.text(r.Simulated), r.text(r.Live), r.relText()}
	}
	return out
}
