package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// maxCostValue bounds a cost value: far beyond any provider's limit, well
// inside int64 nanoseconds.
const maxCostValue = upstream.MaxCount

// Cost is a request's or a response's cost in a scenario file: a whole
// number (`cost = 3`), or a distribution of them
// (`cost = { dist = "lognormal", median = 1500, sigma = 0.8 }`), whose
// values are counts rather than durations.
type Cost struct {
	// N is the constant cost when Dist is nil.
	N int64
	// Dist is the distribution, its durations read as counts (see
	// upstream.Count).
	Dist upstream.Dist
}

// Spec returns the cost as a count distribution.
func (c Cost) Spec() upstream.Dist {
	if c.Dist != nil {
		return c.Dist
	}
	return upstream.Constant{Value: time.Duration(c.N)}
}

// constant returns the cost when every draw is the same (a number, or a
// constant distribution).
func (c Cost) constant() (int64, bool) {
	if c.Dist == nil {
		return c.N, true
	}
	if k, ok := c.Dist.(upstream.Constant); ok {
		return max(1, int64(k.Value)), true
	}
	return 0, false
}

// countEncoder writes a count's values as a scenario file does.
var countEncoder = upstream.Encoder{Value: func(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }, Str: tomlString}

// MarshalTOML renders the cost as written: a number, or an inline table.
func (c Cost) MarshalTOML() ([]byte, error) {
	if c.Dist == nil {
		return []byte(strconv.FormatInt(c.N, 10)), nil
	}
	if !upstream.Countable(c.Dist) {
		return nil, fmt.Errorf("cost: no encoding for dist %q", upstream.Name(c.Dist))
	}
	text, err := countEncoder.Inline(c.Dist)
	return []byte(text), err
}

// cost reads key k of t as a cost: an integer of at least least, or a
// distribution table. def is the cost when k is absent.
func (d *decoder) cost(t *table, k string, least, def int64) Cost {
	v, ok := t.get(k)
	if !ok {
		return Cost{N: def}
	}
	if _, isTable := v.(map[string]any); !isTable {
		return Cost{N: t.integer(k, def, least)}
	}
	if t.refuseRange(k, `a cost that varies from request to request is a distribution, { dist = "uniform", min = 1, max = 5 }`) {
		return Cost{N: def}
	}
	ct := t.sub(k)
	problems := len(d.probs)
	s := upstream.DecodeDist(distReader{t: ct, count: true, least: least})
	if s == nil {
		return Cost{N: def}
	}
	if len(d.probs) == problems {
		// What the keys above do not check alone (empirical quantiles
		// that fall), as the run would build it.
		if _, err := upstream.NewCount(s, 1); err != nil {
			key := "dist"
			if f, _ := upstream.FamilyOf(s); f.Check != "" {
				key = f.Check
			}
			d.problem(ct.key(key), "%v", err)
		}
	}
	return Cost{Dist: s}
}

// checkCost checks that a request's cost (with the reservation a limit
// takes for its response) fits a limit of size: a constant
// cost that never fits is a problem at key; a distribution whose draws
// exceed it at times gets a warning with the share, since each of those
// requests is refused at once. limiter names the client limiter the limit
// is ("" for a quota): only the costs of the paths that take it count.
func (d *decoder) checkCost(sc *Scenario, key, what string, size float64, reserve extraCost, limiter string) {
	for _, rc := range requestCosts(sc, limiter) {
		d.checkOneCost(sc, rc, key, what, size, reserve)
	}
}

// requestCost is a cost requests take: workload.cost, or a path's own.
type requestCost struct {
	cost Cost
	key  string
}

// requestCosts lists the costs of the requests that take limiter (""
// for every request): each path's own cost, and workload.cost when a
// path without one (or no path at all) takes it.
func requestCosts(sc *Scenario, limiter string) []requestCost {
	var out []requestCost
	workload := len(sc.Client.Paths) == 0
	for i, p := range sc.Client.Paths {
		if limiter != "" && !slices.Contains(p.Limiters, limiter) {
			continue
		}
		if p.Cost == nil {
			workload = true
			continue
		}
		out = append(out, requestCost{*p.Cost, fmt.Sprintf("client.path[%d].cost", i)})
	}
	if workload {
		out = append([]requestCost{{sc.Workload.Cost, "workload.cost"}}, out...)
	}
	return out
}

// checkOneCost is checkCost for the requests of one cost.
func (d *decoder) checkOneCost(sc *Scenario, rc requestCost, key, what string, size float64, reserve extraCost) {
	extra := reserve.n
	if n, ok := rc.cost.constant(); ok {
		if float64(n)+float64(extra) > size { // in floats: n + extra can overflow an int64
			why := fmt.Sprintf("one request's cost (%s = %d)", rc.key, n)
			if extra > 0 {
				why = fmt.Sprintf("what one request takes (%s %d + %s %d)", rc.key, n, reserve.key, extra)
			}
			d.problem(key, "(%v) is below %s: no request could ever pass", size, why)
		}
		return
	}
	draws, ok := d.costDraws[rc.key]
	if !ok {
		count, err := upstream.NewCount(rc.cost.Spec(), 1)
		if err != nil {
			return // decoding said why
		}
		rng := rand.New(rand.NewPCG(1, 2))
		draws = make([]int64, costSamples)
		for i := range draws {
			draws[i] = count.Sample(rng)
		}
		slices.Sort(draws)
		if d.costDraws == nil {
			d.costDraws = map[string][]int64{}
		}
		d.costDraws[rc.key] = draws
	}
	// The draws that fit are those of at most size − extra.
	fit, _ := slices.BinarySearchFunc(draws, size-float64(extra), func(v int64, limit float64) int {
		if float64(v) > limit {
			return 1
		}
		return -1
	})
	if share := float64(costSamples-fit) / costSamples; share > 0.001 {
		sc.Warnings = append(sc.Warnings, metrics.Warning{Text: fmt.Sprintf("%s: about %.1f%% of requests cost more than %s (%v) and are refused at once as too large (%s is a distribution)",
			key, 100*share, what, size, rc.key)})
	}
}

// idleWorkloadCost warns of a workload.cost written where every path has
// a cost of its own, so no request costs it.
func (d *decoder) idleWorkloadCost(sc *Scenario) {
	paths := sc.Client.Paths
	if n, ok := sc.Workload.Cost.constant(); len(paths) == 0 || (ok && n == 1 && sc.Workload.Cost.Dist == nil) {
		return // none, or the default
	}
	for _, p := range paths {
		if p.Cost == nil {
			return
		}
	}
	d.idle = append(d.idle, metrics.Warning{Text: "workload.cost has no effect: every [[client.path]] has a cost of its own"})
}
