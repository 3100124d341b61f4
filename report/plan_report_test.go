package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// samplePlan is a two-key plan over an unevenly spaced burst (1, 5, 10,
// 20): the higher rates break the 429 constraint, one point has a
// critical finding, one failed.
func samplePlan(t *testing.T) *Plan {
	t.Helper()
	p := &Plan{Scenario: "tb", Keys: []string{"client.limiter.quota.rate", "client.limiter.quota.burst"},
		Objective: "max:goodput_rps", Recommended: -1, Replications: 1,
		Constraints: []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01, Text: "rate_429<0.01"}},
		Warnings:    []string{"edge: client.limiter.quota.burst=20 is the top of its swept range"},
		Robustness:  "holds at 10% more load on 3 fresh seeds and a run 2× as long"}
	good := PlanMetric{Path: "goodput_rps"}
	r429 := PlanMetric{Path: "rate_429"}
	succ, tmo, rej := PlanMetric{Path: "success_ratio"}, PlanMetric{Path: "timeouts"}, PlanMetric{Path: "rejected"}
	for _, rate := range []float64{80, 100, 120} {
		for _, burst := range []float64{1, 5, 10, 20} {
			i := len(p.Params)
			p.Params = append(p.Params, []float64{rate, burst})
			miss := max(0, (rate-100)/rate)
			good.Values = append(good.Values, min(rate, 100)-0.01*burst)
			r429.Values = append(r429.Values, miss)
			succ.Values = append(succ.Values, 0.6+0.002*rate)
			tmo.Values = append(tmo.Values, 12000-80*rate)
			rej.Values = append(rej.Values, 0)
			p.Feasible = append(p.Feasible, miss < 0.01 && !(rate == 80 && burst == 1))
			p.Pareto = append(p.Pareto, false)
			why, failed := "", ""
			if rate == 80 && burst == 1 {
				why = "critical findings: acquire_timeouts"
			}
			p.Why, p.Errors = append(p.Why, why), append(p.Errors, failed)
			if rate == 100 && burst == 1 {
				p.Recommended = i
				p.Pareto[i] = true
			}
		}
	}
	p.Metrics = []PlanMetric{good, r429}
	p.Health = []PlanMetric{succ, tmo, rej}
	if err := DrawPlan(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// svgTexts are the texts of an SVG, in order.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = false
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			if s := strings.TrimSpace(string(cd)); s != "" {
				out = append(out, s)
			}
		}
	}
}

// A heat map over an unevenly spaced key has a tick at each swept value
// and nowhere else (no 0, no 15 of a linear axis), a colour bar with the
// metric's unit, and a caption that says what is drawn.
func TestPlanHeatMapTicksAtSweptValuesAndColourBar(t *testing.T) {
	p := samplePlan(t)
	var heat *Chart
	for i := range p.Charts {
		if p.Charts[i].Title == "rate_429" {
			heat = &p.Charts[i]
		}
	}
	if heat == nil {
		t.Fatalf("no rate_429 heat map: %v", p.Omitted)
	}
	texts := svgTexts(t, heat.SVG)
	var numbers []string
	for _, s := range texts {
		if regexp.MustCompile(`^[0-9][0-9,.]*$`).MatchString(s) {
			numbers = append(numbers, s)
		}
	}
	// The only bare numbers are the ticks of both keys: the cells and the
	// colour bar are percentages.
	if want := []string{"80", "100", "120", "1", "5", "10", "20"}; !slices.Equal(numbers, want) {
		t.Errorf("tick labels %q, want exactly the swept values %q", numbers, want)
	}
	for _, want := range []string{"darker = better", "rate_429", "0%", "not feasible", "recommended", "16.7%"} {
		if !slices.Contains(texts, want) {
			t.Errorf("the heat map has no %q: %q", want, texts)
		}
	}
	for _, want := range []string{"all cells the same size", "client.limiter.quota.burst are not evenly spaced",
		"lower is better here, so darker green is better", "dashed line across the bar is the constraint rate_429 < 1%",
		"The 5 crossed cells", "outlined in orange is the recommended point"} {
		if !strings.Contains(heat.Caption, want) {
			t.Errorf("caption lacks %q:\n%s", want, heat.Caption)
		}
	}
	if strings.Contains(heat.Caption, "not evenly spaced") && strings.Contains(heat.Caption, "quota.rate and") {
		t.Errorf("the evenly spaced key is called uneven:\n%s", heat.Caption)
	}
}

var (
	mdHeading   = regexp.MustCompile(`(?m)^(#+) (.*)$`)
	htmlHeading = regexp.MustCompile(`<h([1-3])>(.*?)</h[1-3]>`)
	htmlRow     = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	htmlCell    = regexp.MustCompile(`(?s)<t[dh][^>]*>(.*?)</t[dh]>`)
	htmlTag     = regexp.MustCompile(`<[^>]+>`)
)

// mdSections reads a plan's headings and table rows from plan.md.
func mdSections(md string) (heads []string, rows [][]string) {
	fenced := false // inside a code block, where # starts a comment
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if m := mdHeading.FindStringSubmatch(line); m != nil && !fenced {
			heads = append(heads, fmt.Sprintf("%d %s", len(m[1]), m[2]))
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		var row []string
		for _, c := range regexp.MustCompile(`\s\|\s`).Split(strings.Trim(line, "| "), -1) {
			row = append(row, strings.NewReplacer("**", "", `\|`, "|").Replace(c)) // bold is how, not what
		}
		rows = append(rows, row)
	}
	return heads, rows
}

// htmlSections reads the same from plan.html.
func htmlSections(page string) (heads []string, rows [][]string) {
	for _, m := range htmlHeading.FindAllStringSubmatch(page, -1) {
		heads = append(heads, m[1]+" "+html.UnescapeString(m[2]))
	}
	for _, tr := range htmlRow.FindAllStringSubmatch(page, -1) {
		var row []string
		for _, c := range htmlCell.FindAllStringSubmatch(tr[1], -1) {
			row = append(row, html.UnescapeString(htmlTag.ReplaceAllString(c[1], "")))
		}
		rows = append(rows, row)
	}
	return heads, rows
}

// plan.html carries every section of plan.md: the same headings, the same
// table, the same verdict, robustness and warnings; and it stands alone.
func TestPlanHTMLHasEverySectionOfTheMarkdown(t *testing.T) {
	p := samplePlan(t)
	var md, page bytes.Buffer
	if err := p.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	mh, mr := mdSections(md.String())
	hh, hr := htmlSections(page.String())
	if !slices.Equal(mh, hh) {
		t.Errorf("headings differ:\nplan.md   %q\nplan.html %q", mh, hh)
	}
	if len(mr) != len(p.Params)+1 || !slices.EqualFunc(mr, hr, slices.Equal) {
		t.Errorf("tables differ:\nplan.md   %q\nplan.html %q", mr, hr)
	}
	text := html.UnescapeString(htmlTag.ReplaceAllString(page.String(), ""))
	for _, want := range []string{"Recommended: --set client.limiter.quota.rate=100 --set client.limiter.quota.burst=1",
		"Robustness: " + p.Robustness, "warning: " + p.Warnings[0], "constraints rate_429 < 1%"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan.html lacks %q", want)
		}
	}
	for _, want := range []string{"**Recommended:** `--set client.limiter.quota.rate=100 --set client.limiter.quota.burst=1`",
		"**Robustness:** " + p.Robustness, "> warning: " + p.Warnings[0], "constraints rate_429 < 1%"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("plan.md lacks %q", want)
		}
	}
	for _, want := range []string{"| 120 | 1 | 99.99 | 16.7% | 84% | 2,400 | 0 | no: rate_429 is 16.7%, needs < 1% | no |",
		"| 80 | 1 | 79.99 | 0% | 76% | 5,600 | 0 | no: critical findings: acquire_timeouts | no |",
		"| **100** | 1 | 99.99 | 0% | 80% | 4,000 | 0 | yes | yes |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("plan.md lacks the row %q:\n%s", want, md.String())
		}
	}
	if n := strings.Count(page.String(), `<svg role="img" class="chart"`); n != len(p.Charts) || n != 2 {
		t.Errorf("%d inline charts, want %d", n, len(p.Charts))
	}
	for _, bad := range []string{"<script", "<img", "<link", "<?xml", "<!DOCTYPE svg"} {
		if strings.Contains(page.String(), bad) {
			t.Errorf("plan.html contains %q: not self-contained", bad)
		}
	}
	// Namespace URIs (xmlns="http://…") are names, not loads; references are.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)`).FindString(page.String()); m != "" {
		t.Errorf("plan.html loads from the network: %q", m)
	}
}

// With no feasible point the verdict names the closest constraint, and an
// incomplete plan says so; with replications every figure has its
// half-width.
func TestPlanVerdictsAndIntervals(t *testing.T) {
	p := samplePlan(t)
	p.Recommended, p.Closest = -1, "rate_429<0.01 (got 0.0123 at rate=90)"
	if v := p.verdict(); v.Label != "No point meets every constraint." || !strings.Contains(v.Rest, p.Closest) {
		t.Errorf("verdict %+v", v)
	}
	p.Incomplete = true
	if v := p.verdict(); v.Label != "Incomplete:" {
		t.Errorf("verdict %+v", v)
	}
	p.Replications = 3
	for k := range p.Metrics {
		p.Metrics[k].CI95 = slices.Repeat([]float64{0.002}, len(p.Params))
	}
	_, rows := p.table()
	if got := rows[8][3]; got != "16.7% ± 0.2%" {
		t.Errorf("rate_429 with replications: %q", got)
	}
	if got := rows[8][7]; got != "no: rate_429 is 16.7% ± 0.2%, needs < 1%" {
		t.Errorf("why not feasible: %q", got)
	}
}

// plan.html opens in headless Chromium with the verdict on the first
// screen and every chart with a size. Set LIMITSIM_BROWSER_TEST=1 to run
// it (CI does, after installing chromium).
func TestPlanReportInChromium(t *testing.T) {
	if os.Getenv("LIMITSIM_BROWSER_TEST") == "" {
		t.Skip("set LIMITSIM_BROWSER_TEST=1 to open plan.html in headless Chromium")
	}
	p := samplePlan(t)
	var b bytes.Buffer
	if err := p.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	checkFirstScreen(t, b.String(), len(p.Charts))
}

// compare.html opens in headless Chromium with the verdicts on the first
// screen and every overlay chart with a size.
func TestCompareReportInChromium(t *testing.T) {
	if os.Getenv("LIMITSIM_BROWSER_TEST") == "" {
		t.Skip("set LIMITSIM_BROWSER_TEST=1 to open compare.html in headless Chromium")
	}
	var runs []ComparedRun
	for _, name := range []string{"token-bucket", "sliding-window"} {
		r, s := simulateExample(t, name)
		runs = append(runs, ComparedRun{Name: name, Results: r, Series: s})
	}
	c, err := BuildComparison(runs, []string{"", "token-bucket", "sliding-window"}, [][]string{{"goodput_rps", "79.44/s", "8.978/s (≠)"}})
	if err != nil {
		t.Fatal(err)
	}
	c.Verdicts = []string{"sliding-window vs token-bucket: worse goodput (-88.7% ± 1.97%); overall worse", "best overall: token-bucket"}
	var b bytes.Buffer
	if err := c.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	checkFirstScreen(t, b.String(), len(c.Charts))
}

// chromiumDOM opens page in headless Chromium (1280×720), with probe (a
// script) added at the end of its body, and returns the page as rendered;
// a console message fails the test.
func chromiumDOM(t *testing.T, page, probe string) string {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", probe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,720",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if m := regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught).*$`).FindAllString(stderr.String(), -1); len(m) > 0 {
		t.Fatalf("console messages:\n%s", strings.Join(m, "\n"))
	}
	return stdout.String()
}

// checkFirstScreen opens page in headless Chromium (1280×720) and checks
// that its element #verdict is wholly on the first screen, that nothing
// is logged to the console, and that its charts svg.chart number charts,
// each drawn at a readable size.
func checkFirstScreen(t *testing.T, page string, charts int) {
	t.Helper()
	probe := `<script>window.addEventListener("load", () => {
  const v = document.getElementById("verdict").getBoundingClientRect();
  const sizes = [...document.querySelectorAll("svg.chart")].map(s => { const r = s.getBoundingClientRect(); return Math.round(r.width) + "x" + Math.round(r.height); });
  document.body.setAttribute("data-probe", Math.round(v.top) + " " + Math.round(v.bottom) + " " + window.innerHeight + " " + sizes.join(","));
});</script>`
	dom := chromiumDOM(t, page, probe)
	got := regexp.MustCompile(`data-probe="(-?\d+) (-?\d+) (\d+) ([^"]*)"`).FindStringSubmatch(dom)
	if got == nil {
		t.Fatalf("the page did not finish loading:\n%.500s", dom)
	}
	var top, bottom, screen int
	fmt.Sscan(got[1]+" "+got[2]+" "+got[3], &top, &bottom, &screen)
	if top < 0 || bottom > screen || screen < 400 {
		t.Errorf("the verdict spans %d–%d px of a %d px first screen", top, bottom, screen)
	}
	sizes := strings.Split(got[4], ",")
	if got[4] == "" {
		sizes = nil
	}
	if len(sizes) != charts {
		t.Fatalf("%d charts on the page, want %d", len(sizes), charts)
	}
	for i, s := range sizes {
		var w, h int
		if _, err := fmt.Sscanf(s, "%dx%d", &w, &h); err != nil || w < 300 || h < 150 {
			t.Errorf("chart %d rendered at %q", i, s)
		}
	}
}

// A one-key chart's caption names only what it draws, its ticks are the
// swept values, and its line joins them in order whatever the sweep's.
func TestPlanLineChartSaysWhatItDraws(t *testing.T) {
	p := &Plan{Scenario: "tb", Keys: []string{"rate"}, Objective: "max:goodput_rps", Recommended: 2,
		Constraints: []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01}},
		Params:      [][]float64{{120}, {80}, {100}},
		Metrics:     []PlanMetric{{Path: "goodput_rps", Values: []float64{100, 80, 99}}, {Path: "rate_429", Values: []float64{0.2, 0, 0}}},
		Feasible:    []bool{false, true, true}, Pareto: []bool{false, false, true}}
	if err := DrawPlan(p); err != nil {
		t.Fatal(err)
	}
	if len(p.Charts) != 2 {
		t.Fatalf("%d charts, %v left out", len(p.Charts), p.Omitted)
	}
	good, r429 := p.Charts[0], p.Charts[1]
	if strings.Contains(good.Caption, "dashed") || !strings.Contains(r429.Caption, "the dashed line is the constraint rate_429 < 1%") {
		t.Errorf("captions:\n%s\n%s", good.Caption, r429.Caption)
	}
	for _, c := range p.Charts {
		for _, want := range []string{"filled green dots are feasible", "open orange rings", "large black ring marks the recommended"} {
			if !strings.Contains(c.Caption, want) {
				t.Errorf("%s: caption lacks %q: %s", c.Name, want, c.Caption)
			}
		}
		texts := svgTexts(t, c.SVG)
		if i := slices.Index(texts, "80"); i < 0 || !slices.Equal(texts[i:i+3], []string{"80", "100", "120"}) {
			t.Errorf("%s: x ticks are not the swept values: %q", c.Name, texts)
		}
	}
}
