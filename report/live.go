package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/limitsim/limitsim/report/metrics"
)

// LiveComparison holds a live run against the simulation of the same scenario
// and seed (limitsim live).
type LiveComparison struct {
	Speed float64   `json:"speed"`
	Rows  []LiveRow `json:"differences"`
	// Note, for a live run stopped before its end, says its counts are
	// left out: the simulation ran whole.
	Note string `json:"note,omitempty"`
}

// LiveRow is one figure of a LiveComparison. Relative is (live −
// simulated) ÷ simulated, absent when the simulated value is 0.
type LiveRow struct {
	Metric    string   `json:"metric"`
	Simulated float64  `json:"simulated"`
	Live      float64  `json:"live"`
	Relative  *float64 `json:"relative,omitempty"`
}

// CompareLive lists the figures a live run is held against its simulation by:
// goodput, offered load, the 429 rate, successes and the refusals that
// are not 429s (left out, with a note, for a live run stopped before its
// end), end-to-end time, the mean in flight, and each limiter's wait p50
// and p99.
func CompareLive(sim, live *metrics.Results, speed float64) *LiveComparison {
	c := &LiveComparison{Speed: speed}
	add := func(metric string, s, l float64) {
		row := LiveRow{Metric: metric, Simulated: s, Live: l}
		if s != 0 {
			rel := (l - s) / s
			row.Relative = &rel
		}
		c.Rows = append(c.Rows, row)
	}
	add("goodput_rps", sim.Throughput.GoodputRPS, live.Throughput.GoodputRPS)
	add("offered_rps", sim.Throughput.OfferedRPS, live.Throughput.OfferedRPS)
	add("rate_429", sim.Rate429, live.Rate429)
	if live.Complete {
		countRows(sim.Requests, live.Requests, add)
	} else {
		// Stopped (Ctrl-C, --max-wall): its counts are of part of the
		// run, the simulation's of all of it.
		c.Note = fmt.Sprintf("the live run stopped at %s of the scenario's time, its simulation ran to %s: counts are left out; rates, times and levels cover what ran",
			secs(live.ElapsedS), secs(sim.ElapsedS))
	}
	add("request_p50_s", sim.RequestS.P50, live.RequestS.P50)
	add("request_p99_s", sim.RequestS.P99, live.RequestS.P99)
	add("mean_in_flight", sim.InFlight.Mean, live.InFlight.Mean)
	for i, l := range sim.Limiters {
		if i < len(live.Limiters) && live.Limiters[i].Name == l.Name {
			add(l.Name+".wait_p50_s", l.WaitS.P50, live.Limiters[i].WaitS.P50)
			add(l.Name+".wait_p99_s", l.WaitS.P99, live.Limiters[i].WaitS.P99)
		}
	}
	return c
}

// countRows adds the requests that succeeded, and those refused
// otherwise than by a 429 (nginx's 503s, the client's own refusals) when
// either run had some.
func countRows(sim, live metrics.Requests, add func(metric string, s, l float64)) {
	for i, f := range liveCounts {
		if s, l := f.of(sim), f.of(live); i == 0 || s+l > 0 {
			add(f.metric, float64(s), float64(l))
		}
	}
}

// liveCount is a count of requests the comparison shows, and how a run's
// counts give it.
type liveCount struct {
	metric string
	of     func(q metrics.Requests) int64
}

// liveCounts are the counts of requests the comparison shows: the
// successes, always, then the refusals that are not 429s.
var liveCounts = []liveCount{
	{"succeeded", func(q metrics.Requests) int64 { return q.Succeeded }},
	{"failed", func(q metrics.Requests) int64 { return q.Failed }},
	{"rejected", func(q metrics.Requests) int64 { return q.Rejected }},
	{"acquire_timeouts", func(q metrics.Requests) int64 { return q.AcquireTimeouts }},
	{"timed_out", func(q metrics.Requests) int64 { return q.TimedOut }},
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

// text writes v, a value of the row's metric, in its unit, told by the
// metric's name (so also for a row read back from live.json).
func (r LiveRow) text(v float64) string {
	switch {
	case strings.HasSuffix(r.Metric, "_rps"):
		return human(v, 4) + "/s"
	case r.Metric == "rate_429":
		return pct(v)
	case slices.ContainsFunc(liveCounts, func(c liveCount) bool { return c.metric == r.Metric }):
		return Grouped(int64(v))
	case strings.HasSuffix(r.Metric, "_s"):
		return secs(v)
	case r.Metric == "mean_in_flight":
		return human(v, 3)
	}
	return human(v, 4)
}

// WriteComparison writes c as an aligned table.
func WriteComparison(w io.Writer, c *LiveComparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tsimulated\tlive\tdifference\t")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.Metric, r.text(r.Simulated), r.text(r.Live), r.relText())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Note != "" {
		_, err := fmt.Fprintf(w, "\n%s\n", c.Note)
		return err
	}
	return nil
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
	if c.Note != "" {
		fmt.Fprintf(&b, "\n%s.\n", mdEscape(c.Note))
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

// ReadSidecars reads what a live run or a replay left beside a run's
// data in dir (live.json, replay.json), so that a redrawn report keeps
// their sections; each is nil when its file is absent.
func ReadSidecars(dir string) (*LiveComparison, *ReplayComparison, error) {
	var live *LiveComparison
	var replay *ReplayComparison
	for _, s := range []struct {
		name string
		into any
	}{{"live.json", &live}, {"replay.json", &replay}} {
		path := filepath.Join(dir, s.name)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(data, s.into); err != nil {
			return nil, nil, JSONError(path, data, err)
		}
		if strings.TrimSpace(string(data)) == "null" {
			return nil, nil, fmt.Errorf("%s: null, not an object: not a limitsim %s", path, s.name)
		}
	}
	if err := replay.check(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "replay.json"), err)
	}
	return live, replay, nil
}
