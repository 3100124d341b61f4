package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Range is a number a scenario leaves uncertain, written where the number
// goes as { low = 60.0, mid = 80.0, high = 120.0 }: a triangular
// distribution from Low to High whose mode is Mid, or { low, high }: a
// uniform one (Mid is then their midpoint). A run uses Mid; a plan with
// --uncertain draws the range (Quantile) and sets the key to each draw.
type Range struct {
	// Key names the key as --set does (workload.rate,
	// upstream.api.quota.burst, client.limiter.bucket.rate).
	Key  string  `json:"key"`
	Low  float64 `json:"low"`
	Mid  float64 `json:"mid"`
	High float64 `json:"high"`
	// Uniform: written { low, high }, with no mid.
	Uniform bool `json:"uniform,omitempty"`
	// Whole: written in integers (or at an integer key), so every draw is
	// rounded to a whole number.
	Whole bool `json:"whole,omitempty"`
}

// rangeKeys are the keys a range's table holds.
var rangeKeys = []string{"low", "mid", "high"}

// isRange reports whether v is written as a range: a table holding low
// or high.
func isRange(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, low := m["low"]
	_, high := m["high"]
	return low || high
}

// String is the range as a scenario writes it.
func (r Range) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if r.Uniform {
		return fmt.Sprintf("{ low = %s, high = %s }", f(r.Low), f(r.High))
	}
	return fmt.Sprintf("{ low = %s, mid = %s, high = %s }", f(r.Low), f(r.Mid), f(r.High))
}

// Quantile is the value below which a share u (0 ≤ u < 1) of the range's
// draws fall: the inverse of its distribution function, rounded to the
// nearest whole number when the range is Whole. A draw is Quantile of a
// uniform u.
func (r Range) Quantile(u float64) float64 {
	span := r.High - r.Low
	var x float64
	switch {
	case span <= 0:
		x = r.Low
	case r.Uniform:
		x = r.Low + u*span
	case u < (r.Mid-r.Low)/span:
		x = r.Low + math.Sqrt(u*span*(r.Mid-r.Low))
	default:
		x = r.High - math.Sqrt((1-u)*span*(r.High-r.Mid))
	}
	x = min(max(x, r.Low), r.High)
	if r.Whole {
		x = math.Round(x)
	}
	return x
}

// Value is Quantile(u) as an override sets it: an integer when the range
// is Whole.
func (r Range) Value(u float64) any {
	x := r.Quantile(u)
	if r.Whole {
		return int64(x)
	}
	return x
}

// refuseRange reports a range written at k, a number that names a choice
// rather than measures a quantity (why says what it is instead), and
// returns true after it; it returns false when k holds no range.
func (t *table) refuseRange(k, why string) bool {
	if v, ok := t.get(k); !ok || !isRange(v) {
		return false
	}
	t.d.problem(t.key(k), "takes no range: %s", why)
	return true
}

// rangeValue reads the range written at k (m, its table): its ends and
// mid, each checked by check (the key's own check of a number, reporting
// at the key it is given), in order, within the table's own rules. It
// returns the value the key reads as, its mid (or the end the decoder's
// ends pick), and false after a problem. whole: the key takes integers.
func (t *table) rangeValue(k string, m map[string]any, whole bool, check func(key string, v any) bool) (float64, bool) {
	key := t.key(k)
	if t.certain {
		t.d.problem(key, "takes no range: it must be a plain number")
		return 0, false
	}
	var unknown []string
	for name := range m {
		if !slices.Contains(rangeKeys, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		t.d.problem(key+"."+unknown[0], "unknown key in a range (a range is { low, mid, high } or { low, high })")
		return 0, false
	}
	r := Range{Key: key, Uniform: m["mid"] == nil}
	ok, ints := true, true
	ends := map[string]*float64{"low": &r.Low, "mid": &r.Mid, "high": &r.High}
	for _, name := range rangeKeys {
		v, has := m[name]
		switch {
		case !has && name == "mid":
			continue
		case !has:
			t.d.problem(key, "a range needs %s (a range is { low, mid, high } or { low, high })", name)
			ok = false
			continue
		}
		if !check(key+"."+name, v) {
			ok = false
			continue
		}
		switch x := v.(type) {
		case int64:
			*ends[name] = float64(x)
		case float64:
			*ends[name], ints = x, false
		}
	}
	r.Whole = whole || ints
	if !ok {
		return 0, false
	}
	if r.Uniform {
		r.Mid = r.Low + (r.High-r.Low)/2
		if r.Whole {
			r.Mid = math.Round(r.Mid)
		}
	}
	if !(r.Low <= r.Mid && r.Mid <= r.High) {
		t.d.problem(key, "a range needs low ≤ mid ≤ high, got %s", r)
		return 0, false
	}
	t.d.ranges = append(t.d.ranges, r)
	switch t.d.ends[key] {
	case "low":
		return r.Low, true
	case "high":
		return r.High, true
	}
	return r.Mid, true
}

// checkRangeEnds decodes tree again with each range at its low end, then
// at its high end, the other ranges at their mids: every check of the
// scenario, a key's own and those between keys, must hold at a range's
// ends as at its mid. A problem found there says which end it is at.
func (d *decoder) checkRangeEnds(file string, data []byte, tree map[string]any) {
	seen := map[string]bool{}
	for _, r := range d.ranges {
		for _, end := range []string{"low", "high"} {
			v := r.Low
			if end == "high" {
				v = r.High
			}
			if v == r.Mid {
				continue
			}
			e := &decoder{file: d.file, src: d.src, lines: d.lines, ld: d.ld, ends: map[string]string{r.Key: end}}
			sc := &Scenario{File: file, src: data}
			e.scenario(sc, e.table("", tree))
			e.crossCheck(sc)
			for _, p := range e.probs {
				p.Msg += fmt.Sprintf(" (with %s at the %s end of its range, %s)", r.Key, end, strconv.FormatFloat(v, 'g', -1, 64))
				if !seen[p.String()] {
					seen[p.String()] = true
					d.probs = append(d.probs, p)
				}
			}
		}
	}
}

// spelledRanges are d's ranges with their keys as --set names them, in
// tree (the tree decoded): an entry of a named list by its name.
func (d *decoder) spelledRanges(tree map[string]any) []Range {
	out := make([]Range, len(d.ranges))
	for i, r := range d.ranges {
		r.Key = spellKey(tree, r.Key)
		out[i] = r
	}
	return out
}

// spellKey writes key, as the decoder names it (client.limiter[0].rate,
// upstream[1].quota[0].burst), as an override names it
// (client.limiter.bucket.rate, upstream.api.quota[0].burst): an entry of
// a named list by its name, any other by its position. A key it cannot
// spell is returned as it is.
func spellKey(tree map[string]any, key string) string {
	var cur any = tree
	path, out := "", ""
	for _, seg := range strings.Split(key, ".") {
		name, idx, indexed := seg, 0, false
		if open := strings.IndexByte(seg, '['); open > 0 && strings.HasSuffix(seg, "]") {
			n, err := strconv.Atoi(seg[open+1 : len(seg)-1])
			if err != nil {
				return key
			}
			name, idx, indexed = seg[:open], n, true
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return key
		}
		here := joinPath(path, name)
		if !indexed {
			cur, path, out = m[name], here, joinPath(out, name)
			continue
		}
		entries, ok := tableList(m[name])
		if !ok || idx < 0 || idx >= len(entries) {
			return key
		}
		cur, path = entries[idx], fmt.Sprintf("%s[%d]", here, idx)
		if nameKey, isNamed := named[here]; isNamed {
			entryName, ok := entries[idx][nameKey].(string)
			if !ok {
				return key
			}
			out = spellEntry(joinPath(out, name), entryName)
			continue
		}
		out = fmt.Sprintf("%s[%d]", joinPath(out, name), idx)
	}
	return out
}
