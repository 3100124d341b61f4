package sim

import (
	"slices"
	"sort"
)

// WaitGraph is a wait-for graph between named resources: an edge a → b
// means some party holds a while waiting for b. A cycle is a deadlock (or,
// built statically from request paths, a lock order that can deadlock).
// Labels record who creates each edge ("path reads"). The zero value is
// ready to use; iteration order is sorted, so results are deterministic.
type WaitGraph struct {
	edges map[string]map[string][]string
}

// Add records that a holder of from waits for to, for the reason label.
func (g *WaitGraph) Add(from, to, label string) {
	if g.edges == nil {
		g.edges = make(map[string]map[string][]string)
	}
	m := g.edges[from]
	if m == nil {
		m = make(map[string][]string)
		g.edges[from] = m
	}
	if label != "" && !slices.Contains(m[to], label) {
		m[to] = append(m[to], label)
	} else if _, ok := m[to]; !ok {
		m[to] = nil
	}
}

// Labels returns the labels of the edge from → to, sorted.
func (g *WaitGraph) Labels(from, to string) []string {
	l := slices.Clone(g.edges[from][to])
	sort.Strings(l)
	return l
}

// Cycle returns one cycle as a path that repeats its first node at the end
// (["db", "cache", "db"]), or nil if the graph is acyclic. Among cycles it
// finds the one reached first in sorted order, so the answer is stable.
func (g *WaitGraph) Cycle() []string {
	nodes := make([]string, 0, len(g.edges))
	for n := range g.edges {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int)
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		next := make([]string, 0, len(g.edges[n]))
		for m := range g.edges[n] {
			next = append(next, m)
		}
		sort.Strings(next)
		for _, m := range next {
			switch color[m] {
			case grey:
				i := slices.Index(stack, m)
				found = append(slices.Clone(stack[i:]), m)
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, n := range nodes {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}
