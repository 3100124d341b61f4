package report_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"html/template"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// run simulates a bundled scenario and builds its report document.
func run(t *testing.T, name string) *report.Document {
	t.Helper()
	sc, err := scenarios.Load("../scenarios/examples/" + name + ".toml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	report.Analyze(out.Results, out.Series)
	resolved, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := report.Build(out.Results, out.Series, resolved)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; if the change is intended, run go test ./report/ -update\n--- got:\n%s", name, got)
	}
}

func TestReportMarkdownGolden(t *testing.T) {
	for _, name := range []string{"fail-thundering-herd", "fail-tenant-starvation"} {
		doc := run(t, name)
		var b bytes.Buffer
		if err := doc.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		for _, bad := range []string{os.TempDir(), "/work/", "/home/"} {
			if strings.Contains(md, bad) {
				t.Fatalf("report.md contains an absolute path (%s)", bad)
			}
		}
		golden(t, name+".report.md", b.Bytes())
	}
}

// svgSkeleton reduces an SVG to its element structure and text: stable
// across renderers' coordinate rounding, yet it changes when a title, an
// axis label, a legend entry or a series goes missing.
func svgSkeleton(t *testing.T, svg []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = false
	var b strings.Builder
	depth := 0
	counts := map[string]int{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			counts[el.Name.Local]++
			if el.Name.Local == "svg" || el.Name.Local == "text" {
				b.WriteString(strings.Repeat(" ", depth) + el.Name.Local + "\n")
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				b.WriteString(strings.Repeat(" ", depth) + "text: " + s + "\n")
			}
		}
	}
	for _, k := range []string{"path", "text", "g"} {
		if counts[k] == 0 {
			t.Fatalf("SVG has no <%s>", k)
		}
	}
	return b.String()
}

func TestChartSVGStructureGolden(t *testing.T) {
	doc := run(t, "fail-thundering-herd")
	var b strings.Builder
	for _, c := range doc.Charts {
		b.WriteString("== " + c.Name + "\n" + svgSkeleton(t, c.SVG))
	}
	for _, o := range doc.Omitted {
		b.WriteString("-- omitted " + o.Name + ": " + o.Reason + "\n")
	}
	golden(t, "fail-thundering-herd.svg-structure.txt", []byte(b.String()))
}

// Every chart has a title, axis labels, the run in the footer, and no
// chart is an empty frame.
func TestChartsAreComplete(t *testing.T) {
	for _, name := range []string{"seed-crawler", "fail-deadlock", "fail-tenant-starvation", "composed-limits", "handling-429"} {
		doc := run(t, name)
		if len(doc.Charts) < 4 {
			t.Fatalf("%s: only %d charts", name, len(doc.Charts))
		}
		for _, c := range doc.Charts {
			svg := string(c.SVG)
			if !strings.Contains(svg, "scenario "+name) || !strings.Contains(svg, "seed 1") {
				t.Errorf("%s/%s: footer lacks the scenario and seed", name, c.Name)
			}
			if c.Title == "" || c.Caption == "" {
				t.Errorf("%s/%s: no title or caption", name, c.Name)
			}
			checkPNG(t, name+"/"+c.Name, c.PNG)
		}
		for _, o := range doc.Omitted {
			if o.Reason == "" {
				t.Errorf("%s: chart %s left out without a reason", name, o.Name)
			}
		}
	}
}

// checkPNG decodes a chart and checks it is not blank: a real picture has
// many colours and a good share of non-white pixels.
func checkPNG(t *testing.T, name string, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: PNG does not decode: %v", name, err)
	}
	bounds := img.Bounds()
	if bounds.Dx() < 800 || bounds.Dy() < 400 {
		t.Fatalf("%s: %v is too small to read", name, bounds)
	}
	colours := map[[3]uint32]bool{}
	nonWhite := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			if r < 0xf000 || g < 0xf000 || b < 0xf000 {
				nonWhite++
			}
		}
	}
	total := (bounds.Dx() / 2) * (bounds.Dy() / 2)
	if len(colours) < 8 || nonWhite < total/100 {
		t.Fatalf("%s: looks blank (%d colours, %d of %d pixels not white)", name, len(colours), nonWhite, total)
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	doc := run(t, "fail-thundering-herd")
	var b bytes.Buffer
	if err := doc.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if n := strings.Count(html, `<svg role="img" class="chart"`); n != len(doc.Charts) {
		t.Fatalf("%d inline charts, want %d", n, len(doc.Charts))
	}
	for _, bad := range []string{"<script", "<img", "<link", "<?xml", "<!DOCTYPE svg"} {
		if strings.Contains(html, bad) {
			t.Fatalf("report.html contains %q: not self-contained", bad)
		}
	}
	// Namespace URIs (xmlns="http://…") are names, not loads; references are.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)`).FindString(html); m != "" {
		t.Fatalf("report.html loads from the network: %q", m)
	}
	for _, want := range []string{"Thundering herd after a pause", "Scenario as run", "resume_jitter", "Little's Law (whole run)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// Redrawn from metrics.json and timeseries.csv alone, the report is the
// same as the one written at the end of the run.
func TestRedrawFromFiles(t *testing.T) {
	doc := run(t, "fail-burst-at-start")
	dir := t.TempDir()
	var js bytes.Buffer
	metrics.WriteJSON(&js, doc.Results)
	os.WriteFile(filepath.Join(dir, "metrics.json"), js.Bytes(), 0o644)
	var csv bytes.Buffer
	doc.Series.WriteCSV(&csv)
	os.WriteFile(filepath.Join(dir, "timeseries.csv"), csv.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "scenario.toml"), []byte(doc.Scenario), 0o644)
	r, s, scen, err := report.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	report.Analyze(r, s)
	again, err := report.Build(r, s, scen)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	doc.WriteMarkdown(&a)
	again.WriteMarkdown(&b)
	if a.String() != b.String() {
		t.Fatal("report.md redrawn from the files differs from the original")
	}
	if len(again.Charts) != len(doc.Charts) {
		t.Fatalf("%d charts redrawn, %d originally", len(again.Charts), len(doc.Charts))
	}
}

// The report opens in a real browser: headless Chromium renders it with no
// console error, and every chart has a size on the page. Set
// LIMITSIM_BROWSER_TEST=1 to run it (CI does, after installing chromium).
func TestReportInChromium(t *testing.T) {
	if os.Getenv("LIMITSIM_BROWSER_TEST") == "" {
		t.Skip("set LIMITSIM_BROWSER_TEST=1 to open the report in headless Chromium")
	}
	doc := run(t, "fail-thundering-herd")
	var b bytes.Buffer
	if err := doc.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	// A probe added to the page records each chart's size.
	dom := report.ChromiumDOM(t, b.String(), `<script>window.addEventListener("load", () => {
  const sizes = [...document.querySelectorAll("svg.chart")].map(s => { const r = s.getBoundingClientRect(); return Math.round(r.width) + "x" + Math.round(r.height); });
  document.body.setAttribute("data-charts", sizes.join(","));
});</script>`)
	sizes := regexp.MustCompile(`data-charts="([^"]*)"`).FindStringSubmatch(dom)
	if sizes == nil {
		t.Fatalf("the page did not finish loading:\n%.500s", dom)
	}
	list := strings.Split(sizes[1], ",")
	if len(list) != len(doc.Charts) {
		t.Fatalf("%d charts on the page, want %d", len(list), len(doc.Charts))
	}
	for i, s := range list {
		var w, h int
		if _, err := fmt.Sscanf(s, "%dx%d", &w, &h); err != nil || w < 300 || h < 150 {
			t.Fatalf("chart %s rendered at %q", doc.Charts[i].Name, s)
		}
	}
}

// The text summary, report.md and report.html open with the same headline,
// and its numbers are the JSON's.
func TestHeadlineSameInEveryFormat(t *testing.T) {
	for _, name := range []string{"fail-thundering-herd", "token-bucket"} {
		doc := run(t, name)
		h := report.Headline(doc.Results)
		var txt, md, html bytes.Buffer
		if err := report.WriteText(&txt, doc.Results); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(txt.String(), h[0]+"\n"+h[1]+"\n") {
			t.Errorf("%s: the text summary does not open with the headline:\n%.300s", name, txt.String())
		}
		if !strings.Contains(md.String(), "**"+h[0]+"**\n\n"+h[1]) {
			t.Errorf("%s: report.md lacks the headline", name)
		}
		if !strings.Contains(html.String(), template.HTMLEscapeString(h[1])) {
			t.Errorf("%s: report.html lacks the headline", name)
		}
		r := doc.Results
		for _, want := range []string{fmt.Sprintf("goodput %.4g/s of %.4g/s offered", r.Throughput.GoodputRPS, r.Throughput.OfferedRPS),
			fmt.Sprintf("429 rate %.1f%%", 100*r.Rate429)} {
			if !strings.Contains(h[1], want) {
				t.Errorf("%s: headline %q lacks %q from the JSON", name, h[1], want)
			}
		}
	}
}

// Retry-After pauses are a strip per host with a legend entry, not a
// full-height wash: the herd's host is paused most of the run.
func TestPauseStripHasALegend(t *testing.T) {
	doc := run(t, "fail-thundering-herd")
	for _, c := range doc.Charts {
		if c.Name != "upstream-429" {
			continue
		}
		if !strings.Contains(string(c.SVG), "default paused (Retry-After)") {
			t.Fatal("the pause strip has no legend entry")
		}
		return
	}
	t.Fatal("no upstream-429 chart")
}

// legendColours maps each legend entry of an SVG chart to the colour of
// its line: gonum draws an entry's sample line just before its text.
func legendColours(svg []byte) map[string]string {
	out := map[string]string{}
	re := regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})[^>]*/>\s*<text[^>]*>([^<]+)</text>`)
	for _, m := range re.FindAllSubmatch(svg, -1) {
		out[string(m[2])] = string(m[1])
	}
	return out
}

// A limiter keeps one colour on every chart that draws it (its waits,
// its waiting line, its saturation, the timeline's wait panel), no two
// limiters share one, and the offered load and the successes read the
// same on the throughput chart and the timeline. Colours picked by a
// line's place in its chart change between charts.
func TestChartsKeepOneColourPerLine(t *testing.T) {
	for _, name := range []string{"composed-limits", "fail-thundering-herd", "seed-crawler"} {
		doc := run(t, name)
		colours := map[string]map[string]string{} // line → chart → colour
		for _, c := range doc.Charts {
			for entry, col := range legendColours(c.SVG) {
				line := strings.TrimSuffix(entry, " wait p99")
				if line == "succeeded" {
					line = "goodput"
				}
				if colours[line] == nil {
					colours[line] = map[string]string{}
				}
				colours[line][c.Name] = col
			}
		}
		byColour, across := map[string]string{}, 0
		for _, l := range doc.Results.Limiters {
			seen := colours[l.Name]
			if len(seen) > 1 {
				across++
			}
			for chart, col := range seen {
				if first := seen["saturation"]; col != first {
					t.Errorf("%s: limiter %s is %s on %s but %s on the saturation chart", name, l.Name, col, chart, first)
				}
			}
			if other, ok := byColour[seen["saturation"]]; ok {
				t.Errorf("%s: limiters %s and %s share colour %s", name, other, l.Name, seen["saturation"])
			}
			byColour[seen["saturation"]] = l.Name
		}
		if across == 0 {
			t.Errorf("%s: no limiter is drawn on two charts: %v", name, colours)
		}
		for _, line := range []string{"offered", "goodput"} {
			if seen := colours[line]; seen["throughput"] != seen["timeline"] {
				t.Errorf("%s: %s is %s on the throughput chart but %s on the timeline", name, line, seen["throughput"], seen["timeline"])
			}
		}
	}
}
