package metrics

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Verdict is the article's reading of one limiter from its three numbers.
type Verdict struct {
	Limiter string `json:"limiter"`
	// Verdict is one of: not binding | binding | now the bottleneck |
	// demand exceeds quota (a rate or window limiter pinned) | saturated:
	// demand exceeds permits (a concurrency limiter pinned) | local limit
	// set too high.
	Verdict  string  `json:"verdict"`
	WaitP99S float64 `json:"wait_p99_s"`
	// Utilisation is the limiter's utilisation_max: the busiest scope's.
	Utilisation float64 `json:"utilisation"`
	Saturation  float64 `json:"saturation"`
	Rate429     float64 `json:"rate_429"`
	Why         string  `json:"why"`
}

// Diagnosis is one failure mode recognised in a run, with the fix from the
// article's failure-mode table.
type Diagnosis struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // warning | critical
	Title    string `json:"title"`
	Evidence string `json:"evidence"`
	Cause    string `json:"cause"`
	Fix      Fix    `json:"fix"`
}

// Fix is a diagnosis's remedy: in words, and where a change of scenario
// keys applies it, as overrides in the --set syntax (a key of the scenario
// to its new value; null removes the key). Set is empty when no change of
// keys alone fixes the run; Text then says what to do.
type Fix struct {
	Text string         `json:"text"`
	Set  map[string]any `json:"set,omitempty"`
}

// String returns the fix in words.
func (f Fix) String() string { return f.Text }

// SetValue writes a value of an override (of a Fix's Set, or a --set)
// as TOML, as --set reads it back: a string quoted, a list in brackets,
// a table inline in braces with its keys in order.
func SetValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		return "[" + joinValues(len(v), func(i int) any { return v[i] }) + "]"
	case []map[string]any: // an array of tables as TOML decodes it
		return "[" + joinValues(len(v), func(i int) any { return v[i] }) + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = k + " = " + SetValue(v[k])
		}
		return "{ " + strings.Join(items, ", ") + " }"
	}
	return fmt.Sprint(v)
}

// joinValues writes n values, each item(i), as SetValue, comma-separated.
func joinValues(n int, item func(i int) any) string {
	items := make([]string, n)
	for i := range n {
		items[i] = SetValue(item(i))
	}
	return strings.Join(items, ", ")
}

// VerifiedFix is the remedy for a run's findings as limitsim ran it before
// printing it: the overrides of every diagnosis's fix that, applied
// together to the same scenario on the same arrivals and latencies (the
// same seed and horizon), clear the critical findings without a new one
// and without losing more than Margin of the goodput. Each diagnosis's
// fix.set is the part of Set it needs, so applying the union of the
// critical diagnoses' sets gives After.
type VerifiedFix struct {
	// Verified is false when the fix was not run (--no-verify): Set is
	// then the union of the diagnoses' sets, unchecked.
	Verified bool `json:"verified"`
	// Status is "verified" (clears every critical finding), "partial"
	// (clears some, Remaining names the rest), "none" (no change of keys
	// helped: Set is empty and Note says why) or "unverified".
	Status string         `json:"status"`
	Set    map[string]any `json:"set"`
	// Margin is the share of goodput a fix may cost (the article's safety
	// margin costs up to about a tenth).
	Margin float64     `json:"margin"`
	Before FixFigures  `json:"before"`
	After  *FixFigures `json:"after,omitempty"`
	// Cleared and Remaining are the codes of the critical findings before
	// that the fix clears and that remain after it.
	Cleared   []string `json:"cleared"`
	Remaining []string `json:"remaining"`
	// ShedShare is the share of the requests the fixed run refuses on
	// purpose (acquisition timeouts and rejections) when demand exceeds
	// what the limits admit: the stated cost of the fix, not a failure.
	ShedShare float64 `json:"shed_share,omitempty"`
	// Seeds are the seeds the fix was checked on: the run's own, where
	// the candidates were compared, and fresh ones, where the best must
	// leave no critical finding either.
	Seeds []uint64 `json:"seeds,omitempty"`
	// Runs is how many candidate runs the verification took.
	Runs int    `json:"runs"`
	Note string `json:"note"`
}

// InterruptedFixNote begins the note of a fix whose verification a
// signal cut short: its status is "unverified", as with --no-verify, and
// this note says why instead.
const InterruptedFixNote = "not verified: interrupted while verifying"

// UnverifiedWhy says why an unverified fix was not run: "interrupted"
// when a signal cut its verification short, else "--no-verify".
func (f *VerifiedFix) UnverifiedWhy() string {
	if strings.HasPrefix(f.Note, InterruptedFixNote) {
		return "interrupted"
	}
	return "--no-verify"
}

// FixFigures are the headline figures of a run before or after a fix.
type FixFigures struct {
	GoodputRPS   float64 `json:"goodput_rps"`
	Rate429      float64 `json:"rate_429"`
	SuccessRatio float64 `json:"success_ratio"`
	RequestP99S  float64 `json:"request_p99_s"`
	// Critical and Warnings are the codes of the run's diagnoses.
	Critical []string `json:"critical"`
	Warnings []string `json:"warnings"`
}

// FiguresOf reads the headline figures of r for a fix's before or after.
func FiguresOf(r *Results) FixFigures {
	f := FixFigures{GoodputRPS: r.Throughput.GoodputRPS, Rate429: r.Rate429, SuccessRatio: r.SuccessRatio,
		RequestP99S: r.RequestS.P99, Critical: []string{}, Warnings: []string{}}
	for _, d := range r.Diagnoses {
		if d.Severity == "critical" {
			f.Critical = appendOnce(f.Critical, d.Code)
		} else {
			f.Warnings = appendOnce(f.Warnings, d.Code)
		}
	}
	return f
}

func appendOnce(xs []string, x string) []string {
	for _, v := range xs {
		if v == x {
			return xs
		}
	}
	return append(xs, x)
}
