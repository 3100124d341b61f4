package report

import (
	"html/template"
	"strings"
)

// page is report.html: one self-contained page, its charts inline SVG.
var page = template.Must(template.New("report").Funcs(template.FuncMap{"overrides": overridesText, "partOfFix": PartOfFix, "upper": strings.ToUpper}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>limitsim report: {{.R.Scenario}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.critical { border-left: 5px solid #c00; padding-left: 0.8em; }
.warning { border-left: 5px solid #e69f00; padding-left: 0.8em; }
svg.chart { width: 100%; height: auto; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; white-space: pre-wrap; font-size: 0.85em; }
figcaption { color: #555; font-size: 0.92em; }
</style>
</head>
<body>
<h1>limitsim report: {{.R.Scenario}}</h1>
<p>Seed {{.R.Seed}} · {{.Events}} events</p>
<p class="headline"><strong>{{index .Headline 0}}</strong><br>{{index .Headline 1}}</p>
{{if .Live}}<h2>Live against simulated (speed {{.LiveSpeed}})</h2>
<p>This run was live: real HTTP requests to a loopback server answering with the scenario's upstream model, the client on the wall clock. The simulated column is the same scenario and seed in virtual time.</p>
<table><tr><th>figure</th><th>simulated</th><th>live</th><th>difference</th></tr>
{{range .Live}}<tr><td>{{index . 0}}</td><td class="n">{{index . 1}}</td><td class="n">{{index . 2}}</td><td class="n">{{index . 3}}</td></tr>
{{end}}</table>{{with .LiveNote}}
<p>{{.}}.</p>{{end}}{{end}}
{{with .Replay}}<h2>Production against the replay</h2>
<p>{{.Intro}}</p>
<p>{{range .Verdict}}{{.}}<br>{{end}}</p>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="n">{{$c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
<p>Every minute and tenant is in replay.json.</p>
{{with .Chart}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}
{{end}}{{with .Timeline}}<h2>{{.Title}}</h2>
<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}<h2>Diagnoses</h2>
{{if not .R.Diagnoses}}<p>No failure mode of the article's table was recognised in this run.</p>{{end}}
{{range .R.Diagnoses}}<div class="{{.Severity}}"><h3>{{upper .Severity}}: {{.Title}}</h3>
<p><strong>Seen:</strong> {{.Evidence}}<br><strong>Cause:</strong> {{.Cause}}<br><strong>Fix:</strong> {{.Fix}}{{with overrides .Fix}}<br><strong>Overrides:</strong> <code>{{.}}</code>{{end}}{{with partOfFix $.R .}} ({{.}}){{end}}</p></div>
{{end}}{{with .Fix}}<h2>{{.Head}}</h2>
{{with .Flags}}<pre>{{.}}</pre>{{end}}<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
{{end}}
{{with .Key}}<h2>The chart that shows it: {{.Title}}</h2>
<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}<h2>Summary</h2>
<table><tr><th>figure</th><th>value</th></tr>
{{range .Summary}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .R.Limiters}}<h2>Limiters: is each one protecting you or throttling you?</h2>
<table><tr><th>limiter</th><th>kind</th><th>wait p50</th><th>wait p99</th><th>p_wait</th><th>utilisation</th><th>saturation</th><th>upstream 429 rate</th><th>verdict</th></tr>
{{range .Limiters}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td class="n">{{.P50}}</td><td class="n">{{.P99}}</td><td class="n">{{.PWait}}</td><td class="n">{{.Utilisation}}</td><td class="n">{{.Saturation}}</td><td class="n">{{.Rate429}}</td><td><strong>{{.Verdict}}</strong>: {{.Why}}</td></tr>
{{end}}</table>{{with .StoreNote}}<p>{{.}}</p>{{end}}{{end}}
<h2>Upstreams</h2>
<table><tr><th>host</th><th>attempts</th><th>ok</th><th>429</th><th>429 rate</th><th>429/min</th><th>pauses</th><th>latency p50</th><th>latency p99</th><th>quota used</th></tr>
{{range .Upstreams}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{with .HostsNote}}<p>{{.}}</p>{{end}}{{range .QuotaNotes}}<p>{{.}}</p>{{end}}<p>{{.WindowsNote}}.</p>
{{if .Instances}}<h2>Client instances</h2>
<table><tr>{{range .InstanceHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .Instances}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Tenants}}<h2>Tenants</h2>
<table><tr>{{range .TenantHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .Tenants}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{with .TenantsNote}}<p>{{.}}</p>{{end}}{{end}}
<h2>Little's Law (whole run)</h2>
<table><tr><th>stage</th><th>L (time average)</th><th>λ (/s)</th><th>W</th><th>λ × W</th><th>relative error</th></tr>
{{range .Little}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{if .R.Warnings}}<h2>Warnings</h2><ul>{{range .R.Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Charts</h2>
{{range .Charts}}<figure><h3>{{.Title}}</h3>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
{{if .Omitted}}<p>Charts left out:</p><ul>{{range .Omitted}}<li>{{.Title}}: {{.Reason}}</li>{{end}}</ul>{{end}}
{{if .ScenarioNote}}<h2>Scenario as run</h2><p>{{.ScenarioNote}}</p>{{else if .Scenario}}<h2>Scenario as run</h2><pre>{{.Scenario}}</pre>{{end}}
</body>
</html>
`))
