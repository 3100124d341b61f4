package scenarios

import (
	"fmt"
	"strings"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
)

// PathLimiters returns, for each request path, the limiters it takes in
// order. Without [[client.path]] there is one path, "default", taking every
// limiter in the order written.
func (sc *Scenario) PathLimiters() (names []string, order [][]int) {
	idx := map[string]int{}
	for i, l := range sc.Client.Limiters {
		idx[l.Name] = i
	}
	if len(sc.Client.Paths) == 0 {
		all := make([]int, len(sc.Client.Limiters))
		for i := range all {
			all[i] = i
		}
		return []string{"default"}, [][]int{all}
	}
	for _, p := range sc.Client.Paths {
		var o []int
		for _, n := range p.Limiters {
			o = append(o, idx[n])
		}
		names = append(names, p.Name)
		order = append(order, o)
	}
	return names, order
}

// orderWarnings flags limiter orders that go against the article's advice —
// a concurrency limiter taken before a rate limiter holds a scarce permit
// while merely waiting for a clock — and lock-order cycles between paths,
// which can deadlock.
func orderWarnings(sc *Scenario) []metrics.Warning {
	out, g, _ := orderGraph(sc)
	if cyc := g.Cycle(); cyc != nil {
		var why []string
		for i := 0; i+1 < len(cyc); i++ {
			why = append(why, fmt.Sprintf("%s → %s (%s)", cyc[i], cyc[i+1], strings.Join(g.Labels(cyc[i], cyc[i+1]), ", ")))
		}
		out = append(out, metrics.LockOrderWarning(cyc, why))
	}
	return out
}

// orderGraph walks each path once. It returns the warnings for concurrency
// limiters taken before rate limiters (at most maxOrderWarnings), the
// wait-for graph between concurrency limiters — an edge from the last one a
// path holds to the next one it takes — and the number of edges added: at
// most one per limiter a path names, so the work stays linear.
func orderGraph(sc *Scenario) (out []metrics.Warning, g *sim.WaitGraph, edges int) {
	g = &sim.WaitGraph{}
	paths, order := sc.PathLimiters()
	for p, o := range order {
		last := -1 // the last concurrency limiter taken on this path
		for _, b := range o {
			lb := sc.Client.Limiters[b]
			if !lb.Releases() {
				if last >= 0 && len(out) < maxOrderWarnings {
					out = append(out, metrics.AcquireOrderWarning(paths[p], sc.Client.Limiters[last].Name, lb.Name))
				}
				continue
			}
			// Holding the previous permit while waiting for this one.
			if last >= 0 {
				g.Add(sc.Client.Limiters[last].Name, lb.Name, "path "+paths[p])
				edges++
			}
			last = b
		}
	}
	return out, g, edges
}
