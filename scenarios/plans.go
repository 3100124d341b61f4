package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Variant is a named set of overrides of the scenario ([[variant]]), in the
// --set syntax: `limitsim compare FILE` compares the scenario with each of
// its variants.
type Variant struct {
	Name string   `toml:"name"`
	Set  []string `toml:"set"`
}

// Overrides returns the variant's overrides (validated when loading).
func (v Variant) Overrides() []Override {
	out := make([]Override, 0, len(v.Set))
	for _, s := range v.Set {
		if o, err := ParseOverride(s); err == nil {
			o.Flag = "set" // a problem names the variant's set, not --set
			out = append(out, o)
		}
	}
	return out
}

// Sweep is a swept key of a plan declared in the scenario ([[sweep]]):
// Values, or From to To by Step (points From + i × Step, counted by index).
// `limitsim plan FILE` sweeps them when no --sweep is given; `run` runs the
// base scenario.
type Sweep struct {
	Key    string    `toml:"key"`
	Values []float64 `toml:"values,omitempty"`
	From   float64   `toml:"from,omitzero"`
	To     float64   `toml:"to,omitzero"`
	Step   float64   `toml:"step,omitzero"`
}

// Points returns the swept values (none for a range of more than
// MaxPlanPoints, which a scenario that loads never has).
func (s Sweep) Points() []float64 {
	if len(s.Values) > 0 || s.Step <= 0 {
		return s.Values
	}
	c := s.count()
	if !(c <= MaxPlanPoints) {
		return nil
	}
	n := int(c)
	out := make([]float64, 0, max(n, 0))
	for i := range n {
		out = append(out, SweepValue(s.From, s.Step, i))
	}
	return out
}

// SweepValue is the i-th value of a range from from by step: from + i ×
// step, counted by index, rounded to the decimals from and step are
// written with (their shortest forms), so that 0.1 steps give 0.3, not
// 0.30000000000000004; left as computed when either needs an exponent.
// A zero is +0, never −0.
func SweepValue(from, step float64, i int) float64 {
	v := from + float64(i)*step
	places := max(decimalPlaces(from), decimalPlaces(step))
	if min(decimalPlaces(from), decimalPlaces(step)) >= 0 && places <= 15 {
		scale := math.Pow(10, float64(places))
		v = math.Round(v*scale) / scale
	}
	if v == 0 {
		return 0
	}
	return v
}

// decimalPlaces is how many decimals x's shortest form has; -1 when it
// needs an exponent.
func decimalPlaces(x float64) int {
	text := strconv.FormatFloat(x, 'g', -1, 64)
	if strings.ContainsAny(text, "eE") {
		return -1
	}
	_, frac, _ := strings.Cut(text, ".")
	return len(frac)
}

// count is how many points the sweep makes, as a float: a range's count
// can be far beyond what an int holds (+Inf when its span overflows).
func (s Sweep) count() float64 {
	if len(s.Values) > 0 || s.Step <= 0 {
		return float64(len(s.Values))
	}
	return math.Floor((s.To-s.From)/s.Step*(1+1e-12)) + 1
}

// MaxPlanPoints bounds the points of the sweeps a scenario declares.
const MaxPlanPoints = 10_000

// variants reads [[variant]].
func (d *decoder) variants(t *table) []Variant {
	var out []Variant
	seen := map[string]bool{}
	for _, vt := range t.tables("variant") {
		v := Variant{Name: vt.name()}
		if v.Name != "" {
			if seen[v.Name] {
				d.problem(vt.key("name"), "duplicate variant name %q", v.Name)
			}
			seen[v.Name] = true
		}
		if vt.required("set") {
			v.Set = vt.strings("set")
			if raw, _ := vt.get("set"); isEmptyList(raw) {
				d.problem(vt.key("set"), "is empty: a variant sets at least one key (it would run the base scenario again)")
			}
			for j, s := range v.Set {
				if _, err := ParseOverride(s); err != nil {
					d.problem(fmt.Sprintf("%s[%d]", vt.key("set"), j), "%v", err)
				}
			}
		}
		vt.done("name", "set")
		out = append(out, v)
	}
	if len(out) > maxListLength {
		d.problem("variant", "has %d entries; at most %d", len(out), maxListLength)
	}
	return out
}

// sweeps reads [[sweep]].
func (d *decoder) sweeps(t *table) []Sweep {
	var out []Sweep
	points, over := 1.0, false
	swept := map[string]bool{}
	for _, st := range t.tables("sweep") {
		st.certain = true // a sweep's bounds are the plan's own
		var s Sweep
		if st.required("key") {
			s.Key = st.str("key", "")
			if swept[s.Key] {
				d.problem(st.key("key"), "%s is swept twice: give its values in one sweep", s.Key)
			}
			swept[s.Key] = true
		}
		if st.has("values") {
			vs, ok := st.m["values"].([]any)
			st.seen.add("values")
			if !ok || len(vs) == 0 {
				d.problem(st.key("values"), "must be a non-empty array of numbers")
			}
			for j, v := range vs {
				switch x := v.(type) {
				case int64:
					s.Values = append(s.Values, float64(x))
				case float64:
					s.Values = append(s.Values, x)
				default:
					d.problem(fmt.Sprintf("%s[%d]", st.key("values"), j), "must be a number, not %s", typeName(v))
					continue
				}
				if last := s.Values[len(s.Values)-1]; slices.Index(s.Values, last) < len(s.Values)-1 {
					d.problem(fmt.Sprintf("%s[%d]", st.key("values"), j), "%v is listed twice: a point runs once", last)
				}
			}
			st.done("key", "values")
		} else {
			okFrom, okTo, okStep := st.required("from"), st.required("to"), st.required("step")
			s.From, s.To, s.Step = st.float("from", 0, math.Inf(-1), false), st.float("to", 0, math.Inf(-1), false), st.float("step", 1, 0, true)
			if okFrom && okTo && okStep && s.To < s.From {
				d.problem(st.key("to"), "(%v) is below from (%v): an empty range", s.To, s.From)
			}
			if c := s.count(); okFrom && okTo && okStep && !(c <= MaxPlanPoints) {
				d.problem(st.key("step"), "from %v to %v by %v makes %.4g points, over the limit of %d", s.From, s.To, s.Step, c, MaxPlanPoints)
				over = true
			}
			st.done("key", "from", "to", "step", "values")
		}
		points *= s.count()
		out = append(out, s)
	}
	if points > MaxPlanPoints && !over {
		d.problem("sweep", "the sweeps make a grid of %.4g points, over the limit of %d", points, MaxPlanPoints)
	}
	return out
}

// checkPlans applies each variant's overrides, and each sweep's first
// value, to the scenario's text: a problem names the variant or sweep.
func (d *decoder) checkPlans(sc *Scenario, data []byte) {
	for i, v := range sc.Variants {
		vs, err := parseVariant(d.ld, sc.File, data, v.Overrides())
		if err != nil {
			d.problem(fmt.Sprintf("variant[%d].set", i), "variant %s does not load: %s", v.Name, oneLine(err))
			continue
		}
		sc.addData(vs.data...)
	}
	for i, s := range sc.Sweeps {
		if p := s.Points(); len(p) > 0 {
			if _, err := parseVariant(d.ld, sc.File, data, []Override{{Key: s.Key, Value: p[0], Flag: "[[sweep]]"}}); err != nil {
				d.problem(fmt.Sprintf("sweep[%d].key", i), "%s", oneLine(err))
			}
		}
	}
}

// parseVariant validates the scenario with overrides, leaving out its own
// variants and sweeps (checked by the caller).
func parseVariant(l *Loader, file string, data []byte, overrides []Override) (*Scenario, error) {
	return parseWith(l, file, data, append([]Override{{Key: "variant"}, {Key: "sweep"}}, overrides...))
}

// oneLine joins the lines of an error with "; ", keeping one problem one
// line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// isEmptyList reports whether v is a TOML array with no element.
func isEmptyList(v any) bool {
	arr, ok := v.([]any)
	return ok && len(arr) == 0
}
