package report_test

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// summaryText is the text summary of a bundled scenario's run.
func summaryText(t *testing.T, doc *report.Document) string {
	t.Helper()
	var b strings.Builder
	if err := report.WriteText(&b, doc.Results); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A deadlocked run stops with most of its requests inside: they have not
// succeeded, so the success ratio cannot read 100%, and the summary says
// how many never ended.
func TestDeadlockSuccessRatioCountsStuckRequests(t *testing.T) {
	doc := run(t, "fail-deadlock")
	r := doc.Results
	q := r.Requests
	if q.InProgress == 0 {
		t.Fatal("fail-deadlock stopped with no request in progress: the scenario no longer shows the case")
	}
	want := float64(q.Succeeded) / float64(q.Arrived)
	if r.SuccessRatio != want {
		t.Errorf("success_ratio = %v, want succeeded ÷ arrived = %v (%d in progress count as not succeeded)", r.SuccessRatio, want, q.InProgress)
	}
	text := summaryText(t, doc)
	if strings.Contains(text, "success ratio 100.0%") {
		t.Errorf("a deadlocked run claims 100%% success:\n%s", text)
	}
	if !strings.Contains(text, report.Grouped(q.InProgress)+" never ended") {
		t.Errorf("the summary does not say how many requests never ended:\n%s", text)
	}
}
