package upstream

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// mapReader is a Reader over a decoded TOML table, problems collected: the
// scenario decoder's checks in brief, for the families' own tests.
type mapReader struct {
	path  string
	m     map[string]any
	count bool
	seen  map[string]bool
	probs *[]string
}

func newMapReader(m map[string]any, count bool) mapReader {
	return mapReader{path: "d", m: m, count: count, seen: map[string]bool{}, probs: &[]string{}}
}

func (r mapReader) Count() (int64, bool)     { return 0, r.count }
func (r mapReader) Key(k string) string      { return r.path + "." + k }
func (r mapReader) Has(k string) bool        { _, ok := r.m[k]; return ok }
func (r mapReader) Get(k string) (any, bool) { r.seen[k] = true; v, ok := r.m[k]; return v, ok }
func (r mapReader) Problem(key, format string, args ...any) {
	*r.probs = append(*r.probs, key+": "+fmt.Sprintf(format, args...))
}
func (r mapReader) Required(k string) bool {
	r.seen[k] = true
	if !r.Has(k) {
		r.Problem(r.Key(k), "is required")
		return false
	}
	return true
}
func (r mapReader) Enum(k string, allowed ...string) string {
	s := r.Str(k, "")
	if !slices.Contains(allowed, s) {
		r.Problem(r.Key(k), "unknown value %q", s)
		return ""
	}
	return s
}
func (r mapReader) Str(k, def string) string {
	v, ok := r.Get(k)
	if s, isStr := v.(string); ok && isStr {
		return s
	}
	return def
}
func (r mapReader) Float(k string, def, lo float64, open bool) float64 {
	v, _ := r.Get(k)
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return def
}
func (r mapReader) Integer(k string, def, lo int64) int64 {
	if v, ok := r.Get(k); ok {
		if n, isInt := v.(int64); isInt {
			return n
		}
	}
	return def
}
func (r mapReader) Duration(k string, def, lo time.Duration, open bool) time.Duration {
	d, err := r.ParseDuration(r.Str(k, ""))
	if err != nil {
		r.Problem(r.Key(k), "%v", err)
		return def
	}
	return d
}
func (r mapReader) ParseDuration(s string) (time.Duration, error) { return time.ParseDuration(s) }
func (r mapReader) Intact(keys ...string) bool                    { return len(*r.probs) == 0 }
func (r mapReader) Rejected(key string) bool                      { return false }
func (r mapReader) Done(valid ...string) {
	for k := range r.m {
		if !r.seen[k] && !slices.Contains(valid, k) {
			r.Problem(r.Key(k), "unknown key")
		}
	}
}
func (r mapReader) Tables(k string) []Reader {
	v, _ := r.Get(k)
	var out []Reader
	switch arr := v.(type) {
	case []map[string]any:
		for i, m := range arr {
			out = append(out, mapReader{path: fmt.Sprintf("%s[%d]", r.Key(k), i), m: m, count: r.count, seen: map[string]bool{}, probs: r.probs})
		}
	case []any:
		for i, e := range arr {
			m, _ := e.(map[string]any)
			out = append(out, mapReader{path: fmt.Sprintf("%s[%d]", r.Key(k), i), m: m, count: r.count, seen: map[string]bool{}, probs: r.probs})
		}
	}
	return out
}
func (r mapReader) Sub(k string) Reader {
	v, _ := r.Get(k)
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return mapReader{path: r.Key(k), m: m, count: r.count, seen: map[string]bool{}, probs: r.probs}
}

// testEncoder writes values as a scenario file does: durations as
// strings, counts as integers.
func testEncoder(count bool) Encoder {
	e := Encoder{Value: func(d time.Duration) string { return fmt.Sprintf("%q", d.String()) }, Str: func(s string) string { return fmt.Sprintf("%q", s) }}
	if count {
		e.Value = func(d time.Duration) string { return fmt.Sprint(int64(d)) }
	}
	return e
}

// roundTrip encodes d as a scenario writes it (as a count too, when a
// count takes its family and its keys), decodes the text, and wants it
// read with no problem and written back the same.
func roundTrip(t *testing.T, d Dist) {
	t.Helper()
	for _, count := range []bool{false, true} {
		if count && !countable(d) {
			continue
		}
		text, err := testEncoder(count).Inline(d)
		if err != nil {
			t.Fatalf("%+v: %v", d, err)
		}
		var doc map[string]any
		if _, err := toml.Decode("x = "+text, &doc); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		r := newMapReader(doc["x"].(map[string]any), count)
		got := DecodeDist(r)
		back, err := testEncoder(count).Inline(got)
		if len(*r.probs) > 0 || err != nil || back != text || reflect.TypeOf(got) != reflect.TypeOf(d) {
			t.Errorf("count %v: %s decodes as %+v, written %s (problems: %s; %v)", count, text, got, back, strings.Join(*r.probs, "; "), err)
		}
	}
}

// countable reports whether a count takes d: its family, and its keys.
func countable(d Dist) bool {
	if !Countable(d) {
		return false
	}
	for _, part := range d.Encode(testEncoder(true)) {
		key, _, _ := strings.Cut(part, " = ")
		if !slices.Contains(d.Keys(true), key) {
			return false
		}
	}
	return true
}

// examples are the families' example values, each family's test file
// giving its own (see example).
var examples []Dist

// example registers values of a family for the table's tests.
func example(ds ...Dist) bool {
	examples = append(examples, ds...)
	return true
}
