package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// stormShare names the share of replications in a metastable failure
// (StormShareOf), a figure no single field holds.
const stormShare = "storm_share"

// expand turns a shortcut for a figure asked for often into its path.
func expand(path string) string {
	switch path {
	case "goodput_rps", "offered_rps", "started_rps":
		return "throughput." + path
	}
	return path
}

// Lookup returns the number at path in r's JSON form: fields by their JSON
// names joined by dots, list entries by name in brackets
// (`limiters[bucket].wait_s.p99`, `upstreams[api.example.com].rate_429`,
// `tenants[batch].success_rate`), or a shortcut (`rate_429`,
// `goodput_rps`, `offered_rps`, `started_rps`, `storm_share`).
func Lookup(r *Results, path string) (float64, error) {
	if path == stormShare {
		return StormShareOf(r)
	}
	path = expand(path)
	data, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	var current any
	if err := json.Unmarshal(data, &current); err != nil {
		return 0, err
	}
	steps, err := splitPath(path)
	if err != nil {
		return 0, err
	}
	at := ""
	for _, s := range steps {
		m, ok := current.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("%s: %s is not an object", path, at)
		}
		next, ok := m[s.field]
		if !ok {
			return 0, fmt.Errorf("%s: no field %q in %s", path, s.field, orRoot(at))
		}
		at = joinField(at, s.field)
		if s.selector != "" {
			list, ok := next.([]any)
			if !ok {
				return 0, fmt.Errorf("%s: %s is not a list", path, at)
			}
			next, err = selectEntry(list, s.selector)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, at, err)
			}
			at += "[" + s.selector + "]"
		}
		current = next
	}
	f, ok := current.(float64)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", path)
	}
	return f, nil
}

// CheckPath reports whether path can name a number of the results, by the
// fields of their JSON form: a misspelt field, brackets on what is not a
// list, a path that ends on an object or a string are caught before
// anything runs. The entries brackets name exist only in results: Lookup
// finds them.
func CheckPath(path string) error {
	if path == stormShare {
		return nil
	}
	steps, err := splitPath(expand(path))
	if err != nil {
		return err
	}
	t := reflect.TypeFor[Results]()
	at := ""
	for _, s := range steps {
		t = indirect(t)
		if opaque(t) {
			return nil // keys or a shape known only in results
		}
		if t.Kind() != reflect.Struct {
			return fmt.Errorf("%s: %s is not an object", path, orRoot(at))
		}
		f, ok := jsonField(t, s.field)
		if !ok {
			return fmt.Errorf("%s: no field %q in %s", path, s.field, orRoot(at))
		}
		at = joinField(at, s.field)
		t = indirect(f.Type)
		if s.selector != "" {
			if opaque(t) {
				return nil
			}
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return fmt.Errorf("%s: %s is not a list", path, at)
			}
			t = t.Elem()
			at += "[" + s.selector + "]"
		}
	}
	t = indirect(t)
	switch {
	case opaque(t):
		return nil
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return nil
	}
	return fmt.Errorf("%s is not a number", path)
}

// indirect is t, or what t points to.
func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// opaque reports whether the JSON form of t is not read from its type: an
// interface, a map, or a type that writes its own.
func opaque(t reflect.Type) bool {
	marshaler := reflect.TypeFor[json.Marshaler]()
	return t.Kind() == reflect.Interface || t.Kind() == reflect.Map || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)
}

// jsonField finds the field of struct type t whose JSON name is name, in t
// or a struct it embeds.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || (!f.IsExported() && !f.Anonymous):
			continue
		case tag == "" && f.Anonymous && indirect(f.Type).Kind() == reflect.Struct:
			if g, ok := jsonField(indirect(f.Type), name); ok {
				return g, true
			}
			continue
		case tag == "":
			tag = f.Name
		}
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

type step struct{ field, selector string }

// splitPath splits a.b[name.with.dots].c into its steps.
func splitPath(path string) ([]step, error) {
	var out []step
	for rest := path; rest != ""; {
		var s step
		i := strings.IndexAny(rest, ".[")
		switch {
		case i < 0:
			s.field, rest = rest, ""
		case rest[i] == '.':
			s.field, rest = rest[:i], rest[i+1:]
		default:
			end := strings.IndexByte(rest, ']')
			if end < i {
				return nil, fmt.Errorf("%s: unclosed [", path)
			}
			s.field, s.selector, rest = rest[:i], rest[i+1:end], strings.TrimPrefix(rest[end+1:], ".")
		}
		if s.field == "" {
			return nil, fmt.Errorf("%q is not a path like limiters[NAME].wait_s.p99", path)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty path")
	}
	return out, nil
}

// selectEntry finds the entry of list whose name (name, host, stage,
// limiter, key, code or quota) is selector or, when no entry is so named and
// selector is a whole number, the entry at that position from 0.
func selectEntry(list []any, selector string) (any, error) {
	var names []string
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"name", "host", "stage", "limiter", "key", "code", "quota"} {
			if n, ok := m[k].(string); ok {
				if n == selector {
					return m, nil
				}
				names = append(names, n)
				break
			}
		}
	}
	if i, err := strconv.Atoi(selector); err == nil && i >= 0 && i < len(list) && strconv.Itoa(i) == selector {
		return list[i], nil
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no entry %q: the list is empty", selector)
	}
	return nil, fmt.Errorf("no entry %q (entries: %s; or a position from 0 to %d)", selector, strings.Join(names, ", "), len(list)-1)
}

func joinField(at, f string) string {
	if at == "" {
		return f
	}
	return at + "." + f
}

func orRoot(at string) string {
	if at == "" {
		return "the results"
	}
	return at
}

// Assertion is a threshold on a figure of the results: PATH OP VALUE, as
// `--assert 'rate_429<0.01'` writes it.
type Assertion struct {
	Path  string
	Op    string // <, <=, >, >=
	Value float64
	Text  string // as written
}

// ParseAssertion reads PATH OP VALUE; VALUE is a number or a duration
// (read in seconds, as every *_s figure is).
func ParseAssertion(s string) (Assertion, error) {
	for _, op := range []string{"<=", ">=", "<", ">"} {
		i := strings.Index(s, op)
		if i < 0 {
			continue
		}
		path, valueText := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
		if path == "" {
			return Assertion{}, fmt.Errorf("%q: no path before %s", s, op)
		}
		v, err := strconv.ParseFloat(valueText, 64)
		if err != nil {
			d, durationErr := time.ParseDuration(valueText)
			if durationErr != nil {
				return Assertion{}, fmt.Errorf("%q: %q is neither a number nor a duration", s, valueText)
			}
			v = d.Seconds()
		}
		if math.IsNaN(v) { // no figure compares with it: the assertion could never hold
			return Assertion{}, fmt.Errorf("%q: %q is not a number", s, valueText)
		}
		if err := CheckPath(path); err != nil {
			return Assertion{}, err
		}
		return Assertion{Path: path, Op: op, Value: v, Text: strings.TrimSpace(s)}, nil
	}
	return Assertion{}, fmt.Errorf("%q: want PATH OP VALUE with OP one of < <= > >=", s)
}

// Check evaluates the assertion on r: whether it holds and the value
// found.
func (a Assertion) Check(r *Results) (holds bool, got float64, err error) {
	got, err = Lookup(r, a.Path)
	if err != nil {
		return false, 0, err
	}
	return a.CheckValue(got)
}

// CheckValue evaluates the assertion on a value already looked up.
func (a Assertion) CheckValue(got float64) (holds bool, _ float64, err error) {
	switch a.Op {
	case "<":
		holds = got < a.Value
	case "<=":
		holds = got <= a.Value
	case ">":
		holds = got > a.Value
	case ">=":
		holds = got >= a.Value
	}
	return holds, got, nil
}
