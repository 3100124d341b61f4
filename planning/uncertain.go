package planning

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim"
)

// A plan under uncertainty (RunUncertain) runs every point of its grid in
// each of N draws of the scenario's ranges. A draw is one value for every
// range, drawn jointly (each independently) from the seeded stream
// "uncertain" of the scenario's run.seed, and it is the same for every
// point: the points are compared on common draws, as they are on common
// seeds. A draw is a set of overrides applied after the point's own, so a
// point's run in a draw is an ordinary point of a plan (its replications,
// its horizon, its constraints and findings), and the journal keys it by
// those overrides like any other.
//
// Each point's share is the share of draws in which it meets every
// constraint. A point's regret in a draw it meets them in is how far its
// objective falls short of the best objective among the points meeting
// them in that draw (0 for the best); its worst regret is the largest over
// those draws. A draw a point fails is counted by its share, not by its
// regret: the share required is the failure the user accepts, and a
// regret charged for failing too would make every point that fails one
// draw lose to any that fails none, whatever the share. The plan
// recommends, among the points whose share is at least the share
// required, the one of least worst regret (ties to the first in grid
// order).

// uncertainStream names the random stream the draws come from.
const uncertainStream = "uncertain"

// Draw is one joint draw of a scenario's ranges.
type Draw struct {
	// Values is each range's value in the draw, by its key.
	Values map[string]float64
	// overrides set each range's key to its value, in the ranges' order.
	overrides []scenarios.Override
}

// Draws draws ranges n times from the stream "uncertain" of seed: in each
// draw, one uniform number per range in the ranges' order, turned into
// the range's value by its Quantile.
func Draws(ranges []scenarios.Range, seed uint64, n int) []Draw {
	rng := rand.New(sim.StreamSource(seed, uncertainStream))
	out := make([]Draw, n)
	for d := range out {
		out[d].Values = make(map[string]float64, len(ranges))
		for _, r := range ranges {
			u := rng.Float64()
			out[d].Values[r.Key] = r.Quantile(u)
			out[d].overrides = append(out[d].overrides, scenarios.Override{Key: r.Key, Value: r.Value(u)})
		}
	}
	return out
}

// Uncertain is how a plan's points fared over the draws: plan.json's
// "uncertain".
type Uncertain struct {
	// Ranges are the scenario's ranges, as drawn.
	Ranges []scenarios.Range `json:"ranges"`
	// Draws are the values of each draw, by key: every point ran each.
	Draws []map[string]float64 `json:"draws"`
	// ShareRequired is the least share of draws in which a point must
	// meet every constraint to be recommended.
	ShareRequired float64 `json:"share_required"`
	// Points are the points' outcomes, in the order of the plan's points.
	Points []UncertainPoint `json:"points"`
}

// UncertainPoint is one point's outcome over the draws.
type UncertainPoint struct {
	Index int `json:"index"` // the point's, in grid order
	// Share is the share of draws in which the point meets every
	// constraint (with no critical finding, unless the plan allows them).
	Share float64 `json:"share"`
	// MaxRegret is the point's worst regret over the draws it meets the
	// constraints in; absent when it meets them in none.
	MaxRegret *float64 `json:"max_regret,omitempty"`
	// Draws are the point's outcome in each draw, in the draws' order.
	Draws []DrawOutcome `json:"draws"`
}

// DrawOutcome is a point's outcome in one draw.
type DrawOutcome struct {
	// Objective is the objective's value at the point in the draw (0 when
	// its run failed).
	Objective float64 `json:"objective"`
	// Feasible: the point meets every constraint in the draw.
	Feasible bool `json:"feasible"`
	// Regret is the best objective among the points feasible in the draw
	// less this point's (in the objective's direction: never negative);
	// absent when the point is not feasible in the draw.
	Regret *float64 `json:"regret,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// RunUncertain runs every point of grid in every draw, on spec.Workers
// goroutines (each run lands at its index, so the result does not depend
// on their number), and recommends the point of least worst regret among
// those meeting the constraints in at least share of the draws. Each
// point of the result stands for its runs over the draws: its figures are
// their means, its cost their sum, and it is feasible when it meets the
// share. A plan interrupted before its end keeps the points whose draws
// all ran, and recommends nothing.
func RunUncertain(spec Spec, grid [][]float64, ranges []scenarios.Range, draws []Draw, share float64) *Result {
	res := newResult(spec)
	n := len(draws)
	runs := make([]Point, len(grid)*n)
	done := make([]bool, len(runs))
	par.Run(len(runs), spec.Workers, func(k int) bool {
		runs[k] = runPointWith(spec, grid[k/n], draws[k%n].overrides)
		runs[k].Index = k / n
		done[k] = !spec.interrupted()
		if spec.Progress != nil {
			spec.Progress()
		}
		return !done[k]
	})
	u := &Uncertain{Ranges: ranges, ShareRequired: share}
	for _, d := range draws {
		u.Draws = append(u.Draws, d.Values)
	}
	res.Points = []Point{}
	var ran [][]Point // each point's runs over the draws
	for i := range grid {
		if slices.Contains(done[i*n:(i+1)*n], false) {
			res.Complete = false
			continue
		}
		ran = append(ran, runs[i*n:(i+1)*n])
	}
	weighDraws(res, spec, ran, u, share)
	res.Tally(len(grid))
	return res
}

// weighDraws fills res (and u, its Uncertain) from ran, each point's runs
// over the draws in the draws' order, for the points whose draws all ran:
// each point's outcomes, the point standing for its runs, the
// recommendation and the warnings.
func weighDraws(res *Result, spec Spec, ran [][]Point, u *Uncertain, share float64) {
	var all []Point
	for _, rs := range ran {
		all = append(all, rs...)
	}
	res.Warnings = horizonWarnings(all)
	u.Points = outcomes(ran, spec.Objective)
	for i, rs := range ran {
		res.Points = append(res.Points, overDraws(rs, u.Points[i], share))
	}
	res.Uncertain = u
	recommendUncertain(res, spec.Objective, spec.Constraints)
	res.Warnings = append(res.Warnings, edgeWarnings(res)...)
}

// outcomes are each point's outcomes over the draws, with its regret in
// each draw and its share: ran holds each point's runs, in the draws'
// order.
func outcomes(ran [][]Point, o Objective) []UncertainPoint {
	out := make([]UncertainPoint, len(ran))
	if len(ran) == 0 {
		return out
	}
	n := len(ran[0])
	for d := range n {
		best, found := 0.0, false
		for _, rs := range ran {
			if v := objectiveValue(rs[d], o); rs[d].Feasible && (!found || o.Better(v, best)) {
				best, found = v, true
			}
		}
		for i, rs := range ran {
			p := rs[d]
			oc := DrawOutcome{Feasible: p.Feasible, Error: p.Error}
			if p.Error == "" {
				oc.Objective = objectiveValue(p, o)
			}
			if p.Feasible {
				r := math.Abs(best - oc.Objective)
				oc.Regret = &r
				if out[i].MaxRegret == nil || r > *out[i].MaxRegret {
					out[i].MaxRegret = &r
				}
			}
			out[i].Index = p.Index
			out[i].Draws = append(out[i].Draws, oc)
		}
	}
	for i := range out {
		met := 0
		for _, oc := range out[i].Draws {
			if oc.Feasible {
				met++
			}
		}
		out[i].Share = float64(met) / float64(n)
	}
	return out
}

// meetsShare reports whether a point feasible in a share got of the draws
// meets the share required (counted in draws, so that 19 of 20 meets 95%).
func meetsShare(got, required float64, draws int) bool {
	return math.Round(got*float64(draws)) >= math.Ceil(required*float64(draws)-1e-9)
}

// overDraws is the point a point's runs over the draws stand for: the
// means of their figures (a run that failed left out), the sum of their
// cost, their critical findings, feasible when it meets the share. It
// holds the first run's error only when every run failed.
func overDraws(rs []Point, up UncertainPoint, share float64) Point {
	p := Point{Index: rs[0].Index, Params: rs[0].Params, Metrics: map[string]float64{}}
	sums, counts := map[string]float64{}, map[string]int{}
	failed := 0
	for _, r := range rs {
		p.Runs += r.Runs
		p.Requests += r.Requests
		for _, code := range r.Findings {
			if !slices.Contains(p.Findings, code) {
				p.Findings = append(p.Findings, code)
			}
		}
		if r.Error != "" {
			failed++
			continue
		}
		for path, v := range r.Metrics {
			sums[path] += v
			counts[path]++
		}
	}
	slices.Sort(p.Findings)
	for path, v := range sums {
		if strings.HasSuffix(path, ".ci95") {
			continue // a replication's interval is not the draws' spread
		}
		p.Metrics[path] = v / float64(counts[path])
	}
	if failed == len(rs) {
		p.Error, p.BadPath = rs[0].Error, rs[0].BadPath
		return p
	}
	p.Feasible = up.MaxRegret != nil && meetsShare(up.Share, share, len(rs))
	return p
}

// recommendUncertain marks the Pareto front over the points' means and
// recommends the point of least worst regret among those meeting the
// share (ties to the first in grid order), or names the constraint
// closest to holding.
func recommendUncertain(res *Result, o Objective, cons []metrics.Assertion) {
	markPareto(res, o, cons)
	res.Recommended, res.Closest = nil, ""
	if !res.Complete {
		return
	}
	best := -1
	for i, p := range res.Points {
		up := res.Uncertain.Points[i]
		if p.Feasible && (best < 0 || *up.MaxRegret < *res.Uncertain.Points[best].MaxRegret) {
			best = i
		}
	}
	if best >= 0 {
		res.Recommended = res.Points[best].Params
		return
	}
	res.Closest = closest(res.Points, cons)
}

// BestShare is the largest share of draws any point meets the
// constraints in, and that point's params ("" when there are none).
func (u *Uncertain) BestShare(points []Point) (float64, string) {
	best, at := 0.0, ""
	for i, up := range u.Points {
		if at == "" || up.Share > best {
			best, at = up.Share, ParamsText(points[i].Params)
		}
	}
	return best, at
}

// ShareText is a share of draws as "7/8 (87.5%)".
func ShareText(share float64, draws int) string {
	return fmt.Sprintf("%d/%d (%.1f%%)", int(math.Round(share*float64(draws))), draws, 100*share)
}

// CheckDraws loads the scenario with each draw applied after overrides (a
// point's), so that a draw the scenario refuses (a value two keys together
// do not allow) is found before anything runs.
func CheckDraws(src Source, overrides []scenarios.Override, draws []Draw) error {
	for d, dr := range draws {
		if _, err := src.Load(append(slices.Clip(overrides), dr.overrides...)...); err != nil {
			return fmt.Errorf("draw %d of the ranges (%s) is not a valid scenario: %w\n(a range is drawn anywhere between its ends: "+
				"one of whole numbers is written in integers, { low = 2, high = 4 })", d+1, ParamsText(dr.Values), err)
		}
	}
	return nil
}
