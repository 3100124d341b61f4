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
)

// planVerdict is what a plan decided, shared by plan.md and plan.html:
// Label in bold, then Flags as code to paste (if any), then Rest.
type planVerdict struct {
	Label, Flags, Rest string
}

// verdict is the plan's recommendation as --set flags, or why there is
// none.
func (p *Plan) verdict() planVerdict {
	switch {
	case p.Incomplete:
		return planVerdict{Label: "Incomplete:", Rest: " the plan was stopped before every point ran; it recommends nothing."}
	case p.Recommended < 0:
		v := planVerdict{Label: "No point meets every constraint."}
		if p.Closest != "" {
			v.Rest = " The closest to holding: " + p.Closest + "."
		}
		return v
	}
	flags := p.Flags
	if flags == "" {
		set := make([]string, len(p.Keys))
		for k, key := range p.Keys {
			set[k] = fmt.Sprintf("--set %s=%s", key, strconv.FormatFloat(p.Params[p.Recommended][k], 'g', -1, 64))
		}
		flags = strings.Join(set, " ")
	}
	return planVerdict{Label: "Recommended:", Flags: flags,
		Rest: " (the scenario as configured there is recommended.toml)."}
}

// intro is the sentence under the verdict: the objective, the
// constraints, the points and, with replications, how to read a figure.
func (p *Plan) intro() string {
	s := fmt.Sprintf("Objective %s over %s points", p.Objective, Grouped(int64(len(p.Params))))
	if len(p.Constraints) > 0 {
		var cs []string
		for _, c := range p.Constraints {
			cs = append(cs, constraintText(c))
		}
		s += "; constraints " + strings.Join(cs, ", ")
	}
	s += "."
	if p.Replications > 1 {
		runs := fmt.Sprintf("%d replications", p.Replications)
		if p.stoppedEarly() {
			runs = fmt.Sprintf("at most %d replications; a point decided infeasible stops early", p.Replications)
		}
		s += fmt.Sprintf(" Figures are means over each point's runs (%s) ± the 95%% confidence half-width; a constraint holds on the far bound.", runs)
	}
	return s
}

// runsColumn reports whether the table has a runs column: a plan of
// replications with the points' counts of runs.
func (p *Plan) runsColumn() bool { return p.Replications > 1 && len(p.Runs) == len(p.Params) }

// stoppedEarly reports whether a point that ran to its end used fewer
// runs than the replications.
func (p *Plan) stoppedEarly() bool {
	for i, n := range p.Runs {
		if n < p.Replications && (i >= len(p.Errors) || p.Errors[i] == "") {
			return true
		}
	}
	return false
}

// table is the table of points of both formats: its header and, per
// point, its cells.
func (p *Plan) table() (head []string, rows [][]string) {
	head = append(head, p.Keys...)
	for _, m := range p.Metrics {
		head = append(head, m.Path+unitOf(m.Path).suffix())
	}
	for _, m := range p.Health {
		head = append(head, strings.ReplaceAll(m.Path, "_", " "))
	}
	if p.runsColumn() {
		head = append(head, "runs")
	}
	head = append(head, "feasible", "Pareto")
	for i, v := range p.Params {
		var row []string
		for _, x := range v {
			row = append(row, human(x, 6))
		}
		for _, m := range p.Metrics {
			row = append(row, figure(m, i))
		}
		for _, m := range p.Health {
			row = append(row, figure(m, i)+p.longerMark(m.Path, i))
		}
		if p.runsColumn() {
			row = append(row, strconv.Itoa(p.Runs[i]))
		}
		row = append(row, p.feasibleText(i), yesNo(p.Pareto[i]))
		rows = append(rows, row)
	}
	return head, rows
}

// LongerRunNote explains the mark LongerRunMark puts on the counts of a
// point that ran longer than the others.
const LongerRunNote = "* counted over the point's longer run (see the horizon warning), not the others': compare success ratios, not these counts"

// LongerRunMark marks a count taken over a lengthened run.
const LongerRunMark = "*"

// longerMark is LongerRunMark on a count (timeouts, rejected) of point i
// if it ran longer than the others, "" otherwise.
func (p *Plan) longerMark(path string, i int) string {
	if i < len(p.Longer) && p.Longer[i] && (path == "timeouts" || path == "rejected") {
		return LongerRunMark
	}
	return ""
}

// longerAny reports whether any point ran longer than the others.
func (p *Plan) longerAny() bool {
	return slices.Contains(p.Longer, true)
}

// figure is m at point i in its unit, with its half-width when the plan
// ran replications.
func figure(m PlanMetric, i int) string {
	if m.CI95 == nil {
		return Figure(m.Path, m.Values[i], math.NaN())
	}
	return Figure(m.Path, m.Values[i], m.CI95[i])
}

// Figure is the value v of the metrics path in its unit, as every plan
// table writes it (a share as a percentage, a time in its unit, a count
// grouped), with ci as its 95% half-width unless ci is NaN.
func Figure(path string, v, ci float64) string {
	u := unitOf(path)
	if math.IsNaN(ci) || math.IsNaN(v) {
		return u.text(v)
	}
	return u.text(v) + " ± " + u.halfWidth(ci)
}

// feasibleText is "yes", or "no: " and why: the constraints missed on
// their far bound, critical findings, a horizon refused, an error.
func (p *Plan) feasibleText(i int) string {
	if p.Feasible[i] {
		return "yes"
	}
	if i < len(p.Errors) && p.Errors[i] != "" {
		return "no: error: " + p.Errors[i]
	}
	var why []string
	for _, c := range p.Constraints {
		if m, ok := p.metric(c.Path); ok && !holdsFar(c, m, i) {
			why = append(why, fmt.Sprintf("%s is %s, needs %s %s", c.Path, figure(m, i), c.Op, unitOf(c.Path).tick(c.Value)))
		}
	}
	if i < len(p.Why) && p.Why[i] != "" {
		why = append(why, p.Why[i])
	}
	if len(why) == 0 {
		return "no"
	}
	return "no: " + strings.Join(why, "; ")
}

// metric is the plan's metric of path.
func (p *Plan) metric(path string) (PlanMetric, bool) {
	for _, m := range p.Metrics {
		if m.Path == path {
			return m, true
		}
	}
	return PlanMetric{}, false
}

// holdsFar reports whether c holds at point i on the bound of m's
// confidence interval on the far side of its threshold.
func holdsFar(c metrics.Assertion, m PlanMetric, i int) bool {
	v := m.Values[i]
	if m.CI95 != nil {
		if c.Op == "<" || c.Op == "<=" {
			v += m.CI95[i]
		} else {
			v -= m.CI95[i]
		}
	}
	ok, _, _ := c.CheckValue(v)
	return ok
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// WriteMarkdown writes plan.md: the verdict, the robustness note and the
// warnings, every point with its health and why it is not feasible, and
// the charts.
func (p *Plan) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# limitsim plan: %s\n\n", p.Scenario)
	v := p.verdict()
	fmt.Fprintf(&b, "**%s**", v.Label)
	if v.Flags != "" {
		fmt.Fprintf(&b, " `%s`", v.Flags)
	}
	b.WriteString(mdEscape(v.Rest) + "\n\n")
	if p.Robustness != "" {
		fmt.Fprintf(&b, "**Robustness:** %s.\n\n", mdEscape(p.Robustness))
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdEscape(w))
	}
	if p.Refined != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(p.Refined))
	}
	if p.Uncertain != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(p.Uncertain))
	}
	if p.Cost != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(p.Cost))
	}
	b.WriteString(mdEscape(p.intro()) + "\n\n## Points\n\n")
	head, rows := p.table()
	b.WriteString("| " + strings.Join(escapeAll(head), " | ") + " |\n|")
	for k := range head {
		if k == len(head)-2 {
			b.WriteString("---|") // why a point is not feasible: text
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for i, row := range rows {
		row = escapeAll(row)
		if i == p.Recommended {
			row[0] = "**" + row[0] + "**"
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if p.Recommended >= 0 {
		b.WriteString("\nThe recommended point's first figure is in bold.\n")
	}
	if p.longerAny() {
		b.WriteString("\n" + mdEscape(LongerRunNote) + "\n")
	}
	if len(p.Charts) > 0 || len(p.Omitted) > 0 {
		b.WriteString("\n## Charts\n")
	}
	for _, ch := range p.Charts {
		fmt.Fprintf(&b, "\n### %s\n\n![%s](%s.png)\n\n%s\n", ch.Title, ch.Title, ch.Name, mdEscape(ch.Caption))
	}
	for _, o := range p.Omitted {
		fmt.Fprintf(&b, "\n_%s left out: %s._\n", o.Title, o.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var planPage = template.Must(template.New("plan").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>limitsim plan: {{.P.Scenario}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { margin: 0 0 0.4em; font-size: 1.6em; }
.verdict { font-size: 1.2em; margin: 0.4em 0; padding: 0.6em 0.8em; background: #f1f8ec; border-left: 6px solid #238443; }
.verdict.none { background: #fdf0e6; border-left-color: #d55e00; }
.verdict code { font-size: 0.95em; background: #fff; padding: 0.1em 0.3em; user-select: all; }
.warning { border-left: 5px solid #e69f00; padding-left: 0.8em; margin: 0.4em 0; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f6f6f6; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.rec td { background: #f1f8ec; font-weight: bold; }
svg.chart { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.92em; }
</style>
</head>
<body>
<h1>limitsim plan: {{.P.Scenario}}</h1>
<p class="verdict{{if .None}} none{{end}}" id="verdict"><strong>{{.V.Label}}</strong>{{with .V.Flags}} <code>{{.}}</code>{{end}}{{.V.Rest}}</p>
{{with .P.Robustness}}<p><strong>Robustness:</strong> {{.}}.</p>
{{end}}{{range .P.Warnings}}<p class="warning">warning: {{.}}</p>
{{end}}{{with .P.Refined}}<p>{{.}}</p>
{{end}}{{with .P.Uncertain}}<p>{{.}}</p>
{{end}}{{with .P.Cost}}<p>{{.}}</p>
{{end}}<p>{{.Intro}}</p>
<h2>Points</h2>
<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $r := .Rows}}<tr{{if eq $i $.Rec}} class="rec"{{end}}>{{range $k, $c := $r}}<td{{if ne $k $.WhyCol}} class="n"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{with .Longer}}<p>{{.}}</p>
{{end}}{{if or .Charts .P.Omitted}}<h2>Charts</h2>
{{end}}{{range .Charts}}<figure><h3>{{.Title}}</h3>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{range .P.Omitted}}<p><em>{{.Title}} left out: {{.Reason}}.</em></p>
{{end}}</body>
</html>
`))

// WriteHTML writes plan.html: the same sections as plan.md in one
// self-contained file, the charts as inline SVG, no scripts and no
// network; the verdict comes first, on the first screen.
func (p *Plan) WriteHTML(w io.Writer) error {
	type chart struct {
		Title, Caption string
		SVG            template.HTML
	}
	head, rows := p.table()
	data := struct {
		P           *Plan
		V           planVerdict
		None        bool
		Intro       string
		Head        []string
		Rows        [][]string
		Rec, WhyCol int
		Longer      string
		Charts      []chart
	}{P: p, V: p.verdict(), None: p.Recommended < 0, Intro: p.intro(), Head: head, Rows: rows, Rec: p.Recommended, WhyCol: len(head) - 2}
	if p.longerAny() {
		data.Longer = LongerRunNote
	}
	for _, c := range p.Charts {
		data.Charts = append(data.Charts, chart{c.Title, c.Caption, inlineSVG(c.SVG)})
	}
	return planPage.Execute(w, data)
}

// WriteFiles writes the charts, plan.md and plan.html into dir.
func (p *Plan) WriteFiles(dir string) error { return p.WriteFilesTo(Folder{Dir: dir}, nil) }

// Files lists the files WriteFiles writes.
func (p *Plan) Files() []string {
	out := make([]string, 0, 2*len(p.Charts)+2)
	for _, ch := range p.Charts {
		out = append(out, ch.Name+".png", ch.Name+".svg")
	}
	return append(out, "plan.md", "plan.html")
}
