package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
)

// decoder walks the generic TOML tree strictly, collecting problems.
type decoder struct {
	file  string
	src   string   // the file's text
	lines keyIndex // each key's line in src, indexed at the first problem (a valid file needs none)
	probs Problems
	// rejected holds every key whose value decoding rejected: each key a
	// problem names, and each key a misspelt key was probably meant as.
	// holding holds every table and array above a rejected key. Checks
	// between keys consult both, to skip a check whose inputs were rejected.
	rejected, holding map[string]bool
	// checking is set while checking between keys: a contradiction between
	// two keys rejects neither.
	checking bool
	// costDraws are fixed-seed draws of the request cost, sorted, for the
	// checks of a cost distribution against each limit (drawn once).
	costDraws map[string][]int64
	// idle are keys written where they have no effect, each with why: the
	// scenario's warnings.
	idle []metrics.Warning
	// arrivalCtxs holds the context of a tenant's keys by its arrival kind,
	// formatted once rather than for each of thousands of tenants.
	arrivalCtxs map[string]string
	// ld reads the data files (a trace, samples) once for every scenario
	// it loads, the checks of the variants and sweeps among them.
	ld *Loader
	// ranges are the ranges read, keyed as the decoder names them; ends,
	// when set, picks the end ("low" or "high") a range key reads as
	// instead of its mid (checkRangeEnds).
	ranges []Range
	ends   map[string]string
}

// arrivalCtx says which keys apply to a tenant or host table with arrival
// kind a (see table.ctx).
func (d *decoder) arrivalCtx(a string) string {
	if s, ok := d.arrivalCtxs[a]; ok {
		return s
	}
	if d.arrivalCtxs == nil {
		d.arrivalCtxs = map[string]string{}
	}
	s := fmt.Sprintf("with arrival = %q (on and off need arrival = \"onoff\")", a)
	d.arrivalCtxs[a] = s
	return s
}

func (d *decoder) problem(key, format string, args ...any) {
	if d.lines == nil {
		d.lines = indexKeys(d.src)
	}
	d.probs = append(d.probs, Problem{File: d.file, Line: d.lines.lineOf(key), Key: key, Msg: fmt.Sprintf(format, args...)})
	if !d.checking {
		d.reject(key)
	}
}

// reject records that the value of key was rejected.
func (d *decoder) reject(key string) {
	if d.rejected == nil {
		d.rejected, d.holding = map[string]bool{}, map[string]bool{}
	}
	d.rejected[key] = true
	for k := parentKey(key); k != "" && !d.holding[k]; k = parentKey(k) {
		d.holding[k] = true
	}
}

// intact reports whether the value of every key was accepted whole: no
// problem was reported for the key, for a table or array holding it, or for
// anything inside it.
func (d *decoder) intact(keys ...string) bool {
	for _, k := range keys {
		if d.holding[k] || !d.listIntact(k) {
			return false
		}
	}
	return true
}

// listIntact reports whether a table or array was read as written: no
// problem was reported for it or for a table or array holding it. Problems
// inside it, with one entry's value, do not count.
func (d *decoder) listIntact(key string) bool {
	for k := key; k != ""; k = parentKey(k) {
		if d.rejected[k] {
			return false
		}
	}
	return true
}

// parentKey returns the key of the table or array holding key ("" at the
// top level): "client.limiter[1].rate" → "client.limiter[1]" →
// "client.limiter" → "client".
func parentKey(key string) string {
	if i := strings.LastIndexAny(key, ".["); i > 0 {
		return key[:i]
	}
	return ""
}

// table is one TOML table being decoded; keys read are remembered so that
// done can report the rest as unknown.
type table struct {
	d    *decoder
	path string // the key of the table, or of its array with index ≥ 0
	// index is the table's place in the array at path, or -1: its key
	// (path[index]) is written only when a problem names it, since a
	// scenario may hold 10,000 tenants' tables.
	index int
	m     map[string]any
	seen  keySet
	bad   map[string]bool // keys whose value was rejected
	// known lists every key this kind of table can hold; ctx says why the
	// keys outside done's valid list do not apply ("with kind = \"gcra\"").
	known []string
	ctx   string
	// certain: the table's numbers take no range (run settings, a sweep).
	certain bool
}

func (d *decoder) table(path string, v any) *table { return d.tableAt(path, -1, v) }

// tableAt is table for entry index of the array at path (index -1: the
// table at path itself).
func (d *decoder) tableAt(path string, index int, v any) *table {
	t := &table{d: d, path: path, index: index}
	m, ok := v.(map[string]any)
	if !ok {
		d.problem(t.where(), "must be a table, not %s", typeName(v))
		m = map[string]any{}
	}
	t.m, t.seen = m, make(keySet, 0, len(m))
	return t
}

// where returns the table's key.
func (t *table) where() string {
	if t.index < 0 {
		return t.path
	}
	return t.path + "[" + strconv.Itoa(t.index) + "]"
}

// keySet is the keys of a table that were read: a few, searched in order
// (a scenario of 10,000 tenants has 10,000 tables of two keys).
type keySet []string

func (s *keySet) add(keys ...string) {
	for _, k := range keys {
		if !slices.Contains(*s, k) {
			*s = append(*s, k)
		}
	}
}

func (s keySet) has(k string) bool { return slices.Contains(s, k) }

// markBad notes that the value of key k was rejected (bad is made at the
// first: most tables have none).
func (t *table) markBad(k string) {
	if t.bad == nil {
		t.bad = map[string]bool{}
	}
	t.bad[k] = true
}

func (t *table) key(k string) string { return joinKey(t.where(), []string{k}) }

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		if isRange(v) {
			return "a range (only a number takes one)"
		}
		return "a table"
	case []any, []map[string]any:
		return "an array"
	case time.Time:
		return "a date-time"
	}
	return fmt.Sprintf("%T", v)
}

// get returns the raw value of k and whether it is present.
func (t *table) get(k string) (any, bool) {
	t.seen.add(k)
	v, ok := t.m[k]
	return v, ok
}

func (t *table) has(k string) bool { _, ok := t.m[k]; return ok }

// done reports every key that was not read: a key of this table that does
// not apply here (t.known, t.ctx) says so; any other is unknown, with the
// nearest valid key. A valid key left unread is not reported: another
// problem (a missing key, a rejected choice) already explains it.
func (t *table) done(valid ...string) {
	var unknown []string
	for k := range t.m {
		if !t.seen.has(k) && !slices.Contains(valid, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if slices.Contains(t.known, k) {
			t.d.problem(t.key(k), "does not apply %s (keys here: %s)", t.ctx, strings.Join(valid, ", "))
			continue
		}
		if s, ok := nearest(k, append(slices.Clone(valid), t.known...)); ok {
			t.d.problem(t.key(k), "unknown key (did you mean %s?)", s)
			t.d.reject(t.key(s)) // its value, written under the wrong key, was not read
		} else {
			t.d.problem(t.key(k), "unknown key (valid keys here: %s)", strings.Join(valid, ", "))
		}
	}
}

func (t *table) str(k, def string) string {
	v, ok := t.get(k)
	if !ok {
		return def
	}
	s, ok := v.(string)
	if !ok {
		t.d.problem(t.key(k), "must be a string, not %s", typeName(v))
		return def
	}
	return s
}

func (t *table) required(k string) bool {
	if !t.has(k) {
		t.seen.add(k)
		t.d.problem(t.key(k), "is required")
		return false
	}
	return true
}

func (t *table) enum(k, def string, allowed ...string) string {
	v, ok := t.m[k]
	s := t.str(k, def)
	if !ok {
		return s
	}
	if _, ok := v.(string); !ok { // str said so
		t.markBad(k)
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	t.markBad(k)
	if s == "" {
		t.d.problem(t.key(k), "must not be empty (valid: %s)", strings.Join(allowed, ", "))
	} else if n, ok := nearest(s, allowed); ok {
		t.d.problem(t.key(k), "unknown value %q (did you mean %q?; valid: %s)", s, n, strings.Join(allowed, ", "))
	} else {
		t.d.problem(t.key(k), "unknown value %q (valid: %s)", s, strings.Join(allowed, ", "))
	}
	return def
}

func (t *table) boolean(k string, def bool) bool {
	v, ok := t.get(k)
	if !ok {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		t.d.problem(t.key(k), "must be true or false, not %s", typeName(v))
		return def
	}
	return b
}

// float reads a number (integers are accepted) that must be finite and
// satisfy min (exclusive when open). Outside a table that takes no range
// (t.certain), the number may be a range (see Range): each of its ends
// is checked as a number would be, and its mid is returned.
func (t *table) float(k string, def, lo float64, open bool) float64 {
	v, ok := t.get(k)
	if !ok {
		return def
	}
	if m, isTable := v.(map[string]any); isTable {
		f, ok := t.rangeValue(k, m, false, func(key string, e any) bool {
			_, ok := t.d.checkFloat(key, e, lo, open)
			return ok
		})
		if !ok {
			return def
		}
		return f
	}
	f, ok := t.d.checkFloat(t.key(k), v, lo, open)
	if !ok {
		return def
	}
	return f
}

// checkFloat reads v, the value at key, as a finite number ≥ lo (> lo
// when open), reporting a problem at key when it is not one.
func (d *decoder) checkFloat(key string, v any, lo float64, open bool) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int64:
		f = float64(x)
	default:
		d.problem(key, "must be a number, not %s", typeName(v))
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.problem(key, "must be a finite number, not %v", f)
		return 0, false
	}
	if f < lo || (open && f == lo) {
		rel := "at least"
		if open {
			rel = "greater than"
		}
		d.problem(key, "must be %s %v, got %v", rel, lo, f)
		return 0, false
	}
	return f, true
}

// integer reads an integer ≥ lo; a float is an error, never truncated.
// Outside a table that takes no range (t.certain), the integer may be a
// range of integers (see Range), whose mid is returned.
func (t *table) integer(k string, def, lo int64) int64 {
	v, ok := t.get(k)
	if !ok {
		return def
	}
	if m, isTable := v.(map[string]any); isTable {
		f, ok := t.rangeValue(k, m, true, func(key string, e any) bool {
			_, ok := t.d.checkInteger(key, e, lo)
			return ok
		})
		if !ok {
			return def
		}
		return int64(f)
	}
	n, ok := t.d.checkInteger(t.key(k), v, lo)
	if !ok {
		return def
	}
	return n
}

// checkInteger reads v, the value at key, as an integer ≥ lo, reporting a
// problem at key when it is not one.
func (d *decoder) checkInteger(key string, v any, lo int64) (int64, bool) {
	n, ok := v.(int64)
	if !ok {
		if f, isF := v.(float64); isF {
			d.problem(key, "must be an integer, not the float %v", f)
		} else {
			d.problem(key, "must be an integer, not %s", typeName(v))
		}
		return 0, false
	}
	if n < lo {
		d.problem(key, "must be at least %d, got %d", lo, n)
		return 0, false
	}
	return n, true
}

// smallInt is integer for counts that must fit an int comfortably.
func (t *table) smallInt(k string, def, lo, hi int64) int {
	n := t.integer(k, def, lo)
	if n > hi {
		t.d.problem(t.key(k), "must be at most %d, got %d", hi, n)
		return int(def)
	}
	return int(n)
}

// tables reads an array of tables (or of inline tables).
func (t *table) tables(k string) []*table {
	list := t.list(k)
	out := make([]*table, list.len())
	for i := range out {
		out[i] = list.table(i)
	}
	return out
}

// list returns the array of tables at k, whose entries are decoded one by
// one: list.table(i) as tables(k)[i], or, where a fast path applies, from
// list.at(i) without a table. It reports a value that is not an array, as
// tables does, and is then empty.
func (t *table) list(k string) tableArray {
	v, ok := t.get(k)
	if !ok {
		return tableArray{}
	}
	switch v.(type) {
	case []map[string]any, []any:
		return tableArray{d: t.d, base: t.key(k), v: v}
	}
	t.d.problem(t.key(k), "must be an array of tables, not %s", typeName(v))
	return tableArray{}
}

// tableArray is an array of tables in a TOML tree, []map[string]any or
// []any, at key base.
type tableArray struct {
	d    *decoder
	base string
	v    any
}

func (a tableArray) len() int {
	switch arr := a.v.(type) {
	case []map[string]any:
		return len(arr)
	case []any:
		return len(arr)
	}
	return 0
}

// at returns entry i as it is in the tree: a table, or for []any any value.
func (a tableArray) at(i int) any {
	if arr, ok := a.v.([]map[string]any); ok {
		return arr[i]
	}
	return a.v.([]any)[i]
}

// table returns entry i to decode (a problem if it is not a table).
func (a tableArray) table(i int) *table { return a.d.tableAt(a.base, i, a.at(i)) }

// sub reads a nested table, or nil if absent.
func (t *table) sub(k string) *table {
	v, ok := t.get(k)
	if !ok {
		return nil
	}
	return t.d.table(t.key(k), v)
}

// strings reads an array of strings.
func (t *table) strings(k string) []string {
	v, ok := t.get(k)
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		t.d.problem(t.key(k), "must be an array of strings, not %s", typeName(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			t.d.problem(fmt.Sprintf("%s[%d]", t.key(k), i), "must be a string, not %s", typeName(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

// emptyArray reports whether k is written as an array with no element.
func (t *table) emptyArray(k string) bool {
	v, ok := t.get(k)
	arr, isArr := v.([]any)
	return ok && isArr && len(arr) == 0
}

// floats reads an array of numbers, each greater than 0.
func (t *table) floats(k string) []float64 {
	v, ok := t.get(k)
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		t.d.problem(t.key(k), "must be an array of numbers, not %s", typeName(v))
		return nil
	}
	out := make([]float64, 0, len(arr))
	for i, e := range arr {
		var f float64
		switch x := e.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			t.d.problem(fmt.Sprintf("%s[%d]", t.key(k), i), "must be a number, not %s", typeName(e))
			continue
		}
		if !(f > 0) || math.IsInf(f, 0) {
			t.d.problem(fmt.Sprintf("%s[%d]", t.key(k), i), "must be a finite number greater than 0, got %v", f)
			continue
		}
		out = append(out, f)
	}
	return out
}

// noEffect notes each key written in t with a value other than its
// default (keys: key → whether the value read differs from the default)
// where it has no effect (why): a warning, since the scenario runs as if
// it were not there. A default written out, as scenario.toml writes every
// default, says nothing.
func (t *table) noEffect(why string, keys map[string]bool) {
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if t.has(k) && keys[k] {
			t.d.idle = append(t.d.idle, metrics.Warning{Text: fmt.Sprintf("%s has no effect: %s", t.key(k), why)})
		}
	}
}
