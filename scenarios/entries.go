package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/limitsim/limitsim/models"
)

// named lists the arrays of tables whose entries an override names, and
// the key that names an entry.
var named = map[string]string{
	"client.limiter":   "name",
	"client.path":      "name",
	"workload.hosts":   "name",
	"workload.tenants": "name",
	"upstream":         "host",
	"quota":            "name",
}

// madeList is the one list an override adds entries to and removes them
// from: a limiter it names that the list lacks is made, appended after
// the others, and `client.limiter.NAME=` removes one, taking it out of
// every path that takes it (paths are the only references to a limiter).
const madeList = "client.limiter"

// overriding is what applying a load's overrides to its tree leaves for
// the checks: the override each problem comes from, and where the file's
// own entries moved.
type overriding struct {
	// by maps a resolved key path to the override that set it, and the
	// path of a table an override created, followed by ".*", to that
	// override: it answers for the problems found inside it too (a quota
	// set where there was none lacks its kind).
	by map[string]Override
	// made lists the limiters the overrides made, in the order made.
	made []madeEntry
	// removed lists the entries removed, in order: each moved the later
	// entries of its list up one.
	removed []removal
}

// madeEntry is a limiter an override made: its position in the list as
// it stands, its name, the names the list held before it and the
// override that made it.
type madeEntry struct {
	idx   int
	name  string
	known []string
	o     Override
}

// spelled is the entry as an override names it (client.limiter.NAME).
func (m madeEntry) spelled() string { return spellEntry(madeList, m.name) }

// removal is the entry idx of the list at path list, removed.
type removal struct {
	list string
	idx  int
}

// entryIndex reads path as entry j of the list at list, or a key inside
// one: list[j] followed by rest ("" or from a "." or "[" on).
func entryIndex(list, path string) (j int, rest string, ok bool) {
	s, ok := strings.CutPrefix(path, list+"[")
	if !ok {
		return 0, "", false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 || !isDigits(s[:end]) {
		return 0, "", false
	}
	j, err := strconv.Atoi(s[:end])
	rest = s[end+1:]
	if err != nil || rest != "" && rest[0] != '.' && rest[0] != '[' {
		return 0, "", false
	}
	return j, rest, true
}

// after is path once r's entry is gone; false for a path in that entry.
func (r removal) after(path string) (string, bool) {
	j, rest, ok := entryIndex(r.list, path)
	switch {
	case !ok || j < r.idx:
		return path, true
	case j == r.idx:
		return "", false
	}
	return fmt.Sprintf("%s[%d]%s", r.list, j-1, rest), true
}

// before is path as it was before r's entry was removed.
func (r removal) before(path string) string {
	j, rest, ok := entryIndex(r.list, path)
	if !ok || j < r.idx {
		return path
	}
	return fmt.Sprintf("%s[%d]%s", r.list, j+1, rest)
}

// remove records r: the paths recorded so far move as the entries did.
func (ov *overriding) remove(r removal) {
	ov.removed = append(ov.removed, r)
	by := make(map[string]Override, len(ov.by))
	for k, o := range ov.by {
		if k, ok := r.after(k); ok {
			by[k] = o
		}
	}
	ov.by = by
	if r.list != madeList {
		return
	}
	made := ov.made[:0]
	for _, m := range ov.made {
		switch {
		case m.idx == r.idx:
			continue // removed again
		case m.idx > r.idx:
			m.idx--
		}
		made = append(made, m)
	}
	ov.made = made
}

// fileKey is where key, a path of the tree the overrides left, is in the
// file, before the entries above it were removed (client.limiter[1].rate,
// with the file's first limiter removed, is its client.limiter[2].rate).
// named says which override set a key a file's problem names in its
// message ("must be shorter than run.duration" when --set gave the
// duration): " (run.duration set by --set run.duration=5s)", or "".
func (ov *overriding) named(msg string) string {
	if ov == nil {
		return ""
	}
	for _, key := range slices.Sorted(maps.Keys(ov.by)) {
		if strings.Contains(key, ".") && !strings.HasSuffix(key, ".*") && strings.Contains(msg, key) {
			o := ov.by[key]
			return fmt.Sprintf(" (%s set by %s %s)", key, o.flag(), o)
		}
	}
	return ""
}

func (ov *overriding) fileKey(key string) string {
	if ov == nil {
		return key
	}
	for i := len(ov.removed) - 1; i >= 0; i-- {
		key = ov.removed[i].before(key)
	}
	return key
}

// spell writes key, a resolved path, as the overrides name it where it is
// in a limiter they made (client.limiter[3].rate: client.limiter.NEW.rate):
// the file has no such entry for its position to mean anything.
func (ov *overriding) spell(key string) string {
	j, rest, ok := entryIndex(madeList, key)
	if ov == nil || !ok {
		return key
	}
	for _, m := range ov.made {
		if j == m.idx {
			return m.spelled() + rest
		}
	}
	return key
}

// of finds the override a problem at key comes from: the one that set
// key or a value holding it (a path's list of limiters), or the one that
// created the table key is in (table: its path, as spell writes it).
func (ov *overriding) of(key string) (o Override, table string, ok bool) {
	if ov == nil {
		return Override{}, "", false
	}
	for k := key; ; {
		if o, ok := ov.by[k]; ok {
			return o, "", true
		}
		if o, ok := ov.by[k+".*"]; ok {
			return o, ov.spell(k), true
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			return Override{}, "", false
		}
		k = k[:i]
	}
}

// spellEntry names the entry name of the list at list as an override
// does: client.limiter.NAME, in brackets or double quotes when the name
// is no plain part of a key.
func spellEntry(list, name string) string {
	switch {
	case addressable(name):
		return list + "." + name
	case !strings.ContainsAny(name, "[]\"\\") && name == strings.TrimSpace(name):
		return list + "[" + name + "]"
	}
	return list + "." + tomlString(name)
}

// entry finds the entry of the list of tables cur[key] (at here) whose
// nameKey is name and makes it cur's own (see ownEntry). A limiter the
// list lacks is made, appended after the others (made is true).
func (ov *overriding) entry(cur map[string]any, key, here, nameKey, name string, o Override) (e map[string]any, idx int, made bool, err error) {
	idx, known, err := findEntry(cur, key, nameKey, name, here)
	if err != nil {
		return nil, 0, false, err
	}
	if idx < 0 {
		if here != madeList {
			return nil, 0, false, fmt.Errorf("no %s with %s %q (known: %s)", here, nameKey, name, strings.Join(known, ", "))
		}
		idx = appendEntry(cur, key, map[string]any{nameKey: name})
		ov.made = append(ov.made, madeEntry{idx: idx, name: name, known: known, o: o})
		made = true
	}
	if e = ownEntry(cur, key, idx); e == nil {
		return nil, 0, false, fmt.Errorf("%s is not an array of tables", here)
	}
	return e, idx, made, nil
}

// findEntry finds the entry of the array of tables cur[key] whose nameKey
// is name: its position, or -1 when there is none, with the names there
// are (sorted).
func findEntry(cur map[string]any, key, nameKey, name, here string) (int, []string, error) {
	entries, ok := tableList(cur[key])
	if !ok && cur[key] != nil {
		return 0, nil, fmt.Errorf("%s is not an array of tables", here)
	}
	known := make([]string, 0, len(entries))
	for i, e := range entries {
		n, _ := e[nameKey].(string)
		if n == name {
			return i, nil, nil
		}
		known = append(known, n)
	}
	sort.Strings(known)
	return -1, known, nil
}

// appendEntry appends e to the array of tables cur[key] (none yet: a new
// one), in a copy, and returns its position.
func appendEntry(cur map[string]any, key string, e map[string]any) int {
	switch arr := cur[key].(type) {
	case []any:
		cur[key] = append(slices.Clip(arr), e)
		return len(arr)
	case []map[string]any:
		cur[key] = append(slices.Clip(arr), e)
		return len(arr)
	}
	cur[key] = []map[string]any{e}
	return 0
}

// removeEntry applies an override that names an entry without a key of
// it: with no value, on the list of limiters, it removes the limiter name
// from the array of tables cur[key] (at here), and from the limiters of
// every path of cur, the client table. Anything else is an error.
func (ov *overriding) removeEntry(cur map[string]any, key, here, nameKey, name string, o Override) error {
	if here != madeList || o.Value != nil {
		hint := ""
		if here == madeList {
			hint = ", or give it no value to remove the limiter"
		}
		return fmt.Errorf("%s.%s names an entry; say which key of it to set%s", here, name, hint)
	}
	idx, known, err := findEntry(cur, key, nameKey, name, here)
	if err != nil {
		return err
	}
	if idx < 0 {
		return fmt.Errorf("no %s with %s %q to remove (known: %s)", here, nameKey, name, strings.Join(known, ", "))
	}
	switch arr := cur[key].(type) {
	case []any:
		cur[key] = slices.Delete(slices.Clone(arr), idx, idx+1)
	case []map[string]any:
		cur[key] = slices.Delete(slices.Clone(arr), idx, idx+1)
	}
	ov.remove(removal{list: here, idx: idx})
	ov.unlist(cur, name)
	return nil
}

// unlist takes the limiter name out of the limiters of every path of c,
// the client table, in copies: a path keeps taking its other limiters in
// its order, and one that took only that limiter takes none.
func (ov *overriding) unlist(c map[string]any, name string) {
	paths, ok := tableList(c["path"])
	if !ok {
		return
	}
	changed := false
	for i, p := range paths {
		lims, ok := p["limiters"].([]any)
		if !ok || !slices.Contains(lims, any(name)) {
			continue
		}
		if !changed {
			paths, changed = slices.Clone(paths), true
		}
		kept := make([]any, 0, len(lims))
		for _, l := range lims {
			if l == any(name) {
				// The entries before it that stay are where it now is.
				ov.remove(removal{list: fmt.Sprintf("client.path[%d].limiters", i), idx: len(kept)})
				continue
			}
			kept = append(kept, l)
		}
		p = maps.Clone(p)
		p["limiters"] = kept
		paths[i] = p
	}
	if changed {
		c["path"] = paths
	}
}

// kindless returns a problem for each limiter the overrides made that
// has no kind: what the file would say of one written without it, but
// naming the override that made it, which may name a limiter that was
// meant to be there.
func (ov *overriding) kindless(tree map[string]any) Problems {
	if len(ov.made) == 0 {
		return nil
	}
	c, _ := tree["client"].(map[string]any)
	entries, _ := tableList(c["limiter"])
	var probs Problems
	for _, m := range ov.made {
		if m.idx >= len(entries) {
			continue
		}
		if _, ok := entries[m.idx]["kind"]; ok {
			continue
		}
		hint := ""
		if near, ok := nearest(m.name, m.known); ok {
			hint = fmt.Sprintf("; did you mean %s?", near)
		}
		probs = append(probs, Problem{File: m.o.flag(), Key: m.o.Key, Msg: escaped(fmt.Sprintf(
			"no %s with name %q (known: %s%s), so this makes a new limiter, which needs its kind: --set %s.kind=KIND, KIND one of %s",
			madeList, m.name, strings.Join(m.known, ", "), hint, m.spelled(), strings.Join(models.KindNames(), ", ")))})
	}
	return probs
}
