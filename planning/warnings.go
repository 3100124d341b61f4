package planning

import (
	"fmt"
	"math"
	"strings"

	"github.com/limitsim/limitsim/scenarios"
)

// horizonWarnings notes the points a plan ran again on a longer run, and
// those it refused for want of one.
func horizonWarnings(points []Point) []string {
	var longer, refused []Point
	for _, p := range points {
		switch h := p.Horizon; {
		case h == nil:
		case h.Refused:
			refused = append(refused, p)
		default:
			longer = append(longer, p)
		}
	}
	var out []string
	if len(longer) > 0 {
		h := slowestHorizon(longer)
		out = append(out, fmt.Sprintf("horizon: %d of %d points were too short for their long-run state to show and ran again for %s (slowest: %s at %s; %d turnovers needed)",
			len(longer), len(points), secsText(h.Lengthened), h.Why, ParamsText(slowestPoint(longer).Params), Turnovers))
	}
	if len(refused) > 0 {
		h := slowestHorizon(refused)
		out = append(out, fmt.Sprintf("horizon: %d of %d points are refused (not feasible): their long-run state needs a steady window of %s (%s at %s), more than the plan runs; lengthen run.duration to judge them",
			len(refused), len(points), secsText(h.NeededS), h.Why, ParamsText(slowestPoint(refused).Params)))
	}
	return out
}

func slowestPoint(ps []Point) Point {
	best := ps[0]
	for _, p := range ps[1:] {
		if p.Horizon.NeededS > best.Horizon.NeededS {
			best = p
		}
	}
	return best
}

func slowestHorizon(ps []Point) Horizon { return *slowestPoint(ps).Horizon }

// edgeWarnings notes a recommendation at the end of a swept range (the
// values the plan's points gave a key), where the best point may lie
// beyond it, and how far to extend the sweep.
func edgeWarnings(res *Result) []string {
	if res.Recommended == nil || len(res.Points) == 0 {
		return nil
	}
	var out []string
	for i, key := range res.Keys {
		seen := map[float64]bool{}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range res.Points {
			x := p.Params[key]
			seen[x] = true
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if len(seen) < 2 {
			continue
		}
		v := res.Recommended[key]
		values := len(seen)
		if r := res.Refined; r != nil && i < len(r.Sizes) && r.Sizes[i] > 1 {
			values = r.Sizes[i] // the full grid's values, not those a refined plan ran
		}
		step := (hi - lo) / float64(values-1)
		sw := Sweep{Key: key}
		top, bounded := scenarios.KeyMax(key)
		switch {
		case v == hi && bounded && hi >= top:
			// The top of the key's own range: nothing lies above it.
		case (v == hi || v == lo) && flatAtEdge(res, key):
			// The objective is no better at the edge than next to it:
			// nothing says it improves beyond.
		case v == hi:
			up, beyond := hi+2*step, " or beyond"
			if bounded && up >= top {
				up, beyond = top, ", the most it may be"
			}
			out = append(out, fmt.Sprintf("edge: %s=%s is the top of its swept range; the best may lie above it: extend the sweep to %s%s",
				sw.Key, fmtNum(v), fmtNum(up), beyond))
		case v == lo:
			down := belowRange(lo, step, allWhole(seen))
			if down < lo {
				out = append(out, fmt.Sprintf("edge: %s=%s is the bottom of its swept range; the best may lie below it: extend the sweep down to %s",
					sw.Key, fmtNum(v), fmtNum(down)))
			}
		}
	}
	return out
}

// flatAtEdge reports whether the recommended point, at an end of key's
// swept range, ties on the objective with the next point inward (the
// same values of the other keys): with the objective flat there, the
// edge is no sign that the best lies beyond.
func flatAtEdge(res *Result, key string) bool {
	o, err := ParseObjective(res.Objective)
	if err != nil {
		return false
	}
	v := res.Recommended[key]
	var rec, inward *Point
	for i := range res.Points {
		p := &res.Points[i]
		if !sameElsewhere(p.Params, res.Recommended, key) {
			continue
		}
		x := p.Params[key]
		switch {
		case x == v:
			rec = p
		case inward == nil || math.Abs(x-v) < math.Abs(inward.Params[key]-v):
			inward = p
		}
	}
	return rec != nil && inward != nil && inward.Feasible && ties(*rec, *inward, o)
}

// sameElsewhere reports whether a and b agree on every key but key.
func sameElsewhere(a, b map[string]float64, key string) bool {
	for k, v := range b {
		if k != key && a[k] != v {
			return false
		}
	}
	return true
}

// belowRange is how far below a swept range whose least value is lo
// (step apart) to extend it: two steps, or, for a key swept over positive
// values, which stays positive (a rate, permits, a burst: 0 is refused),
// one step or half of lo, and a whole number no less than 1 for a key
// swept over whole numbers; not at all below 0.
func belowRange(lo, step float64, whole bool) float64 {
	down := lo - 2*step
	switch {
	case lo == 0:
		return lo // a key swept from 0 (a bound, a delay) does not go below it
	case lo < 0 || down > 0:
		return down
	}
	if down = lo - step; down <= 0 {
		down = lo / 2
	}
	if whole {
		down = math.Max(1, math.Floor(down))
	}
	return down
}

// allWhole reports whether every value swept is a whole number.
func allWhole(values map[float64]bool) bool {
	for v := range values {
		if v != math.Trunc(v) {
			return false
		}
	}
	return true
}

func fmtNum(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}
