package report

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// compare.md and compare.html open with the verdicts and keep the key to
// the table's marks; a key line that starts with * stays text in
// Markdown, not a list item. Without a key the old sentence stays.
func TestComparisonVerdictsAndKey(t *testing.T) {
	c := &Comparison{
		Runs:     []ComparedRun{{Name: "A", Results: &metrics.Results{}}, {Name: "B", Results: &metrics.Results{}}},
		Header:   []string{"", "A", "B"},
		Rows:     [][]string{{"goodput_rps", "80/s", "96/s (≠) *"}},
		Verdicts: []string{"B vs A: better goodput (+20.0% ± 1.1%); overall better", "best overall: B"},
		Key:      []string{"* best of the row: better than every other run", "(≠): differs from A"},
	}
	var md strings.Builder
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "# limitsim comparison\n\n- B vs A: better goodput (+20.0% ± 1.1%); overall better\n- best overall: B\n\n- **A**") {
		t.Errorf("compare.md does not open with the verdicts:\n%s", md.String())
	}
	for _, want := range []string{"\n`*` best of the row: better than every other run\n", "\n(≠): differs from A\n", "| goodput_rps | 80/s | 96/s (≠) * |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("compare.md lacks %q:\n%s", want, md.String())
		}
	}
	var html strings.Builder
	if err := c.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	verdict, table, key := strings.Index(h, "<li>B vs A: better goodput"), strings.Index(h, "<table>"), strings.Index(h, "<p>* best of the row")
	if verdict < 0 || table < verdict || key < table || !strings.Contains(h, "<p>(≠): differs from A</p>") {
		t.Errorf("compare.html: verdict at %d, table at %d, key at %d:\n%s", verdict, table, key, h)
	}
	c.Verdicts, c.Key = nil, nil
	md.Reset()
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "# limitsim comparison\n\n- **A**") || !strings.Contains(md.String(), "`*` marks the best of a row") {
		t.Errorf("compare.md without verdicts:\n%s", md.String())
	}
}
