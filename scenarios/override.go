package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/limitsim/limitsim/report/metrics"
)

// Override is one change to a scenario's keys, applied before the file is
// validated: the --set syntax of the command line and the `fix.set` of a
// diagnosis. Key is a dotted path; a table in an array of tables is named
// by its name (`client.limiter.NAME.FIELD`, `client.path.NAME.FIELD`,
// `workload.hosts.NAME.FIELD`, `workload.tenants.NAME.FIELD`), an
// upstream by its host (`upstream.HOST.FIELD`, `upstream.*.FIELD`) and an
// entry of another list of tables by its position from 0
// (`upstream.*.quota.1.rate`, also written `upstream.*.quota[1].rate`). Value
// is a TOML value (string, integer, float, bool, array); nil removes the
// key. A limiter the scenario lacks is made by the overrides that name it
// (see madeList), and nil at `client.limiter.NAME` removes the limiter.
type Override struct {
	Key   string
	Value any
	// Flag is the command-line flag that gave it, which problems name
	// ("--sweep", "--duration"); empty for --set.
	Flag string
}

// flag is the flag problems name the override by.
func (o Override) flag() string {
	if o.Flag == "" {
		return "--set"
	}
	return o.Flag
}

// String writes the override as --set takes it, quoted when it holds
// control characters (a value of several lines), so that a problem naming
// it stays on one line.
func (o Override) String() string {
	if o.Value == nil {
		return printable(o.Key) + " (removed)"
	}
	if v, ok := o.Value.(string); ok { // as it was written after the =
		return printable(o.Key + "=" + v)
	}
	return printable(o.Key + "=" + metrics.SetValue(o.Value))
}

// splitKey splits an override's key into its parts: at dots, with a part
// in brackets (quota[1], client.limiter[bucket.v2]) or in double quotes
// (upstream."api.example.com", with TOML's escapes) taken whole, so that a
// name holding dots can be named.
func splitKey(key string) ([]string, error) {
	var parts []string
	for rest := key; ; {
		var part string
		switch {
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q is not a key: unclosed [", key)
			}
			part, rest = rest[1:end], rest[end+1:]
		case strings.HasPrefix(rest, `"`):
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(rest) {
				return nil, fmt.Errorf("%q is not a key: unclosed \"", key)
			}
			var ok bool
			if part, ok = unquoteBasic(rest[:end+1]); !ok {
				return nil, fmt.Errorf("%q is not a key: a quoted part with a bad escape", key)
			}
			rest = rest[end+1:]
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			part, rest = rest[:end], rest[end:]
		}
		if part == "" {
			return nil, fmt.Errorf("%q is not a key: empty part", key)
		}
		parts = append(parts, part)
		switch {
		case rest == "":
			return parts, nil
		case strings.HasPrefix(rest, "["):
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			if rest == "" {
				return nil, fmt.Errorf("%q is not a key: empty part", key)
			}
		default:
			return nil, fmt.Errorf("%q is not a key: %q after a part", key, rest[:1])
		}
	}
}

// ParseWith validates scenario text with overrides applied. Problems the
// overrides cause name the override instead of a line of the file.
func ParseWith(file string, data []byte, overrides []Override) (*Scenario, error) {
	return parseWith(nil, file, data, overrides)
}

// parseWith is ParseWith reading through l. A nil l reads through a
// Loader of its own, which the checks of the scenario's variants and
// sweeps share: each parses the same text and reads the same data files.
func parseWith(l *Loader, file string, data []byte, overrides []Override) (*Scenario, error) {
	given := l
	if l == nil {
		l = NewLoader()
	}
	// Overrides change the tree; parseTree only reads it.
	tree, err := l.tree(file, data, len(overrides) > 0)
	if err != nil {
		return nil, err
	}
	if len(overrides) == 0 {
		sc, err := parseTree(l, file, data, tree, nil)
		if sc != nil {
			sc.ld = given
		}
		return sc, err
	}
	ov := &overriding{by: map[string]Override{}}
	var probs Problems
	for _, o := range overrides {
		if err := ov.apply(tree, o); err != nil {
			probs = append(probs, Problem{File: o.flag(), Key: o.Key, Msg: escaped(err.Error())})
		}
	}
	if len(probs) == 0 {
		probs = ov.kindless(tree)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	sc, err := parseTree(l, file, data, tree, ov)
	if sc != nil {
		sc.sets, sc.ld = slices.Clone(overrides), given
	}
	return sc, err
}

// apply sets o in tree and records in ov the key path it resolved to, in
// the decoder's spelling (client.limiter[0].rate), and the first table it
// created, if any. tree is the caller's own table, but what it holds may
// be shared: each table and array apply descends into is replaced by a
// copy before anything is set in it.
func (ov *overriding) apply(tree map[string]any, o Override) error {
	created := ""
	parts, err := splitKey(o.Key)
	if err != nil {
		return err
	}
	cur, path := tree, ""
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		here := joinPath(path, part)
		last := i == len(parts)-1
		if nameKey, ok := named[here]; ok && !last {
			if i+1 == len(parts)-1 {
				return ov.removeEntry(cur, part, here, nameKey, parts[i+1], o)
			}
			e, idx, made, err := ov.entry(cur, part, here, nameKey, parts[i+1], o)
			if err != nil {
				return err
			}
			cur, path = e, fmt.Sprintf("%s[%d]", here, idx)
			if made && created == "" {
				created = path
			}
			i++
			continue
		}
		if last {
			if o.Value == nil {
				delete(cur, part)
			} else {
				cur[part] = tomlValue(o.Value)
			}
			ov.set(here, created, o)
			return nil
		}
		next, ok := cur[part]
		if !ok {
			m := map[string]any{}
			cur[part] = m
			if created == "" {
				created = here
			}
			cur, path = m, here
			continue
		}
		if isDigits(parts[i+1]) {
			idx, err := strconv.Atoi(parts[i+1])
			if err != nil || strconv.Itoa(idx) != parts[i+1] {
				return fmt.Errorf("%s.%s: a position is a whole number from 0, written plainly", here, parts[i+1])
			}
			// An entry of an array of tables by its position: quota.1.rate.
			if i+1 == len(parts)-1 {
				return fmt.Errorf("%s.%s names an entry; say which key of it to set", here, parts[i+1])
			}
			if _, err := indexedEntry(next, idx, here); err != nil {
				return err
			}
			if cur = ownEntry(cur, part, idx); cur == nil {
				return fmt.Errorf("%s is not an array of tables", here)
			}
			path = fmt.Sprintf("%s[%d]", here, idx)
			i++
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not a table", here)
		}
		m = maps.Clone(m)
		cur[part] = m
		cur, path = m, here
	}
	ov.set(path, created, o)
	return nil
}

// set records that o set the key at path, and created the table at
// created ("" when it created none). What earlier overrides set or made
// inside that key is gone: o answers for what is there now.
func (ov *overriding) set(path, created string, o Override) {
	inside := func(k string) bool { return strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") }
	maps.DeleteFunc(ov.by, func(k string, _ Override) bool { return inside(k) })
	ov.made = slices.DeleteFunc(ov.made, func(m madeEntry) bool { return inside(fmt.Sprintf("%s[%d]", madeList, m.idx)) })
	ov.by[path] = o
	if created != "" {
		ov.by[created+".*"] = o
	}
}

// ownEntry replaces the array of tables cur[key] with a copy whose entry
// idx (a table, checked by the caller) is a copy too, and returns that
// entry (nil if cur[key] is no such array): apply writes only into
// copies, so that a tree the Loader shares between loads is never
// changed, and only the tables on an override's path are copied (a
// scenario may list ten thousand tenants).
func ownEntry(cur map[string]any, key string, idx int) map[string]any {
	switch arr := cur[key].(type) {
	case []map[string]any:
		arr = slices.Clone(arr)
		arr[idx] = maps.Clone(arr[idx])
		cur[key] = arr
		return arr[idx]
	case []any:
		arr = slices.Clone(arr)
		m, ok := arr[idx].(map[string]any)
		if !ok {
			return nil
		}
		e := maps.Clone(m)
		arr[idx] = e
		cur[key] = arr
		return e
	}
	return nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// indexedEntry is entry idx (from 0) of v, an array of tables at here.
func indexedEntry(v any, idx int, here string) (map[string]any, error) {
	var n int
	var e any
	switch arr := v.(type) {
	case []map[string]any:
		n = len(arr)
		if idx >= 0 && idx < n {
			e = arr[idx]
		}
	case []any:
		n = len(arr)
		if idx >= 0 && idx < n {
			e = arr[idx]
		}
	default:
		return nil, fmt.Errorf("%s is not a list: only an entry of a list is picked by its position", here)
	}
	if e == nil && n == 0 {
		return nil, fmt.Errorf("%s is an empty list", here)
	}
	if e == nil {
		return nil, fmt.Errorf("%s has %d entries: pick one from 0 to %d", here, n, n-1)
	}
	m, ok := e.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s[%d] is not a table", here, idx)
	}
	return m, nil
}

func joinPath(path, part string) string {
	if path == "" {
		return part
	}
	return path + "." + part
}

// tableList returns v as a list of tables.
func tableList(v any) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case []any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// tomlValue turns a value from JSON or the command line into the value
// TOML decoding would give: whole numbers are integers (a float key
// accepts them), arrays keep their elements' types.
func tomlValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case int:
		return int64(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tomlValue(e)
		}
		return out
	case map[string]any, []map[string]any:
		// A table goes into the tree as a copy: a later override may set a
		// key inside it, and the override's own value is shared by every
		// load that applies it (a plan's points and replications, at once).
		return copyTree(x)
	}
	return v
}

// LoadWith reads and validates the scenario file at path with overrides
// applied.
func LoadWith(path string, overrides []Override) (*Scenario, error) {
	data, err := readBounded(path, maxFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, data, overrides)
}

// ParseOverride reads KEY=VALUE as the command line writes it: VALUE is a
// TOML value (45, 0.9, true, "text", [1, 2]) or, when it is not one, a
// plain string (2s, tenant); an empty VALUE removes the key (the limiter,
// for client.limiter.NAME=). A VALUE that reads as a TOML value followed
// by more keys ("45\nname = \"x\"") is not one value: it is a plain
// string too, which the key's check then refuses or takes whole, never a
// value with the rest dropped.
func ParseOverride(s string) (Override, error) {
	key, val, ok := strings.Cut(s, "=")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !ok || key == "" {
		return Override{}, fmt.Errorf("%q: want KEY=VALUE", s)
	}
	if val == "" {
		return Override{Key: key}, nil
	}
	if tooDeep(val) > 0 {
		return Override{}, fmt.Errorf("%s: arrays and inline tables nested more than %d deep", escaped(key), maxNesting)
	}
	var v struct{ V any }
	if md, err := toml.Decode("V = "+val, &v); err == nil && !slices.ContainsFunc(md.Undecoded(), otherThanV) {
		return Override{Key: key, Value: v.V}, nil
	}
	if f, err := strconv.ParseFloat(val, 64); err != nil && errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		// A number past float64's range would read as a string, and be
		// refused as "not a number".
		return Override{}, fmt.Errorf("%s=%s: the number is out of range (a number is at most about 1.8e308)", escaped(key), val)
	}
	return Override{Key: key, Value: val}, nil
}

// otherThanV reports whether k is outside the value ParseOverride decodes
// (the library lists the keys of a table decoded into any as undecoded
// too: those are V's own).
func otherThanV(k toml.Key) bool { return len(k) > 0 && k[0] != "V" }
