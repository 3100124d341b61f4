package planning

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Bisection is a one-key search: the largest (max:Key) or smallest
// (min:Key) value in [Low, High] meeting the constraints, to within
// Tolerance.
type Bisection struct {
	Key             string
	Low, High       float64
	Tolerance       float64
	integerBoundary bool // whole bounds and a tolerance of at least 1: whole values only
	toleranceGiven  bool // written as KEY=lo:hi:tolerance
}

// ParseBisection reads KEY=lo:hi[:tolerance]; the tolerance defaults to 1
// for whole bounds (an integer search) and to a 64th of the range
// otherwise.
func ParseBisection(spec string) (Bisection, error) {
	key, rng, ok := strings.Cut(spec, "=")
	key = strings.TrimSpace(key)
	parts := strings.Split(rng, ":")
	if !ok || key == "" || len(parts) < 2 || len(parts) > 3 {
		return Bisection{}, fmt.Errorf("%q: want KEY=lo:hi[:tolerance]", spec)
	}
	var f [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Bisection{}, fmt.Errorf("%q: %q is not a number", spec, p)
		}
		f[i] = v
	}
	b := Bisection{Key: key, Low: f[0], High: f[1]}
	if !(b.High > b.Low) {
		return Bisection{}, fmt.Errorf("%q: hi must be above lo", spec)
	}
	whole := b.Low == math.Trunc(b.Low) && b.High == math.Trunc(b.High)
	b.Tolerance = (b.High - b.Low) / 64
	if whole {
		b.Tolerance = 1
	}
	if len(parts) == 3 {
		if b.Tolerance = f[2]; !(b.Tolerance > 0) {
			return Bisection{}, fmt.Errorf("%q: the tolerance must be positive", spec)
		}
		b.toleranceGiven = true
	}
	b.integerBoundary = whole && b.Tolerance >= 1
	return b, nil
}

// minWholeSteps is the least width of whole bounds searched to 1 when
// the key takes any number.
const minWholeSteps = 16

// KeyTakes fits b to what its key takes, which the scenario knows:
// whole numbers only (permits, a window's limit), or any number. A key
// of whole numbers needs whole bounds and a tolerance of at least 1 (a
// search probing 22.5 permits would find every probe refused); a key of
// any number searched between whole bounds less than minWholeSteps
// apart, with no tolerance written, is searched to a 64th of the range
// rather than to 1 (a share from 0 to 1; a rate from 50 to 150 still to
// 1).
func (b *Bisection) KeyTakes(whole bool) error {
	bothWhole := b.Low == math.Trunc(b.Low) && b.High == math.Trunc(b.High)
	switch {
	case whole && (!bothWhole || b.Tolerance < 1):
		return fmt.Errorf("%s takes whole numbers: give whole bounds and a tolerance of at least 1 (%s=%s:%s:1)",
			b.Key, b.Key, fmtNum(math.Ceil(b.Low)), fmtNum(math.Floor(b.High)))
	case !whole && bothWhole && !b.toleranceGiven && b.High-b.Low < minWholeSteps:
		b.Tolerance, b.integerBoundary = (b.High-b.Low)/64, false
	}
	return nil
}

// Search bisects b.Key, assuming the constraints hold on one side of a
// threshold (more rate breaks a 429 constraint, more permits mend a wait
// constraint). Each step runs one point, its replications on
// spec.ReplicationWorkers. spec's Sweeps are replaced by the one key and
// its objective must be max:Key or min:Key.
func Search(spec Spec, b Bisection) *Result {
	spec.Sweeps = []Sweep{{Key: b.Key, Flag: "--search"}}
	res := newResult(spec)
	stopped := false
	feasible := func(v float64) bool {
		if stopped = stopped || spec.interrupted(); stopped {
			return false
		}
		p := runPoint(spec, []float64{v})
		if stopped = spec.interrupted(); stopped {
			return false
		}
		p.Index = len(res.Points)
		res.Points = append(res.Points, p)
		// The bisection follows the constraints alone, which hold on one
		// side of the threshold; the findings are checked at the end.
		return p.Error == "" && holds(p, spec.Constraints) && (p.Horizon == nil || !p.Horizon.Refused)
	}
	// good is a value known feasible, bad one known infeasible (or the
	// end of the range); the threshold lies between them.
	good, bad := b.Low, b.High
	if !spec.Objective.Maximise {
		good, bad = b.High, b.Low
	}
	var found *float64
	allTheWay, reversed := false, false
	switch {
	case !feasible(good):
		// The constraints may hold on the other side of the threshold:
		// then the objective is met at the far end. A start that erred
		// (a deadlock, no steady state) says nothing of the side.
		if res.Points[len(res.Points)-1].Error == "" {
			if reversed = feasible(bad); reversed {
				found = &bad
			}
		}
	case feasible(bad):
		found, allTheWay = &bad, true
	default:
		found = new(b.bisect(good, bad, feasible))
	}
	res.Complete = !stopped
	res.Warnings = horizonWarnings(res.Points)
	markPareto(res, spec.Objective, spec.Constraints)
	switch {
	case !res.Complete:
	case found != nil:
		at := slices.IndexFunc(res.Points, func(p Point) bool { return p.Params[b.Key] == *found })
		if p := res.Points[at]; !p.Feasible {
			res.Closest = blockedBy(p, spec.AllowFindings)
			break
		}
		res.Recommended = map[string]float64{b.Key: *found}
		switch {
		case reversed:
			res.Warnings = append(res.Warnings, fmt.Sprintf("direction: the constraints hold at %s=%s, not at %s: they hold on the other side of the threshold, so %s is met at the end of the range; %s finds the threshold",
				b.Key, fmtNum(*found), fmtNum(good), spec.Objective, opposite(spec.Objective)))
		case allTheWay:
			res.Warnings = append(res.Warnings, fmt.Sprintf("edge: %s=%s is the end of the searched range %s:%s, which holds all the way: the answer may lie beyond it",
				b.Key, fmtNum(*found), fmtNum(b.Low), fmtNum(b.High)))
		}
	default:
		res.Closest = whyInfeasible(res.Points, spec.Constraints, spec.AllowFindings) // none feasible
	}
	res.Tally(b.gridSize())
	return res
}

// bisect narrows [good, bad] (good feasible, bad not) to the tolerance,
// on whole values for an integer boundary, and returns the last feasible
// value.
func (b Bisection) bisect(good, bad float64, feasible func(float64) bool) float64 {
	for math.Abs(bad-good) > b.Tolerance {
		mid := (good + bad) / 2
		if b.integerBoundary {
			mid = math.Floor(mid)
		}
		if mid == good || mid == bad {
			break
		}
		if feasible(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
	return good
}

// opposite is o with the other direction: min:KEY for max:KEY.
func opposite(o Objective) string {
	if o.Maximise {
		return "min:" + o.Path
	}
	return "max:" + o.Path
}
