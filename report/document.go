package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// Document is everything a report shows: the results, the series, the
// charts and the scenario as run.
type Document struct {
	Results  *metrics.Results
	Series   *metrics.Series
	Scenario string // resolved TOML ("" if unknown)
	Charts   []Chart
	Omitted  []Omitted
	// Live, when set, holds a live run (this document's) against its
	// simulation.
	Live *LiveComparison
	// Replay, when set, holds a recorded log's production figures against
	// this run, its replay.
	Replay *ReplayComparison
}

// Build draws the charts of a run and returns its document.
func Build(r *metrics.Results, s *metrics.Series, scenario string) (*Document, error) {
	charts, omitted, err := Charts(r, s)
	if err != nil {
		return nil, err
	}
	return &Document{Results: r, Series: s, Scenario: scenario, Charts: charts, Omitted: omitted}, nil
}

// summaryRows are the headline numbers of a run, shared by both formats.
func summaryRows(r *metrics.Results) [][2]string {
	q, t := r.Requests, r.Throughput
	g := Grouped
	status := "complete"
	if !r.Complete {
		status = "incomplete: " + r.Stop.Text
	}
	steady := fmt.Sprintf(" (steady state after %s, %s window)", secs(r.WarmupS), secs(t.WindowS))
	if noSteadyWindow(r) {
		steady = fmt.Sprintf(" (no steady state: the run ended at or before the end of its %s warm-up)", secs(r.WarmupS))
	}
	return [][2]string{
		{"status", status},
		{"simulated time", secs(r.ElapsedS) + steady},
		{"requests (whole run)", fmt.Sprintf("%s arrived: %s ok, %s final 429, %s%s rejected (ingest %s, limiter %s), %s acquire timeouts, %s timed out, %s in progress",
			g(q.Arrived), g(q.Succeeded), g(q.Throttled429), failedText(q.Failed), g(q.Rejected), g(q.RejectedIngest), g(q.RejectedLimiter), g(q.AcquireTimeouts), g(q.TimedOut), g(q.InProgress))},
		{"attempts (whole run)", fmt.Sprintf("%s (%s retries, %s answered 429)", g(q.Attempts), g(q.Retries), g(q.Responses429))},
		{"rates (steady state)", fmt.Sprintf("offered %s/s, started %s/s, goodput %s/s, 429s %s/s", human(t.OfferedRPS, 4), human(t.StartedRPS, 4), human(t.GoodputRPS, 4), human(t.Rate429RPS, 4))},
		{"end to end (steady state, ok)", fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s; %s",
			secs(r.RequestS.P50), secs(r.RequestS.P90), secs(r.RequestS.P99), secs(r.RequestS.Max), successText(r))},
		{"in flight (steady state)", fmt.Sprintf("mean %s, peak %s", human(r.InFlight.Mean, 3), Grouped(r.InFlight.Max))},
		{"ingest", ingestText(r)},
	}
}

// failedText is the refusals the client does not treat as 429s, with a
// comma after them, when there are any ("" otherwise).
func failedText(n int64) string {
	if n == 0 {
		return ""
	}
	return Grouped(n) + " failed (refusals not treated as 429s), "
}

// successText is the success ratio (succeeded ÷ arrived), with the
// requests that never ended when an incomplete run stopped with some
// inside: they count as not succeeded.
func successText(r *metrics.Results) string {
	s := "success ratio " + pct(r.SuccessRatio)
	if n := r.Requests.InProgress; n > 0 {
		s += fmt.Sprintf(" of %s arrived (%s never ended: still in progress at the stop, counted as not succeeded)", Grouped(r.Requests.Arrived), Grouped(n))
	}
	return s
}

func ingestText(r *metrics.Results) string {
	if r.Queue.Kind != "queue" {
		return "one task per request"
	}
	return fmt.Sprintf("bounded queue: mean depth %s, peak %s, wait p99 %s, peak blocked producers %s", human(r.Queue.MeanDepth, 3), Grouped(r.Queue.MaxDepth), secs(r.Queue.WaitS.P99), Grouped(r.Queue.MaxBlocked))
}

func verdictFor(r *metrics.Results, name string) metrics.Verdict {
	for _, v := range r.Verdicts {
		if v.Limiter == name {
			return v
		}
	}
	return metrics.Verdict{}
}

// mdEscape keeps table cells intact.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// keyCharts names, for each diagnosis, the chart that shows its problem.
var keyCharts = map[string]string{
	"sustained_429": "upstream-429", "burst_at_start": "upstream-429",
	"thundering_herd": "upstream-429", "deadlock": "saturation", "lock_order": "saturation",
	"acquire_order": "saturation", "serialised": "waiting", "memory_growth": "waiting",
	"acquire_timeouts": "waiting", "request_timeouts": "percentiles", "tenant_starvation": "tenants-wait",
	"littles_law": "in-flight",
}

// chartNamed returns the position in d.Charts of the chart called name,
// or -1.
func (d *Document) chartNamed(name string) int {
	for i, c := range d.Charts {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// keyChart returns the position in d.Charts of the chart to show first:
// the one that shows the first diagnosis's problem, or throughput for a
// healthy run; -1 when neither was drawn.
func (d *Document) keyChart() int {
	want := "throughput"
	if ds := d.Results.Diagnoses; len(ds) > 0 {
		if c, ok := keyCharts[ds[0].Code]; ok {
			want = c
		}
	}
	for _, name := range []string{want, "throughput"} {
		for i, c := range d.Charts {
			if c.Name == name {
				return i
			}
		}
	}
	return -1
}

// WriteMarkdown writes report.md; charts are referenced as PNG files beside it.
func (d *Document) WriteMarkdown(w io.Writer) error {
	r := d.Results
	var b strings.Builder
	fmt.Fprintf(&b, "# limitsim report: %s\n\nSeed %d · %s events\n\n", r.Scenario, r.Seed, Grouped(int64(r.Events)))
	h := Headline(r)
	fmt.Fprintf(&b, "**%s**\n\n%s\n\n", mdEscape(h[0]), mdEscape(h[1]))
	if d.Live != nil {
		b.WriteString(strings.TrimPrefix(comparisonMarkdown(d.Live), "\n") + "\n")
	}
	if d.Replay != nil {
		b.WriteString(replayMarkdown(d.Replay, d.chartNamed(replayChartName) >= 0))
	}
	timeline := d.chartNamed("timeline")
	if timeline >= 0 {
		c := d.Charts[timeline]
		fmt.Fprintf(&b, "## %s\n\n![%s](%s.png)\n\n%s\n\n", c.Title, c.Title, c.Name, c.Caption)
	}
	writeDiagnosesMarkdown(&b, r)
	writeFixMarkdown(&b, r)
	key := d.keyChart()
	if key >= 0 {
		c := d.Charts[key]
		fmt.Fprintf(&b, "## The chart that shows it: %s\n\n![%s](%s.png)\n\n%s\n\n", c.Title, c.Title, c.Name, c.Caption)
	}
	b.WriteString("\n## Summary\n\n| figure | value |\n|---|---|\n")
	for _, row := range summaryRows(r) {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], mdEscape(row[1]))
	}
	writeLimitersMarkdown(&b, r)
	writeUpstreamsMarkdown(&b, r)
	writeTablesMarkdown(&b, r)
	d.writeChartsMarkdown(&b, key)
	if text, note := d.scenarioShown(); note != "" {
		fmt.Fprintf(&b, "## Scenario as run\n\n%s\n", note)
	} else if text != "" {
		fmt.Fprintf(&b, "## Scenario as run\n\n```toml\n%s```\n", text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDiagnosesMarkdown writes the report's diagnoses section.
func writeDiagnosesMarkdown(b *strings.Builder, r *metrics.Results) {
	b.WriteString("## Diagnoses\n\n")
	if len(r.Diagnoses) == 0 {
		b.WriteString("No failure mode of the article's table was recognised in this run.\n")
	}
	for _, dg := range r.Diagnoses {
		fmt.Fprintf(b, "### %s: %s\n\n- **Seen:** %s\n- **Cause:** %s\n- **Fix:** %s\n", strings.ToUpper(dg.Severity), dg.Title, dg.Evidence, dg.Cause, dg.Fix)
		if o := overridesText(dg.Fix); o != "" {
			fmt.Fprintf(b, "- **Overrides:** `%s`", o)
			if part := PartOfFix(r, dg); part != "" {
				fmt.Fprintf(b, " (%s)", part)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// writeLimitersMarkdown writes the limiters' table, when the run has limiters.
func writeLimitersMarkdown(b *strings.Builder, r *metrics.Results) {
	if len(r.Limiters) > 0 {
		b.WriteString("\n## Limiters: is each one protecting you or throttling you?\n\n")
		b.WriteString("| limiter | kind | wait p50 | wait p99 | p_wait | utilisation | saturation | upstream 429 rate | verdict |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, l := range r.Limiters {
			v := verdictFor(r, l.Name)
			fmt.Fprintf(b, "| %s | %s/%s | %s | %s | %s | %s | %s | %s | **%s**: %s |\n", mdEscape(l.Name), l.Kind, l.Scope,
				secs(l.WaitS.P50), secs(l.WaitS.P99), pct(l.PWait), utilText(l), pct(l.Saturation), pct(v.Rate429), v.Verdict, mdEscape(v.Why))
		}
		if note := storeNote(r); note != "" {
			b.WriteString("\n" + mdEscape(note) + "\n")
		}
	}
}

// writeUpstreamsMarkdown writes the upstreams' table and its notes.
func writeUpstreamsMarkdown(b *strings.Builder, r *metrics.Results) {
	b.WriteString("\n## Upstreams\n\n| host | attempts | ok | 429 | 429 rate | 429/min | pauses | latency p50 | latency p99 | quota used |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, u := range metrics.ShownHosts(r) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(u.Host), Grouped(u.Attempts), Grouped(u.OK), Grouped(u.Throttled),
			pct(u.Rate429), human(u.PerMinute429, 3), Grouped(u.Pauses), secs(u.LatencyS.P50), secs(u.LatencyS.P99), quotaText(u))
	}
	if note := hostsNote(r); note != "" {
		b.WriteString("\n" + note + "\n")
	}
	for _, note := range quotaNotes(r) {
		b.WriteString("\n" + mdEscape(note) + "\n")
	}
	b.WriteString("\n" + windowsNote + ".\n")
}

// writeTablesMarkdown writes the client instances', tenants' and Little's
// Law tables and the warnings.
func writeTablesMarkdown(b *strings.Builder, r *metrics.Results) {
	if len(r.PerInstance) > 0 {
		b.WriteString("\n## Client instances\n\n| " + strings.Join(instanceHeader(), " | ") + " |\n|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, row := range instanceRows(r) {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}
	if len(r.Tenants) > 0 {
		b.WriteString("\n## Tenants\n\n| " + strings.Join(tenantHeader(), " | ") + " |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, row := range tenantRows(r) {
			b.WriteString("| " + mdEscape(row[0]) + " | " + strings.Join(row[1:], " | ") + " |\n")
		}
		if note := tenantsNote(r); note != "" {
			b.WriteString("\n" + note + "\n")
		}
	}
	b.WriteString("\n## Little's Law (whole run)\n\n| stage | L (time average) | λ (/s) | W | λ × W | relative error |\n|---|---:|---:|---:|---:|---:|\n")
	for _, l := range r.Little {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(l.Stage), human(l.L, 4), human(l.Lambda, 4), secs(l.W), human(l.Lambda*l.W, 4), human(l.RelError, 2))
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(b, "- %s\n", w)
		}
	}
}

// writeChartsMarkdown writes every chart but the key one (index key) and
// the timeline (at the top), and the charts left out.
func (d *Document) writeChartsMarkdown(b *strings.Builder, key int) {
	b.WriteString("\n## Charts\n\n")
	for i, c := range d.Charts {
		if i == key || c.Name == "timeline" || (d.Replay != nil && c.Name == replayChartName) { // the replay's is in its section
			continue
		}
		fmt.Fprintf(b, "### %s\n\n![%s](%s.png)\n\n%s\n\n", c.Title, c.Title, c.Name, c.Caption)
	}
	if len(d.Omitted) > 0 {
		b.WriteString("Charts left out:\n\n")
		for _, o := range d.Omitted {
			fmt.Fprintf(b, "- %s: %s\n", o.Title, o.Reason)
		}
		b.WriteString("\n")
	}
}

var svgProlog = regexp.MustCompile(`(?s)^.*?(<svg)`)

// inlineSVG strips the XML prolog so the SVG can sit inside HTML.
func inlineSVG(svg []byte) template.HTML {
	s := svgProlog.ReplaceAllString(string(svg), "$1")
	s = strings.Replace(s, "<svg", `<svg role="img" class="chart"`, 1)
	return template.HTML(s) // generated by vgsvg from our own data; text is escaped by it
}

// WriteHTML writes report.html: one self-contained file with the charts as
// inline SVG, no scripts and no network.
func (d *Document) WriteHTML(w io.Writer) error {
	r := d.Results
	type limiterRow struct{ Name, Kind, P50, P99, PWait, Utilisation, Saturation, Rate429, Verdict, Why string }
	type chart struct {
		Title, Caption string
		SVG            template.HTML
	}
	data := struct {
		R              *metrics.Results
		Headline       [2]string
		Tenants        [][]string
		TenantHeader   []string
		TenantsNote    string
		Instances      [][]string
		InstanceHeader []string
		HostsNote      string
		QuotaNotes     []string
		StoreNote      string
		WindowsNote    string
		Summary        [][2]string
		Limiters       []limiterRow
		Upstreams      [][]string
		Little         [][]string
		Charts         []chart
		Key            *chart // the chart that shows the problem, first
		Timeline       *chart // the run on one time axis, at the top
		Events         string
		Omitted        []Omitted
		Scenario       string
		ScenarioNote   string
		Live           [][]string
		LiveSpeed      string
		LiveNote       string
		Replay         *replaySection
		Fix            *fixSection
	}{R: r, Headline: Headline(r), Tenants: tenantRows(r), TenantHeader: tenantHeader(), TenantsNote: tenantsNote(r), Instances: instanceRows(r), InstanceHeader: instanceHeader(), HostsNote: hostsNote(r), QuotaNotes: quotaNotes(r), StoreNote: storeNote(r), WindowsNote: windowsNote, Summary: summaryRows(r), Omitted: d.Omitted}
	data.Scenario, data.ScenarioNote = d.scenarioShown()
	if lines := FixLines(r); lines != nil {
		data.Fix = &fixSection{Lines: lines[1:]}
		data.Fix.Head, data.Fix.Flags = fixHead(r.Fix)
	}
	if d.Live != nil {
		data.Live, data.LiveSpeed, data.LiveNote = comparisonRows(d.Live), human(d.Live.Speed, 3), d.Live.Note
	}
	data.Replay = d.Replay.htmlSection()
	for _, l := range r.Limiters {
		v := verdictFor(r, l.Name)
		data.Limiters = append(data.Limiters, limiterRow{l.Name, l.Kind + "/" + l.Scope, secs(l.WaitS.P50), secs(l.WaitS.P99), pct(l.PWait), utilText(l), pct(l.Saturation), pct(v.Rate429), v.Verdict, v.Why})
	}
	for _, u := range metrics.ShownHosts(r) {
		data.Upstreams = append(data.Upstreams, []string{u.Host, Grouped(u.Attempts), Grouped(u.OK), Grouped(u.Throttled),
			pct(u.Rate429), human(u.PerMinute429, 3), Grouped(u.Pauses), secs(u.LatencyS.P50), secs(u.LatencyS.P99), quotaText(u)})
	}
	for _, l := range r.Little {
		data.Little = append(data.Little, []string{l.Stage, human(l.L, 4), human(l.Lambda, 4), secs(l.W), human(l.Lambda*l.W, 4), human(l.RelError, 2)})
	}
	data.Events = Grouped(int64(r.Events))
	key, timeline := d.keyChart(), d.chartNamed("timeline")
	for i, c := range d.Charts {
		ch := chart{c.Title, c.Caption, inlineSVG(c.SVG)}
		switch i {
		case timeline:
			data.Timeline = &ch
			continue
		case key:
			data.Key = &ch
			continue
		}
		if data.Replay != nil && c.Name == replayChartName {
			data.Replay.Chart = &replayFigure{c.Caption, ch.SVG}
			continue
		}
		data.Charts = append(data.Charts, ch)
	}
	return page.Execute(w, data)
}

// WriteFiles writes the charts (PNG and SVG), report.md and report.html into
// dir, each through a temporary file and a rename.
func (d *Document) WriteFiles(dir string) error { return d.WriteFilesTo(Folder{Dir: dir}, nil) }

// CreateOutputTemp creates a hidden temporary file in dir to be renamed to
// name once written. Unlike os.CreateTemp (always 0600) it asks for 0644,
// so the umask decides, as for any file a Go tool writes.
func CreateOutputTemp(dir, name string) (*os.File, error) {
	for range 10000 {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d", name, rand.Uint32()))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free temporary name in %s", name, dir)
}

// ReadRun loads a run's metrics.json, timeseries.csv and (if present)
// scenario.toml from dir, for redrawing its report.
func ReadRun(dir string) (*metrics.Results, *metrics.Series, string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		return nil, nil, "", err
	}
	var r metrics.Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, "", JSONError(filepath.Join(dir, "metrics.json"), data, err)
	}
	// Every run writes these; without them the report would describe a
	// run of zeros.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, "metrics.json"), err)
	}
	for _, k := range []string{"scenario", "seed", "complete", "elapsed_s", "interval_s", "requests", "throughput", "limiters", "upstreams"} {
		if _, ok := fields[k]; !ok {
			return nil, nil, "", fmt.Errorf("%s: no %q: not a limitsim metrics.json", filepath.Join(dir, "metrics.json"), k)
		}
	}
	if !(r.IntervalS > 0) {
		return nil, nil, "", fmt.Errorf("%s: interval_s %v: not a limitsim metrics.json", filepath.Join(dir, "metrics.json"), r.IntervalS)
	}
	if !(r.ElapsedS >= 0) || math.IsInf(r.ElapsedS, 1) {
		return nil, nil, "", fmt.Errorf("%s: elapsed_s %v: not a limitsim metrics.json", filepath.Join(dir, "metrics.json"), r.ElapsedS)
	}
	for _, k := range []string{"limiters", "upstreams"} {
		if string(fields[k]) == "null" { // every run writes a list, empty or not
			return nil, nil, "", fmt.Errorf("%s: %q is null, not a list: not a limitsim metrics.json", filepath.Join(dir, "metrics.json"), k)
		}
	}
	f, err := os.Open(filepath.Join(dir, "timeseries.csv"))
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	s, err := metrics.ReadCSV(f)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, "timeseries.csv"), err)
	}
	// metrics.json lists at most metrics.ListedWorst tenants or scopes of a
	// large run; the complete lists are beside it.
	for _, f := range []struct {
		name string
		read func(io.Reader, *metrics.Results) error
	}{{"tenants.csv", metrics.ReadTenantsCSV}, {"scopes.csv", metrics.ReadScopesCSV}} {
		fh, err := os.Open(filepath.Join(dir, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, "", err
		}
		err = f.read(fh, &r)
		fh.Close()
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
		}
	}
	// Both files of one run: the series' columns are the run's, and its
	// rows span it.
	err = metrics.CheckColumns(&r, s.Columns)
	if err == nil {
		err = metrics.CheckRows(&r, s)
	}
	if err != nil {
		s.Close()
		return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, "timeseries.csv"), err)
	}
	scenario, _ := os.ReadFile(filepath.Join(dir, "scenario.toml"))
	return &r, s, string(scenario), nil
}

// maxScenarioShown is the longest scenario text the reports include;
// a longer one (thousands of tenants or hosts) is referred to instead.
const maxScenarioShown = 16 << 10

// scenarioShown returns the scenario text to include in a report, or, for
// one too long to read there, a note pointing to scenario.toml.
func (d *Document) scenarioShown() (text, note string) {
	if len(d.Scenario) <= maxScenarioShown {
		return d.Scenario, ""
	}
	lines := strings.Count(d.Scenario, "\n")
	return "", fmt.Sprintf("The scenario as run is %s lines (%s KiB): see scenario.toml beside this report.", Grouped(int64(lines)), Grouped(int64(len(d.Scenario)>>10)))
}
