package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// An unverified fix's heading holds a colon of its own: report.md and
// report.html keep it whole, and their code block holds only the --set
// flags to paste.
func TestUnverifiedFixHeadingIsWhole(t *testing.T) {
	r, s := simulateExample(t, "fail-sustained-429")
	r.Fix = &metrics.VerifiedFix{Status: "unverified", Set: map[string]any{"client.acquire_timeout": "1s", "client.limiter.bucket.rate": 90},
		Before: metrics.FiguresOf(r), Cleared: []string{}, Remaining: []string{}, Note: "not verified (--no-verify): unchecked"}
	d, err := Build(r, s, "")
	if err != nil {
		t.Fatal(err)
	}
	flags := "--set client.acquire_timeout=1s --set client.limiter.bucket.rate=90"
	var md, page bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "## Fix (unverified: --no-verify)\n\n```\n" + flags + "\n```\n"; !strings.Contains(md.String(), want) {
		_, fix, _ := strings.Cut(md.String(), "## Fix")
		t.Errorf("report.md's fix is not\n%s\nbut\n## Fix%.300s", want, fix)
	}
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if want := "<h2>Fix (unverified: --no-verify)</h2>\n<pre>" + flags + "</pre>"; !strings.Contains(html, want) {
		i := strings.Index(html, "Fix (unverified")
		t.Errorf("report.html's fix is not\n%s\nbut\n%.300s", want, html[max(0, i):])
	}
	if got := FixLines(r)[0]; got != "Fix (unverified: --no-verify): "+flags {
		t.Errorf("the summary's fix line is %q", got)
	}
}
