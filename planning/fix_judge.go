package planning

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// score ranks a candidate fix: first whether it keeps goodput within the
// margin, then how few critical findings its run has (new ones
// included), then how few warnings (load shed on purpose aside), then its
// goodput, then how few keys it changes.
type score struct {
	introduces bool // a critical finding the run before did not have
	goodputOK  bool
	critical   int
	warnings   int
	goodput    float64
	keys       int
}

// better reports whether s ranks above t.
func (s score) better(t score) bool {
	switch {
	case s.introduces != t.introduces:
		return !s.introduces
	case s.goodputOK != t.goodputOK:
		return s.goodputOK
	case s.critical != t.critical:
		return s.critical < t.critical
	case s.warnings != t.warnings:
		return s.warnings < t.warnings
	case s.goodput != t.goodput:
		return s.goodput > t.goodput
	}
	return s.keys < t.keys
}

// shed reports whether d is load shed on purpose: requests refused
// quickly because demand exceeds the limit, the cost of holding it.
func shed(d metrics.Diagnosis) bool { return report.LoadShed(d) }

func scoreOf(c *candidate, floor float64, before []string) score {
	s := score{goodputOK: c.results.Throughput.GoodputRPS >= floor, goodput: c.results.Throughput.GoodputRPS, keys: len(c.set)}
	for _, d := range c.results.Diagnoses {
		switch {
		case d.Severity == "critical":
			s.critical++
			s.introduces = s.introduces || !slices.Contains(before, d.Code)
		case !shed(d):
			s.warnings++
		}
	}
	return s
}

// judge picks the best candidate and says what it does: verified when it
// clears every critical finding within the margin, partial when it clears
// some without a new one, none otherwise.
func judge(before *metrics.Results, tried []*candidate, margin float64) (*metrics.VerifiedFix, *candidate) {
	floor := (1 - margin) * before.Throughput.GoodputRPS
	fix := &metrics.VerifiedFix{Verified: true, Margin: margin, Before: metrics.FiguresOf(before), Runs: len(tried),
		Set: map[string]any{}, Cleared: []string{}, Remaining: []string{}}
	var best *candidate
	var bestScore score
	for _, c := range tried {
		if c.err != nil || c.setAside != "" {
			continue
		}
		if s := scoreOf(c, floor, fix.Before.Critical); best == nil || s.better(bestScore) {
			best, bestScore = c, s
		}
	}
	if best == nil {
		fix.Status, fix.Note = "none", "no candidate fix holds: "+whyNone(tried)
		return fix, nil
	}
	after := metrics.FiguresOf(best.results)
	crit := fix.Before.Critical
	for _, code := range crit {
		if slices.Contains(after.Critical, code) {
			fix.Remaining = append(fix.Remaining, code)
		} else {
			fix.Cleared = append(fix.Cleared, code)
		}
	}
	introduced := slices.DeleteFunc(slices.Clone(after.Critical), func(c string) bool { return slices.Contains(crit, c) })
	helps := bestScore.goodputOK && len(introduced) == 0 && (len(fix.Cleared) > 0 || len(crit) == 0 && bestScore.warnings < warningsOf(before))
	if !helps {
		fix.Status, fix.Cleared, fix.Remaining = "none", []string{}, []string{}
		fix.Note = noFixNote(before, best, after, introduced, margin)
		return fix, nil
	}
	fix.Set, fix.After = best.set, &after
	fix.Status = "verified"
	if len(fix.Remaining) > 0 {
		fix.Status = "partial"
	}
	if q := best.results.Requests; q.Arrived > 0 && float64(q.AcquireTimeouts+q.Rejected) > 0.01*float64(q.Arrived) {
		fix.ShedShare = float64(q.AcquireTimeouts+q.Rejected) / float64(q.Arrived)
	}
	fix.Note = fixNote(fix, best.results)
	return fix, best
}

// warningsOf counts r's warnings, load shed on purpose aside.
func warningsOf(r *metrics.Results) int {
	n := 0
	for _, d := range r.Diagnoses {
		if d.Severity != "critical" && !shed(d) {
			n++
		}
	}
	return n
}

// whyNone says why no candidate is left: one set aside on a fresh seed,
// or one that could not run.
func whyNone(tried []*candidate) string {
	for _, c := range tried {
		if c.setAside != "" {
			return fmt.Sprintf("the best (%s) %s", report.SetFlags(c.set), c.setAside)
		}
	}
	for _, c := range tried {
		if c.err != nil {
			return c.err.Error()
		}
	}
	return "none was tried"
}

// fixNote says what a fix that helps does, and its cost.
func fixNote(fix *metrics.VerifiedFix, after *metrics.Results) string {
	var parts []string
	if len(fix.Cleared) > 0 {
		parts = append(parts, "clears "+strings.Join(fix.Cleared, ", "))
	}
	// The warnings it clears are named too, whether or not it clears a
	// critical finding (cleared holds only those).
	if warnings := removed(fix.Before.Warnings, fix.After.Warnings); len(warnings) > 0 || len(fix.Cleared) == 0 {
		parts = append(parts, "clears warnings: "+strings.Join(warnings, ", "))
	}
	parts = append(parts, fmt.Sprintf("goodput %s/s → %s/s", report.Human(fix.Before.GoodputRPS), report.Human(fix.After.GoodputRPS)))
	if len(fix.Remaining) > 0 {
		parts = append(parts, "no change of keys tried clears "+strings.Join(fix.Remaining, ", ")+": see its diagnosis")
	}
	if fix.ShedShare > 0 {
		t := after.Throughput
		parts = append(parts, fmt.Sprintf("the cost: %.1f%% of requests are refused fast, since demand (%s/s offered) exceeds what the limits admit; that is load shed on purpose, not a failure",
			100*fix.ShedShare, report.Human(t.OfferedRPS)))
	}
	return strings.Join(parts, "; ")
}

// noFixNote says why no candidate helps, from the best one tried.
func noFixNote(before *metrics.Results, best *candidate, after metrics.FixFigures, introduced []string, margin float64) string {
	why := ""
	switch {
	case best.results.Throughput.GoodputRPS < (1-margin)*before.Throughput.GoodputRPS:
		why = fmt.Sprintf("the best candidate (%s) lowers goodput from %s/s to %s/s, over the %.0f%% allowed",
			report.SetFlags(best.set), report.Human(before.Throughput.GoodputRPS), report.Human(best.results.Throughput.GoodputRPS), 100*margin)
	case len(introduced) > 0:
		why = fmt.Sprintf("the best candidate (%s) introduces %s", report.SetFlags(best.set), strings.Join(introduced, ", "))
	case len(after.Critical) > 0:
		why = fmt.Sprintf("the best candidate (%s) clears none of %s", report.SetFlags(best.set), strings.Join(after.Critical, ", "))
	default:
		why = fmt.Sprintf("the best candidate (%s) clears no finding", report.SetFlags(best.set))
	}
	t := before.Throughput
	if t.OfferedRPS > 0 && t.GoodputRPS < 0.9*t.OfferedRPS {
		why += fmt.Sprintf("; demand (%s/s offered) may exceed what the upstream admits, which no client setting can serve: lower the demand or raise the quota", report.Human(t.OfferedRPS))
	}
	return "no change of keys clears the critical findings without a new one or a loss of goodput: " + why
}

// removed lists the codes of before that after lacks.
func removed(before, after []string) []string {
	var out []string
	for _, c := range before {
		if !slices.Contains(after, c) {
			out = append(out, c)
		}
	}
	return out
}
