package scenarios

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// resolvedVariants returns the scenario's variants as they apply to text,
// the scenario with every default written out. A variant whose own
// overrides give over text the variant as run (the file as read, the
// scenario's own overrides and the variant's, with every default filled
// in) is kept as written. Otherwise its set becomes the overrides that
// turn text into the variant as run: over text, a default that follows
// another key (a bucket's burst, the rate unless given) keeps the value
// written there, and a key only defaults wrote may not apply to what the
// variant makes of its table (a token bucket's initial_fill on a gcra). A
// variant that does not load, or whose changes no override can name, is
// kept as written.
func (sc *Scenario) resolvedVariants(text string) []Variant {
	var base map[string]any
	if _, err := toml.Decode(text, &base); err != nil {
		return sc.Variants
	}
	delete(base, "variant")
	delete(base, "sweep")
	out := slices.Clone(sc.Variants)
	for i, v := range sc.Variants {
		// As limitsim compare loads it: the source with the scenario's
		// overrides and the variant's.
		vtext, ok := asRun(sc.ld, sc.File, sc.src, append(slices.Clone(sc.sets), v.Overrides()...))
		if !ok {
			continue
		}
		if over, ok := asRun(sc.ld, sc.File, []byte(text), bare(v.Overrides())); ok && over == vtext {
			continue // faithful as written
		}
		var tree map[string]any
		if _, err := toml.Decode(vtext, &tree); err != nil {
			continue
		}
		var set []string
		if !diffTables("", "", base, tree, &set) || len(set) == 0 {
			continue
		}
		// The diff checked: over text it gives the variant as run.
		ovs := make([]Override, 0, len(set))
		for _, s := range set {
			if o, err := ParseOverride(s); err == nil {
				ovs = append(ovs, o)
			}
		}
		if got, ok := asRun(sc.ld, sc.File, []byte(text), bare(ovs)); ok && len(ovs) == len(set) && got == vtext {
			out[i].Set = set
		}
	}
	return out
}

// bare puts before overrides the removal of the scenario's own variants
// and sweeps: text's variants, as written, may not load over it (the ones
// being rewritten), and do not change the scenario run.
func bare(overrides []Override) []Override {
	return append([]Override{{Key: "variant"}, {Key: "sweep"}}, overrides...)
}

// asRun loads data with overrides as limitsim compare loads a variant
// (through l: see Loader), and renders the scenario as run without its
// variants and sweeps; false if it does not load.
func asRun(l *Loader, file string, data []byte, overrides []Override) (string, bool) {
	sc, err := parseWith(l, file, data, overrides)
	if err != nil {
		return "", false
	}
	c := *sc
	c.Variants, c.Sweeps = nil, nil
	text, err := c.encoded()
	return text, err == nil
}

// diffTables appends to out the overrides (in the --set syntax) that turn
// table a into table b: a key set where b's value is new or differs,
// removed where b lacks it; the entries of a list of tables one by one
// (by name where the list is named by a key of its entries, by position
// otherwise) when both lists hold the same entries, the whole list
// otherwise. here is the table's path as apply builds it
// (client.limiter[0]) and spelled as an override writes it
// (client.limiter.bucket). It is false when a change cannot be written as
// an override.
func diffTables(here, spelled string, a, b map[string]any, out *[]string) bool {
	both := make(map[string]any, len(a)+len(b)) // every key of either
	maps.Copy(both, a)
	maps.Copy(both, b)
	for _, k := range slices.Sorted(maps.Keys(both)) {
		av, inA := a[k]
		bv, inB := b[k]
		if inA && inB && reflect.DeepEqual(av, bv) {
			continue
		}
		if !addressable(k) {
			return false
		}
		h, s := joinPath(here, k), joinPath(spelled, k)
		if !inB {
			*out = append(*out, s+"=")
			continue
		}
		if am, ok := av.(map[string]any); ok && inA {
			if bm, ok := bv.(map[string]any); ok {
				if !diffTables(h, s, am, bm, out) {
					return false
				}
				continue
			}
		}
		if inA && diffEntries(h, s, av, bv, out) {
			continue
		}
		v, ok := inlineValue(bv)
		if !ok {
			return false
		}
		*out = append(*out, s+"="+v)
	}
	return true
}

// diffEntries diffs two lists of tables entry by entry, if both hold the
// same entries (the same names in a named list, the same count in any
// other) and every entry can be named; false leaves the list to be set
// whole.
func diffEntries(here, spelled string, av, bv any, out *[]string) bool {
	ae, aok := tableList(av)
	be, bok := tableList(bv)
	if !aok || !bok || len(ae) != len(be) || len(ae) == 0 {
		return false
	}
	ids := make([]string, len(ae))
	for i := range ae {
		nameKey, isNamed := named[here]
		if !isNamed {
			ids[i] = "." + strconv.Itoa(i)
			continue
		}
		an, _ := ae[i][nameKey].(string)
		bn, _ := be[i][nameKey].(string)
		if an != bn || !addressable(strings.ReplaceAll(an, ".", "_")) {
			return false
		}
		ids[i] = "." + an
		if strings.Contains(an, ".") { // in brackets, taken whole
			ids[i] = "[" + an + "]"
		}
	}
	var sub []string
	for i := range ae {
		if !diffTables(fmt.Sprintf("%s[%d]", here, i), spelled+ids[i], ae[i], be[i], &sub) {
			return false
		}
	}
	*out = append(*out, sub...)
	return true
}

// addressable reports whether an override can name s as a plain part of
// its key: apply splits keys at dots and reads [n] as a position, and the
// key ends at the first =. (An entry's name with dots is written in
// brackets.)
func addressable(s string) bool {
	return s != "" && s == strings.TrimSpace(s) && !strings.ContainsAny(s, ".[]=\n\r") && !isDigits(s)
}

// inlineValue writes v, a value decoded from TOML, as a TOML inline value
// (what ParseOverride reads back to v); false for a value it does not
// write (a date).
func inlineValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return tomlString(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan", true
		case math.IsInf(x, 1):
			return "inf", true
		case math.IsInf(x, -1):
			return "-inf", true
		}
		f := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(f, ".e") {
			f += ".0" // a float, not an integer
		}
		return f, true
	case []any:
		return inlineArray(x)
	case []map[string]any:
		return inlineArray(x)
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			p, ok := inlineValue(x[k])
			if !ok {
				return "", false
			}
			parts[i] = tomlKey(k) + " = " + p
		}
		if len(parts) == 0 {
			return "{}", true
		}
		return "{ " + strings.Join(parts, ", ") + " }", true
	}
	return "", false
}

// inlineArray writes xs as a TOML inline array.
func inlineArray[T any](xs []T) (string, bool) {
	parts := make([]string, len(xs))
	for i, e := range xs {
		p, ok := inlineValue(e)
		if !ok {
			return "", false
		}
		parts[i] = p
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}

// tomlKey writes k bare if TOML allows, quoted otherwise.
func tomlKey(k string) string {
	if k != "" && strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == "" {
		return k
	}
	return tomlString(k)
}

// QuoteString is s as a TOML basic string, for a tool writing a scenario
// (see tomlString).
func QuoteString(s string) string { return tomlString(s) }

// tomlString writes s as a TOML basic string: quotes and backslashes
// escaped, control characters as \uXXXX (what TOML 1.0 and 1.1 both read).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
