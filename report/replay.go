package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// ReplayComparison holds what a configuration would have done to a
// recorded log's traffic beside what production saw (limitsim replay):
// over the whole log, per minute and per tenant. Its JSON is replay.json
// and the "replay" object of `limitsim replay --json` (docs/metrics.md).
type ReplayComparison struct {
	Log      string   `json:"log"`
	Format   string   `json:"format"`
	Lines    int64    `json:"lines"`
	Records  int64    `json:"records"`
	BadLines int64    `json:"bad_lines"`
	FirstBad []string `json:"first_bad,omitempty"`
	// RecordsWithoutStatus counts the records that logged no status,
	// counted as answered: production's refusals among them are unknown.
	RecordsWithoutStatus int64 `json:"records_without_status,omitempty"`
	// PathsMatched counts the records whose logged method and URL path
	// chose their [[client.path]]; PathsUnmatched those that matched none
	// (each drawn by the paths' weights), FirstUnmatched naming the first
	// few (file:line). All zero when the scenario declares no methods to
	// match, or the log no method or URL path.
	PathsMatched   int64    `json:"paths_matched,omitempty"`
	PathsUnmatched int64    `json:"paths_unmatched,omitempty"`
	FirstUnmatched []string `json:"first_unmatched,omitempty"`
	Start          string   `json:"start"` // the first record's minute, RFC 3339 UTC
	SpanS          float64  `json:"span_s"`
	// Spread: times logged to the second were spread within their second.
	Spread bool `json:"spread"`
	// Latency is where admitted requests' latencies came from: recorded
	// or model; ModelLatencies counts the records that took the model's
	// (no latency logged, or a refusal's).
	Latency        string      `json:"latency"`
	ModelLatencies int64       `json:"model_latencies"`
	Total          ReplayRow   `json:"total"`
	Minutes        []ReplayRow `json:"minutes"`
	Tenants        []ReplayRow `json:"tenants,omitempty"`
	// MostDifferent lists the minutes where the replay differs most from
	// production, most first (see ReplayRow.Difference).
	MostDifferent []string `json:"most_different"`
}

// check reports whether c, read from a replay.json, can be redrawn: a
// replay has a first minute and at least one minute replayed, each an
// RFC 3339 instant (nil c, no replay.json, is fine).
func (c *ReplayComparison) check() error {
	if c == nil {
		return nil
	}
	if len(c.Minutes) == 0 {
		return errors.New(`no "minutes": not a limitsim replay.json (a replay has at least one minute)`)
	}
	if _, err := time.Parse(time.RFC3339, c.Start); err != nil {
		return fmt.Errorf(`"start" %q is not an RFC 3339 instant: not a limitsim replay.json`, c.Start)
	}
	for i, m := range c.Minutes {
		if _, err := time.Parse(time.RFC3339, m.Minute); err != nil {
			return fmt.Errorf(`"minutes"[%d]: "minute" %q is not an RFC 3339 instant: not a limitsim replay.json`, i, m.Minute)
		}
	}
	return nil
}

// ReplayRow is one minute's, one tenant's or the whole log's figures.
type ReplayRow struct {
	Minute string `json:"minute,omitempty"` // RFC 3339 UTC
	Tenant string `json:"tenant,omitempty"`
	// Production: requests logged, those refused (429 or 503), and the
	// latencies logged.
	Requests              int64   `json:"requests"`
	ProductionThrottled   int64   `json:"production_throttled"`
	ProductionLatencyP50S float64 `json:"production_latency_p50_s"`
	ProductionLatencyP99S float64 `json:"production_latency_p99_s"`
	// ProductionRemainingMin is the least rate-limit remaining header
	// production logged (nil when the log has none mapped).
	ProductionRemainingMin *int64 `json:"production_remaining_min,omitempty"`
	// The replay: requests sent, those the client held before sending
	// (Delayed, with the delay from arrival to first send over every sent
	// request), those it rejected before sending, the upstream's refusals
	// of its attempts, and how its requests ended.
	Sent         int64   `json:"sent"`
	Delayed      int64   `json:"delayed"`
	DelayP50S    float64 `json:"delay_p50_s"`
	DelayP99S    float64 `json:"delay_p99_s"`
	DelayMeanS   float64 `json:"delay_mean_s"`
	DelayMaxS    float64 `json:"delay_max_s"`
	Rejected     int64   `json:"rejected"`
	Refusals     int64   `json:"upstream_refusals"`
	Succeeded    int64   `json:"succeeded"`
	Throttled    int64   `json:"throttled"`
	OtherFailure int64   `json:"other_failures"`
	// Avoided is production's refusals less the replay's requests that
	// did not succeed: positive, 429s the configuration avoids; negative,
	// failures it causes.
	Avoided int64 `json:"avoided_429"`
	// Difference is |Avoided|: how many more or fewer requests fail.
	Difference int64 `json:"difference"`
}

// replayHeader names the columns of a replay's table.
var replayHeader = []string{"", "requests", "prod 429/503", "prod p50", "prod p99", "delayed", "delay p50", "delay p99", "rejected", "upstream 429", "avoided"}

// replayRows are the rows a replay's table shows: the total, the minutes
// that differ most, then the tenants (at most maxReplayTenants); more
// reports how many tenants are left out.
func replayRows(c *ReplayComparison) (rows [][]string, more int) {
	row := func(name string, r ReplayRow) []string {
		return []string{name, Grouped(r.Requests), Grouped(r.ProductionThrottled), secs(r.ProductionLatencyP50S), secs(r.ProductionLatencyP99S),
			Grouped(r.Delayed), secs(r.DelayP50S), secs(r.DelayP99S), Grouped(r.Rejected), Grouped(r.Refusals), fmt.Sprintf("%+d", r.Avoided)}
	}
	rows = append(rows, row("total", c.Total))
	for _, m := range c.MostDifferent {
		for _, r := range c.Minutes {
			if r.Minute == m {
				rows = append(rows, row("minute "+m, r))
			}
		}
	}
	for i, r := range c.Tenants {
		if i == maxReplayTenants {
			return rows, len(c.Tenants) - i
		}
		rows = append(rows, row("tenant "+r.Tenant, r))
	}
	return rows, 0
}

// BadLines counts bad lines in words: "1 bad line", "1,204 bad lines".
func BadLines(n int64) string {
	if n == 1 {
		return "1 bad line"
	}
	return Grouped(n) + " bad lines"
}

// latencyWords says where the replayed latencies came from: recorded,
// with how many records took the model's (those that logged none that
// reads as a number, and production's refusals, whose latency is no
// service time), or the model.
func latencyWords(c *ReplayComparison) string {
	switch {
	case c.Latency != "recorded" || c.ModelLatencies == 0:
		return c.Latency
	case c.ModelLatencies >= c.Records:
		return "the model's: no record logged a latency that reads as a number, or every one was a refusal"
	}
	return fmt.Sprintf("recorded, but %s of the %s records took the model's (no latency logged that reads as a number, or a refusal's)", Grouped(c.ModelLatencies), Grouped(c.Records))
}

// replayIntro says what was replayed.
func replayIntro(c *ReplayComparison) string {
	intro := fmt.Sprintf("The log %s (%s, %s records over %s from %s, %s) replayed through this configuration; latencies %s.",
		c.Log, c.Format, Grouped(c.Records), secs(c.SpanS), c.Start, BadLines(c.BadLines), latencyWords(c))
	if c.PathsMatched > 0 || c.PathsUnmatched > 0 {
		intro += fmt.Sprintf(" Paths: %s records matched by method and URL path, %s matched none (drawn by weight).",
			Grouped(c.PathsMatched), Grouped(c.PathsUnmatched))
	}
	return intro
}

// WriteReplayText writes the comparison as text: the totals, the minutes
// that differ most and the tenants.
func WriteReplayText(w io.Writer, c *ReplayComparison) error {
	fmt.Fprintf(w, "\nreplay of %s (%s, %s records over %s from %s; %s; latency %s)\n",
		c.Log, c.Format, Grouped(c.Records), secs(c.SpanS), c.Start, BadLines(c.BadLines), latencyWords(c))
	for _, b := range c.FirstBad {
		fmt.Fprintf(w, "  bad line %s\n", b)
	}
	if c.PathsMatched > 0 || c.PathsUnmatched > 0 {
		fmt.Fprintf(w, "paths: %s matched by method and URL path, %s matched none (drawn by weight)\n",
			Grouped(c.PathsMatched), Grouped(c.PathsUnmatched))
	}
	for _, u := range c.FirstUnmatched {
		fmt.Fprintf(w, "  unmatched %s\n", u)
	}
	fmt.Fprintf(w, "%s\n", replayVerdict(&c.Total))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	rows, more := replayRows(c)
	for _, r := range append([][]string{replayHeader}, rows...) {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(r, "\t"))
	}
	if more > 0 {
		fmt.Fprintf(tw, "(%d more tenants in the JSON)\t\n", more)
	}
	return tw.Flush()
}

// maxReplayTenants is how many tenants the text and the report list.
const maxReplayTenants = 20

// replayVerdict says in one line what the configuration did to the
// traffic.
func replayVerdict(t *ReplayRow) string {
	what := fmt.Sprintf("production: %s of %s requests refused (429/503)", Grouped(t.ProductionThrottled), Grouped(t.Requests))
	did := fmt.Sprintf("replay: %s delayed (p50 %s, p99 %s, max %s), %s rejected by the client, %s upstream 429s",
		Grouped(t.Delayed), secs(t.DelayP50S), secs(t.DelayP99S), secs(t.DelayMaxS), Grouped(t.Rejected), Grouped(t.Refusals))
	switch {
	case t.Avoided > 0:
		did += fmt.Sprintf("; %s fewer failures than production", Grouped(t.Avoided))
	case t.Avoided < 0:
		did += fmt.Sprintf("; %s more failures than production", Grouped(-t.Avoided))
	}
	return what + "\n" + did
}

// replayMarkdown is the comparison as a report section, with its chart
// when charted.
func replayMarkdown(c *ReplayComparison, charted bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Production against the replay\n\n%s\n\n", mdEscape(replayIntro(c)))
	for _, line := range strings.Split(replayVerdict(&c.Total), "\n") {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(line))
	}
	b.WriteString("| " + strings.Join(replayHeader, " | ") + " |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	rows, _ := replayRows(c)
	for _, r := range rows {
		r[0] = mdEscape(r[0])
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	b.WriteString("\nEvery minute and tenant is in replay.json.\n\n")
	if charted {
		fmt.Fprintf(&b, "![replay](%s.png)\n\n", replayChartName)
	}
	return b.String()
}

// replaySection is the comparison as the HTML report shows it.
type replaySection struct {
	Intro   string
	Verdict []string
	Header  []string
	Rows    [][]string
	Chart   *replayFigure
}

// replayFigure is the replay's chart inline in the HTML report.
type replayFigure struct {
	Caption string
	SVG     template.HTML
}

// htmlSection is the comparison for the HTML report (nil for none).
func (c *ReplayComparison) htmlSection() *replaySection {
	if c == nil {
		return nil
	}
	rows, _ := replayRows(c)
	return &replaySection{Intro: replayIntro(c), Verdict: strings.Split(replayVerdict(&c.Total), "\n"), Header: replayHeader, Rows: rows}
}
