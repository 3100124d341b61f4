package report_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// With more tenants than a table can hold, every format shows the 20 with
// the longest p99 wait, longest first, says how many were left out and how
// all of them spread; and a scenario too long to read in a report is
// referred to instead of pasted.
func TestManyTenantsAndLongScenario(t *testing.T) {
	doc := run(t, "fail-tenant-starvation")
	r := doc.Results
	r.Tenants = nil
	for i := range 25 {
		// p99 waits 0.1 s … 2.5 s in a shuffled order; tenant k7 is the worst.
		p99 := float64((i*7)%25+1) / 10
		r.Tenants = append(r.Tenants, metrics.TenantStats{Name: fmt.Sprintf("k%d", i), Arrived: 100, Succeeded: 90,
			SuccessRate: 0.9, WaitS: metrics.Dist{Count: 100, P50: p99 / 2, P99: p99}})
	}
	long := strings.Repeat("# a scenario with thousands of tenants\n", 1000)
	doc, err := report.Build(r, doc.Series, long)
	if err != nil {
		t.Fatal(err)
	}
	var md, html, text bytes.Buffer
	if err := doc.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := doc.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report.md": md.String(), "report.html": html.String(), "text": text.String()} {
		row := func(i int) bool { // tenant i has a row in the tenants table
			switch name {
			case "report.md":
				return strings.Contains(out, fmt.Sprintf("| k%d |", i))
			case "report.html":
				return strings.Contains(out, fmt.Sprintf("<td>k%d</td>", i))
			}
			return regexp.MustCompile(fmt.Sprintf(`(?m)^ *k%d `, i)).MatchString(out)
		}
		shown := 0
		for i := range 25 {
			if row(i) {
				shown++
			}
		}
		if shown != 20 {
			t.Errorf("%s shows %d of 25 tenants, want 20", name, shown)
		}
		// The five shortest p99 waits (0.1 s … 0.5 s) are the ones left out.
		for i := range 25 {
			p99 := (i*7)%25 + 1
			if p99 <= 5 && row(i) {
				t.Errorf("%s shows k%d (p99 %.1fs), one of the five shortest waits", name, i, float64(p99)/10)
			}
		}
		if !strings.Contains(out, "the other 5 are in tenants.csv") || !strings.Contains(out, "p99 wait 100ms to 2.5s") {
			t.Errorf("%s does not say what was left out and how all tenants spread", name)
		}
		if name != "text" && (strings.Contains(out, "# a scenario with thousands") || !strings.Contains(out, "see scenario.toml")) {
			t.Errorf("%s pastes a %d-byte scenario instead of referring to scenario.toml", name, len(long))
		}
	}
	// Longest first: k7 (2.5 s) is the first row of the markdown table.
	if first := regexp.MustCompile(`\| k\d+ \|`).FindString(md.String()); first != "| k7 |" {
		t.Error("report.md does not list the longest p99 wait first")
	}
}

// The report reads in the order a reviewer needs: headline, diagnoses, the
// one chart that shows the problem (the first diagnosis's, or throughput
// for a healthy run), then the detail; the key chart is not repeated.
func TestReportLeadsWithTheProblem(t *testing.T) {
	for name, key := range map[string]string{
		"fail-thundering-herd": "upstream-429.png",
		"fail-deadlock":        "saturation.png",
		"token-bucket":         "throughput.png",
	} {
		doc := run(t, name)
		var md bytes.Buffer
		if err := doc.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		out := md.String()
		diag, shows, summary := strings.Index(out, "## Diagnoses"), strings.Index(out, "## The chart that shows it"), strings.Index(out, "## Summary")
		if !(diag >= 0 && diag < shows && shows < summary) {
			t.Errorf("%s: diagnoses at %d, key chart at %d, summary at %d: want them in that order", name, diag, shows, summary)
		}
		if got := strings.Count(out, "]("+key+")"); got != 1 || !strings.Contains(out[shows:summary], key) {
			t.Errorf("%s: %s shown %d times, want once, as the key chart", name, key, got)
		}
	}
}

// A deadlocked run's time charts mark when the cycle closed: the end of
// the last interval in which a request still completed.
func TestDeadlockIsMarked(t *testing.T) {
	doc := run(t, "fail-deadlock")
	found := 0
	for _, c := range doc.Charts {
		if (c.Name == "saturation" || c.Name == "throughput") && bytes.Contains(c.SVG, []byte("deadlock: last completion 2s")) {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("the deadlock marker is on %d of the saturation and throughput charts, want both", found)
	}
}
