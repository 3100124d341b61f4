package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
)

// ComparedRun is one run of a comparison.
type ComparedRun struct {
	Name    string
	Results *metrics.Results
	Series  *metrics.Series
}

// Comparison is the document `limitsim compare -o DIR` writes: the
// verdicts, each run's headline, the table of headline metrics with the
// key to its marks, and overlay charts with one colour per run.
type Comparison struct {
	Runs   []ComparedRun
	Header []string   // the table's first row: "", then each run's name
	Rows   [][]string // one row per metric: its name, then each run's value
	// Verdicts are printed first, one line each: every later run against
	// the first, then which is best overall.
	Verdicts []string
	// Key explains the table's marks, one sentence each; without it the
	// document says that * marks a row's best.
	Key     []string
	Charts  []Chart
	Omitted []Omitted
	// Replications is how many runs each column's figures are the mean
	// of; with several, each run's headline says which run it is.
	Replications int
}

// key is c.Key, or the sentence of a table without verdicts.
func (c *Comparison) key() []string {
	if len(c.Key) > 0 {
		return c.Key
	}
	return []string{"* marks the best of a row; every run draws its arrivals, routing and latencies from the same named random streams"}
}

// HeadlineOf names the run a compared scenario's headline is read from:
// with several replications the table gives means, the headline one run,
// and says which ("token-bucket, its run on seed 1").
func HeadlineOf(name string, r *metrics.Results, replications int) string {
	if replications > 1 {
		return fmt.Sprintf("%s, its run on seed %d", name, r.Seed)
	}
	return name
}

// comparisonCharts are the overlay charts of a comparison, in order.
var comparisonCharts = []struct {
	name, title, caption string
	draw                 func([]ComparedRun) (*plot.Plot, string)
}{
	{"compare-wait-cdf", "Wait, cumulative", "Each run's most waited-on limiter (highest p99 wait): the share of acquisitions that waited at most x. Further left is better.", compareWaitCDF},
	{"compare-429-rate", "429 rate over time", "Share of the attempts started in each interval that were answered 429. Any sustained non-zero line means that run's local limit is above the real one.", compare429Rate},
	{"compare-goodput", "Goodput over time", "Requests that succeeded per second, per interval.", compareGoodput},
}

// BuildComparison draws the overlay charts of runs.
func BuildComparison(runs []ComparedRun, header []string, rows [][]string) (*Comparison, error) {
	c := &Comparison{Runs: runs, Header: header, Rows: rows}
	names := make([]string, len(runs))
	var seeds []string
	for i, r := range runs {
		names[i] = r.Name
		if seed := strconv.FormatUint(r.Results.Seed, 10); !slices.Contains(seeds, seed) {
			seeds = append(seeds, seed)
		}
	}
	// The charts draw each run's first replication, where the table gives
	// means over them.
	footer := fmt.Sprintf("limitsim · comparison of %s · each run's first replication (seed %s)", strings.Join(names, ", "), strings.Join(seeds, ", "))
	for _, spec := range comparisonCharts {
		p, why := spec.draw(runs)
		if p == nil || !finiteAxes(p) {
			if why == "" {
				why = "nothing to draw"
			}
			c.Omitted = append(c.Omitted, Omitted{Name: spec.name, Title: spec.title, Reason: why})
			continue
		}
		png, svg, err := render(p, footer)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", spec.name, err)
		}
		c.Charts = append(c.Charts, Chart{Name: spec.name, Title: spec.title, Caption: spec.caption, PNG: png, SVG: svg})
	}
	return c, nil
}

// mostWaited is the limiter of r with the highest p99 wait.
func mostWaited(r *metrics.Results) (metrics.LimiterStats, bool) {
	var best metrics.LimiterStats
	found := false
	for _, l := range r.Limiters {
		if !found || l.WaitS.P99 > best.WaitS.P99 {
			best, found = l, true
		}
	}
	return best, found
}

func compareWaitCDF(runs []ComparedRun) (*plot.Plot, string) {
	p := newPlot("Wait in each run's most waited-on limiter", "wait (s, log scale)", "share of acquisitions waiting at most x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	drawn := 0
	for i, r := range runs {
		l, ok := mostWaited(r.Results)
		if !ok {
			continue
		}
		xs, ys := waitCDFPoints(l)
		if len(xs) == 0 {
			continue
		}
		line(p, xs, ys, r.Name+" ("+l.Name+")", i, false)
		drawn++
	}
	if drawn == 0 {
		return nil, "no acquisition waited in any run"
	}
	p.Y.Tick.Marker = cappedTicks{max: 1} // above 1 is the legend's room
	legendRoom(p, drawn)
	return p, ""
}

// perInterval draws, for every run, the column f gives of its series per
// interval start.
func perInterval(runs []ComparedRun, title, ylabel string, f func(r ComparedRun) column) (*plot.Plot, string) {
	longest := 0.0
	for _, r := range runs {
		longest = max(longest, r.Results.ElapsedS)
	}
	p := newTimePlotFor(longest, title, ylabel)
	var xs [][]float64
	var all []series
	var hues []int
	top := 0.0
	for i, r := range runs {
		if r.Series.Len() < 2 {
			continue
		}
		lines := readLines(r.Results, r.Series, f(r))
		sr := lines.line(0, r.Name, false)
		top = max(top, sr.peak())
		xs, all, hues = append(xs, lines.x), append(all, sr), append(hues, i)
	}
	drawn := len(all)
	if drawn == 0 {
		return nil, "every run is shorter than two intervals"
	}
	// A run drawn exactly over another (two policies that never differ
	// here) is dashed and named as the same, as a run's own charts do.
	for k, sr := range unhide(all, top) {
		drawLine(p, xs[k], sr, hues[k])
	}
	legendRoom(p, drawn) // one legend row a run, above the data
	return p, ""
}

func compare429Rate(runs []ComparedRun) (*plot.Plot, string) {
	any429 := false
	for _, r := range runs {
		any429 = any429 || r.Results.Requests.Responses429 > 0
	}
	if !any429 {
		return nil, "no run met a 429"
	}
	p, why := perInterval(runs, "429 rate per interval", "429 rate (%)", func(ComparedRun) column {
		return column{[]string{"responses_429", "starts"}, func(v []float64) float64 {
			if v[1] > 0 {
				return 100 * v[0] / v[1] // in %, as the run charts give it
			}
			return math.NaN() // no attempts: no rate (not 0)
		}}
	})
	if p != nil {
		p.Y.Min, p.Y.Max = 0, 100
		p.Y.Tick.Marker = cappedTicks{max: 100} // above 100% is the legend's room
		legendRoom(p, len(runs))
	}
	return p, why
}

func compareGoodput(runs []ComparedRun) (*plot.Plot, string) {
	return perInterval(runs, "Goodput per interval", "requests succeeded per second", func(r ComparedRun) column {
		return rate(r.Results, "succeeded")
	})
}

// WriteMarkdown writes compare.md; charts are referenced as PNG files.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# limitsim comparison\n\n")
	for _, v := range c.Verdicts {
		fmt.Fprintf(&b, "- %s\n", mdEscape(v))
	}
	if len(c.Verdicts) > 0 {
		b.WriteString("\n")
	}
	for _, r := range c.Runs {
		h := Headline(r.Results)
		fmt.Fprintf(&b, "- **%s**: %s — %s\n", mdEscape(HeadlineOf(r.Name, r.Results, c.Replications)), mdEscape(h[0]), mdEscape(h[1]))
	}
	b.WriteString("\n| " + strings.Join(escapeAll(c.Header), " | ") + " |\n|" + strings.Repeat("---|", len(c.Header)) + "\n")
	for _, row := range c.Rows {
		b.WriteString("| " + strings.Join(escapeAll(row), " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, k := range c.key() {
		if rest, star := strings.CutPrefix(k, "* "); star { // not a list item
			k = "`*` " + rest
		}
		b.WriteString(mdEscape(k) + "\n\n")
	}
	for _, ch := range c.Charts {
		fmt.Fprintf(&b, "\n## %s\n\n![%s](%s.png)\n\n%s\n", ch.Title, ch.Title, ch.Name, ch.Caption)
	}
	for _, o := range c.Omitted {
		fmt.Fprintf(&b, "\n_%s left out: %s._\n", o.Title, o.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func escapeAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = mdEscape(x)
	}
	return out
}

var comparePage = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>limitsim comparison</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
svg.chart { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.92em; }
</style></head><body>
<h1>limitsim comparison</h1>
{{if .Verdicts}}<ul class="verdicts" id="verdict">{{range .Verdicts}}<li>{{.}}</li>{{end}}</ul>
{{end}}<ul>{{range .Headlines}}<li><strong>{{index . 0}}</strong>: {{index . 1}} — {{index . 2}}</li>{{end}}</ul>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<th>{{$c}}</th>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{range .Key}}<p>{{.}}</p>
{{end}}{{range .Charts}}<figure><h2>{{.Title}}</h2>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{range .Omitted}}<p><em>{{.Title}} left out: {{.Reason}}.</em></p>
{{end}}</body></html>
`))

// WriteHTML writes compare.html: one self-contained file, charts inline.
func (c *Comparison) WriteHTML(w io.Writer) error {
	type chart struct {
		Title, Caption string
		SVG            template.HTML
	}
	data := struct {
		Verdicts  []string
		Headlines [][3]string
		Header    []string
		Rows      [][]string
		Key       []string
		Charts    []chart
		Omitted   []Omitted
	}{Verdicts: c.Verdicts, Header: c.Header, Rows: c.Rows, Key: c.key(), Omitted: c.Omitted}
	for _, r := range c.Runs {
		h := Headline(r.Results)
		data.Headlines = append(data.Headlines, [3]string{HeadlineOf(r.Name, r.Results, c.Replications), h[0], h[1]})
	}
	for _, ch := range c.Charts {
		data.Charts = append(data.Charts, chart{Title: ch.Title, Caption: ch.Caption, SVG: inlineSVG(ch.SVG)})
	}
	return comparePage.Execute(w, data)
}

// WriteFiles writes the charts (PNG and SVG), compare.md and compare.html
// into dir, each through a temporary file and a rename.
func (c *Comparison) WriteFiles(dir string) error { return c.WriteFilesTo(Folder{Dir: dir}, nil) }
