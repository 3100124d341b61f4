package planning

import (
	"bytes"

	"github.com/limitsim/limitsim/sim/client"
)

// Results of pathMatcher.match, kept in logs.Record.Match: path i is
// i+1.
const (
	matchNotLogged int32 = 0  // the log names neither method nor URL path
	matchNone      int32 = -1 // logged, and no path or several match
)

// pathMatcher matches a logged request to the scenario's [[client.path]]
// by its method, then, among paths that share the method, by its URL
// path (docs/scenario.md, "Matching logged requests to paths"):
//
//   - the candidates are the paths that declare the request's method, or,
//     when none does (or none is logged), the paths that declare no
//     method;
//   - one candidate is the match; among several, the one named by the
//     URL's last segment that names one ("/repos/o/r/issues/7" names
//     "issues" and "repos": issues); none so named, no candidate: no
//     match.
//
// It allocates nothing per request.
type pathMatcher struct {
	names     []string // the paths' names, by index
	methods   []string // the methods the paths declare, each once
	byMethod  [][]int  // the paths that declare each of methods
	anyMethod []int    // the paths that declare no method
}

// newPathMatcher returns the matcher of paths, or nil when there is
// nothing to match: fewer than two paths, or none declaring a method (a
// replay then draws every request's path by weight).
func newPathMatcher(paths []client.Path) *pathMatcher {
	m := &pathMatcher{}
	for i, p := range paths {
		m.names = append(m.names, p.Name)
		if p.Method == "" {
			m.anyMethod = append(m.anyMethod, i)
			continue
		}
		k := 0
		for k < len(m.methods) && m.methods[k] != p.Method {
			k++
		}
		if k == len(m.methods) {
			m.methods, m.byMethod = append(m.methods, p.Method), append(m.byMethod, nil)
		}
		m.byMethod[k] = append(m.byMethod[k], i)
	}
	if len(paths) < 2 || len(m.methods) == 0 {
		return nil
	}
	return m
}

// match returns the path a request with method and URL path (nil when
// not logged) takes, as i+1 for path i, or matchNone.
func (m *pathMatcher) match(method, path []byte) int32 {
	candidates := m.anyMethod
	for k, name := range m.methods {
		if string(method) == name {
			candidates = m.byMethod[k]
			break
		}
	}
	switch len(candidates) {
	case 0:
		return matchNone
	case 1:
		return int32(candidates[0]) + 1
	}
	found := -1
	for len(path) > 0 {
		var segment []byte
		segment, path, _ = bytes.Cut(path, []byte("/"))
		for _, c := range candidates {
			if string(segment) == m.names[c] {
				found = c
			}
		}
	}
	if found < 0 {
		return matchNone
	}
	return int32(found) + 1
}
