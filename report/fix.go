package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
)

// Human writes x with four significant digits, as every report does.
func Human(x float64) string { return human(x, 4) }

// AttributeFix gives each diagnosis of r its part of r's verified fix: the
// keys of its own overrides that the fix sets (with the fix's values).
// The keys the fix sets that no critical diagnosis proposed (an
// acquisition timeout that keeps a lower rate from collapsing goodput, a
// warning's fix that clears a critical finding) go to the critical
// diagnoses whose own keys are in the fix, or else to those it clears,
// so that applying the union of the critical diagnoses' fix.set gives the
// verified result. A diagnosis whose overrides the fix does not use keeps
// none, and its text says why. It is a function of the diagnoses and the
// fix, so a report redrawn from metrics.json gives the same parts.
func AttributeFix(r *metrics.Results) {
	f := r.Fix
	if f == nil || !f.Verified || (f.Status != "verified" && f.Status != "partial") {
		return
	}
	extra, carriers := fixCarriers(r)
	for i := range r.Diagnoses {
		d := &r.Diagnoses[i]
		if len(d.Fix.Set) == 0 && !carriers[i] {
			continue
		}
		part, moved := map[string]any{}, map[string]any{}
		for k, own := range d.Fix.Set {
			if v, ok := f.Set[k]; ok {
				part[k] = v
				if fmt.Sprint(v) != fmt.Sprint(own) {
					moved[k] = v
				}
			}
		}
		if len(moved) > 0 {
			d.Fix.Text += "; verified at " + overridesText(metrics.Fix{Set: moved})
		}
		switch {
		case carriers[i] && len(extra) > 0:
			added := map[string]any{}
			for _, k := range extra {
				added[k] = f.Set[k]
			}
			if len(part) == 0 { // none of its own keys is in the fix
				d.Fix.Text += "; the verified fix clears this without these overrides, with " + overridesText(metrics.Fix{Set: added})
			} else {
				d.Fix.Text += "; verified together with " + overridesText(metrics.Fix{Set: added})
			}
			maps.Copy(part, added)
		case len(part) == 0 && slices.Contains(f.Cleared, d.Code):
			d.Fix.Text += "; the verified fix clears this without these overrides"
		case len(part) == 0:
			d.Fix.Text += "; these overrides are not part of the verified fix: applied, they did not clear the findings within the goodput margin"
		}
		if len(part) == 0 {
			part = nil
		}
		d.Fix.Set = part
	}
}

// fixCarriers returns the keys of r's fix that no critical diagnosis
// proposes, and the critical diagnoses (by index) that carry them: those
// whose own keys are in the fix, or else those the fix clears.
func fixCarriers(r *metrics.Results) (extra []string, carriers map[int]bool) {
	f := r.Fix
	owned := map[string]bool{}
	carriers = map[int]bool{}
	for i, d := range r.Diagnoses {
		if d.Severity != "critical" {
			continue
		}
		for k := range d.Fix.Set {
			owned[k] = true
			if _, in := f.Set[k]; in {
				carriers[i] = true
			}
		}
	}
	for _, k := range sortedSetKeys(f.Set) {
		if !owned[k] {
			extra = append(extra, k)
		}
	}
	if len(carriers) == 0 {
		for i, d := range r.Diagnoses {
			if d.Severity == "critical" && slices.Contains(f.Cleared, d.Code) {
				carriers[i] = true
			}
		}
	}
	return extra, carriers
}

func sortedSetKeys(set map[string]any) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FixLines are the lines every report shows for r's fix: what to set,
// the figures before and after, and what it costs or why none helps.
// Nil when r has no fix.
func FixLines(r *metrics.Results) []string {
	f := r.Fix
	if f == nil {
		return nil
	}
	head, flags := fixHead(f)
	if flags != "" {
		head += ": " + flags
	}
	out := []string{head, "before: " + figuresText(f.Before)}
	if f.After != nil {
		out = append(out, "after:  "+figuresText(*f.After))
	}
	return append(out, f.Note)
}

// fixHead is the first of f's lines apart: its heading, and the --set
// flags to paste ("" when there are none). Kept apart, since a heading
// may itself hold a colon ("Fix (unverified: --no-verify)").
func fixHead(f *metrics.VerifiedFix) (head, flags string) {
	switch f.Status {
	case "unverified":
		return "Fix (unverified: " + f.UnverifiedWhy() + ")", SetFlags(f.Set)
	case "none":
		return "No verified fix", ""
	}
	head = "Verified fix"
	if f.Status == "partial" {
		head = "Verified fix (partial)"
	}
	runs := "runs"
	if f.Runs == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%s, simulated on the same arrivals and latencies (%d %s)", head, f.Runs, runs), SetFlags(f.Set)
}

// figuresText is a fix's before or after figures on one line.
func figuresText(x metrics.FixFigures) string {
	crit := "none"
	if len(x.Critical) > 0 {
		crit = strings.Join(x.Critical, ", ")
	}
	return fmt.Sprintf("goodput %s/s, 429 rate %s, success %s, end-to-end p99 %s; critical: %s",
		Human(x.GoodputRPS), pct(x.Rate429), pct(x.SuccessRatio), secs(x.RequestP99S), crit)
}

// fixSection is the verified fix as report.html shows it: a heading, the
// --set flags to paste, and its figures.
type fixSection struct {
	Head, Flags string
	Lines       []string
}

// writeFixMarkdown writes r's fix as report.md shows it: a heading, the
// --set flags to paste, and its figures.
func writeFixMarkdown(b *strings.Builder, r *metrics.Results) {
	lines := FixLines(r)
	if lines == nil {
		return
	}
	head, flags := fixHead(r.Fix)
	fmt.Fprintf(b, "## %s\n\n", head)
	if flags != "" {
		fmt.Fprintf(b, "```\n%s\n```\n\n", flags)
	}
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "- %s\n", mdEscape(l))
	}
	b.WriteString("\n")
}

// PartOfFix says, for a diagnosis whose overrides are part of r's
// verified fix but not all of it, that they are not verified alone:
// fail-sustained-429's bucket at 90/s without the fix's acquisition
// timeout serves 11/s, not 90/s. "" otherwise.
func PartOfFix(r *metrics.Results, d metrics.Diagnosis) string {
	f := r.Fix
	if f == nil || !f.Verified || (f.Status != "verified" && f.Status != "partial") || len(d.Fix.Set) == 0 || len(d.Fix.Set) >= len(f.Set) {
		return ""
	}
	return "part of the verified fix below: apply it whole; these alone are not verified"
}
