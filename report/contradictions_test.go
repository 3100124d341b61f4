package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
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

// The deadlocked run's wait histogram counts every wait in db, the 609
// still parked at the stop with the 40 granted, while the limiter table
// says acquired 40: the title splits its count so the two agree.
func TestDeadlockWaitHistogramTitleSplitsGrantsFromWaits(t *testing.T) {
	doc := run(t, "fail-deadlock")
	var db metrics.LimiterStats
	for _, l := range doc.Results.Limiters {
		if l.Name == "db" {
			db = l
		}
	}
	var svg string
	for _, c := range doc.Charts {
		if c.Name == "wait-db-hist" {
			svg = string(c.SVG)
		}
	}
	if svg == "" {
		t.Fatal("no wait histogram for db")
	}
	if db.WaitS.Count == db.Acquired {
		t.Fatal("fail-deadlock no longer parks requests on db")
	}
	want := fmt.Sprintf("%s granted, %s still waiting when the run stopped", report.Grouped(db.WaitGrantedS.Count), report.Grouped(db.WaitS.Count-db.WaitGrantedS.Count))
	if !strings.Contains(svg, want) {
		t.Errorf("the histogram's title does not split its %d waits into grants and waits cut off: want %q", db.WaitS.Count, want)
	}
	if db.WaitGrantedS.Count != db.Acquired {
		t.Errorf("granted in the steady state %d, acquired %d: with no warm-up they are the same grants", db.WaitGrantedS.Count, db.Acquired)
	}
}
