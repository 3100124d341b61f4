package planning

import (
	"fmt"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// results is a run with goodput g and these diagnoses (code:severity).
func results(g float64, ds ...metrics.Diagnosis) *metrics.Results {
	r := &metrics.Results{Diagnoses: ds}
	r.Throughput.GoodputRPS = g
	return r
}

func diag(code, severity string, set map[string]any) metrics.Diagnosis {
	return metrics.Diagnosis{Code: code, Severity: severity, Fix: metrics.Fix{Text: code, Set: set}}
}

// The judge never prefers a candidate that brings a critical finding the
// run did not have, however many it clears, over one that clears some
// and brings none; a fix that does not help claims to clear nothing.
func TestJudgeRanksIntroducedFindingsLast(t *testing.T) {
	before := results(100, diag("a", "critical", map[string]any{"x": 1.0}), diag("b", "critical", map[string]any{"y": 1.0}))
	bringsC := &candidate{set: map[string]any{"x": 1.0, "y": 1.0}, results: results(100, diag("c", "critical", nil))}
	clearsA := &candidate{set: map[string]any{"x": 1.0}, results: results(95, diag("b", "critical", nil))}
	fix, best := judge(before, []*candidate{bringsC, clearsA}, DefaultFixMargin)
	if best != clearsA || fix.Status != "partial" || fmt.Sprint(fix.Cleared) != "[a]" || fmt.Sprint(fix.Remaining) != "[b]" {
		t.Fatalf("best %v, fix %+v: want the partial fix clearing a", best, fix)
	}
	// Alone, the candidate that brings c is no fix, and clears nothing.
	fix, best = judge(before, []*candidate{bringsC}, DefaultFixMargin)
	if best != nil || fix.Status != "none" || len(fix.Cleared) != 0 || len(fix.Remaining) != 0 {
		t.Fatalf("best %v, fix %+v: want none, clearing nothing", best, fix)
	}
	// Within the margin (12%) a fix keeps its place; beyond it, never.
	for _, c := range []struct {
		goodput float64
		status  string
	}{{88.5, "verified"}, {87.5, "none"}} {
		ok := &candidate{set: map[string]any{"x": 1.0, "y": 1.0}, results: results(c.goodput)}
		if fix, _ := judge(before, []*candidate{ok}, DefaultFixMargin); fix.Status != c.status {
			t.Errorf("goodput 100 → %v: %s, want %s", c.goodput, fix.Status, c.status)
		}
	}
}

// Each critical diagnosis's fix.set is its part of the verified set, and
// their union is the whole set: here the set is a warning's fix that
// clears the critical finding, which carries it.
func TestAttributionUnionIsTheFix(t *testing.T) {
	r := results(100, diag("crit", "critical", nil), diag("warn", "warning", map[string]any{"y": 2.0}), diag("other", "warning", map[string]any{"z": 3.0}))
	r.Fix = &metrics.VerifiedFix{Verified: true, Status: "verified", Set: map[string]any{"y": 2.0}, Cleared: []string{"crit"}}
	report.AttributeFix(r)
	if got := fmt.Sprint(r.Diagnoses[0].Fix.Set); got != "map[y:2]" {
		t.Errorf("the critical diagnosis carries %s, want the whole fix", got)
	}
	if r.Diagnoses[2].Fix.Set != nil {
		t.Errorf("a warning whose overrides the fix does not use keeps %v", r.Diagnoses[2].Fix.Set)
	}
	// A fix that helps nothing attributes nothing.
	r = results(100, diag("crit", "critical", map[string]any{"x": 1.0}))
	r.Fix = &metrics.VerifiedFix{Verified: true, Status: "none", Set: map[string]any{}}
	report.AttributeFix(r)
	if fmt.Sprint(r.Diagnoses[0].Fix.Set) != "map[x:1]" || r.Diagnoses[0].Fix.Text != "crit" {
		t.Errorf("status none changed the diagnosis: %+v", r.Diagnoses[0].Fix)
	}
}
