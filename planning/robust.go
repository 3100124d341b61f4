package planning

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// ErrInterrupted: a check was stopped by the plan's interrupt before it
// could say anything.
var ErrInterrupted = errors.New("planning: interrupted")

// DefaultHeadroom is how much more offered load a recommendation is
// checked against.
const DefaultHeadroom = 0.1

// Robustness checks: fresh seeds, a longer run, and the headrooms tried
// when the full one fails (each a fraction of it). Five seeds, each of
// which must hold: a point at its limit that fails on two seeds in five
// passes three seeds one time in five, five seeds one time in thirteen.
const (
	robustSeeds   = 5
	robustLonger  = 2
	headroomSteps = 3
)

// Robustness is how a recommendation held when run again beyond the plan:
// at Headroom more offered load, on robustSeeds seeds the plan never used,
// on a run Longer times as long.
type Robustness struct {
	Headroom float64  `json:"headroom"`
	Seeds    []uint64 `json:"seeds"`
	Longer   float64  `json:"longer"`
	// Holds: the constraints hold on every one of those runs, with no
	// critical finding (unless the plan allows them).
	Holds bool `json:"holds"`
	// HoldsAt is the largest headroom tried at which it holds (0 and
	// Holds false: not even at the plan's own load); absent when Holds.
	HoldsAt *float64 `json:"holds_at,omitempty"`
	Note    string   `json:"note"`
	// Runs and Requests are what the check cost: its runs, each headroom
	// tried on every fresh seed, and the requests they simulated.
	Runs     int   `json:"runs"`
	Requests int64 `json:"requests"`
	// why is what failed at the last load tried (a seed and the
	// constraint it missed), for the plan's warnings; failedOwn: it
	// failed even at the plan's own load (HoldsAt 0 also reads "held
	// only at the plan's own load").
	why       string
	failedOwn bool
}

// loadOverrides scale the scenario's offered load by f: its arrival
// rates, a ramp's final rate and tenants' own rates.
func loadOverrides(sc *scenarios.Scenario, f float64) ([]scenarios.Override, error) {
	w := sc.Workload
	if w.Trace != "" || w.Arrival == "trace" {
		return nil, errors.New("a trace's load cannot be scaled")
	}
	var overrides []scenarios.Override
	if w.Rate > 0 {
		overrides = append(overrides, scenarios.Override{Key: "workload.rate", Value: w.Rate * f})
	}
	if w.RateTo > 0 {
		overrides = append(overrides, scenarios.Override{Key: "workload.rate_to", Value: w.RateTo * f})
	}
	for _, t := range w.Tenants {
		if t.Rate > 0 {
			overrides = append(overrides, scenarios.Override{Key: "workload.tenants[" + t.Name + "].rate", Value: t.Rate * f})
		}
	}
	if len(overrides) == 0 {
		return nil, errors.New("the workload has no rate to scale")
	}
	return overrides, nil
}

// longerOverrides run sc robustLonger times as long.
func longerOverrides(sc *scenarios.Scenario) []scenarios.Override {
	var overrides []scenarios.Override
	if d := time.Duration(sc.Run.Duration); d > 0 {
		overrides = append(overrides, scenarios.Override{Key: "run.duration", Value: (d * robustLonger).String()})
	}
	if n := sc.Run.Requests; n > 0 {
		overrides = append(overrides, scenarios.Override{Key: "run.requests", Value: n * robustLonger})
	}
	return overrides
}

// Robust runs res's recommendation again beyond the plan: at headroom
// more offered load, on fresh seeds (the replications after the plan's
// own), on a longer run. When it fails there, smaller headrooms are tried
// for the largest at which it holds. The point's own overrides (a
// lengthened horizon) are kept.
func Robust(spec Spec, res *Result, headroom float64) (*Robustness, error) {
	return robust(spec, res, headroom, true)
}

// robust is Robust; without search, a recommendation that fails at the
// full headroom is not tried at smaller ones.
func robust(spec Spec, res *Result, headroom float64, search bool) (*Robustness, error) {
	if res.Recommended == nil {
		return nil, nil
	}
	var overrides []scenarios.Override
	for _, key := range res.Keys {
		overrides = append(overrides, scenarios.Override{Key: key, Value: res.Recommended[key]})
	}
	for _, p := range res.Points {
		if equalParams(p.Params, res.Recommended) {
			overrides = append(overrides, p.longer...) // its lengthened horizon
		}
	}
	sc, err := spec.Source.Load(overrides...)
	if err != nil {
		return nil, err
	}
	overrides = append(overrides, longerOverrides(sc)...)
	first := max(1, spec.Replications)
	rb := &Robustness{Headroom: headroom, Longer: robustLonger}
	more, err := loadOverrides(sc, 1+headroom)
	for _, o := range more {
		if err == nil && slices.Contains(res.Keys, o.Key) {
			err = fmt.Errorf("the load is the swept key %s", o.Key)
		}
	}
	if err != nil && headroom > 0 {
		// A trace is what it is, and a swept load is the answer itself:
		// check the fresh seeds and the longer run alone.
		rb.Headroom, headroom = 0, 0
		rb.Note = err.Error() + ", so no headroom is checked; "
	}
	for i := range robustSeeds {
		rb.Seeds = append(rb.Seeds, sc.Run.Seed+uint64(first+i))
	}
	for step := 0; step <= headroomSteps; step++ {
		h := headroom * float64(headroomSteps-step) / float64(headroomSteps)
		if step > 0 && h == headroom {
			break
		}
		held, why, err := holdsAt(spec, sc, overrides, res.Recommended, 1+h, first, rb)
		if err != nil {
			return nil, err
		}
		rb.why = why
		if step == 0 {
			if rb.Holds = held; held {
				rb.Note += fmt.Sprintf("holds at %.0f%% more load on %d fresh seeds and a run %g× as long", 100*headroom, robustSeeds, float64(robustLonger))
				return rb, nil
			}
			rb.Note += fmt.Sprintf("fails at %.0f%% more load on fresh seeds and a %g× longer run: %s", 100*headroom, float64(robustLonger), why)
			if !search {
				return rb, nil
			}
		}
		if held {
			rb.HoldsAt = &h
			rb.Note += fmt.Sprintf("; holds up to %.1f%% more load", 100*h)
			return rb, nil
		}
	}
	zero := 0.0
	rb.HoldsAt, rb.failedOwn = &zero, true
	rb.Note += "; fails even at the plan's own load on fresh seeds and a longer run: the plan's runs were too few or too short to trust"
	return rb, nil
}

// holdsAt runs the recommendation at load×f on the fresh seeds and says
// whether the constraints hold on every run, and if not why; the runs are
// counted into rb.
func holdsAt(spec Spec, sc *scenarios.Scenario, overrides []scenarios.Override, params map[string]float64, f float64, first int, rb *Robustness) (bool, string, error) {
	if f != 1 {
		more, err := loadOverrides(sc, f)
		if err != nil {
			return false, "", err
		}
		overrides = append(append([]scenarios.Override(nil), overrides...), more...)
	}
	rs, errs := make([]*metrics.Results, robustSeeds), make([]error, robustSeeds)
	par.Run(robustSeeds, spec.Workers, func(i int) bool {
		rs[i], errs[i] = spec.Source.Simulate(overrides, first+i, spec.Interrupt)
		return false
	})
	for _, r := range rs {
		if r != nil {
			rb.Runs++
			rb.Requests += r.Requests.Arrived
		}
	}
	if spec.interrupted() {
		return false, "", ErrInterrupted
	}
	for i, r := range rs {
		if errs[i] != nil {
			return false, fmt.Sprintf("seed %d: %v", sc.Run.Seed+uint64(first+i), errs[i]), nil
		}
		p := Point{Params: params, Metrics: map[string]float64{}}
		if err := p.measure(spec, []*metrics.Results{r}); err != nil {
			return false, "", err
		}
		if !holds(p, spec.Constraints) {
			return false, fmt.Sprintf("seed %d: %s", sc.Run.Seed+uint64(first+i), missed(p, spec.Constraints)), nil
		}
		if len(p.Findings) > 0 && !spec.AllowFindings {
			return false, fmt.Sprintf("seed %d: critical findings %s", sc.Run.Seed+uint64(first+i), strings.Join(p.Findings, ", ")), nil
		}
	}
	return true, "", nil
}

// missed names the constraints p misses, with the values found.
func missed(p Point, cons []metrics.Assertion) string {
	var out []string
	for _, c := range cons {
		if ok, _, _ := c.CheckValue(p.Metrics[c.Path]); !ok {
			out = append(out, fmt.Sprintf("%s (got %s)", c.Text, report.Number(p.Metrics[c.Path], 4)))
		}
	}
	return strings.Join(out, ", ")
}

func equalParams(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// maxAlternatives is how many feasible points after the best the
// robustness check tries when the best fails even at the plan's own load.
const maxAlternatives = 6

// CheckRecommendation runs Robust on res's recommendation and records it.
// When it does not hold, the points that tie with it, then the next best
// feasible points, in objective order, are checked, each at most once
// and up to maxAlternatives each time: the first that holds at the
// headroom is recommended instead. A recommendation that fails even at
// the plan's own load on fresh seeds (the plan's runs were too few or
// too short to trust it) is set aside for one that holds at the
// headroom, else for the first that holds at its own load; if none does,
// nothing is recommended. Each step is a warning. Every check's runs
// count into res.Robustness, and so into the cost.
func CheckRecommendation(spec Spec, res *Result, headroom float64) error {
	first := res.Recommended
	defer func() {
		if !equalParams(first, res.Recommended) {
			refreshEdges(res)
		}
	}()
	rb, err := Robust(spec, res, headroom)
	if err != nil || rb == nil {
		return err
	}
	res.Robustness = rb
	if rb.Holds {
		return nil
	}
	checked := map[string]bool{ParamsText(res.Recommended): true}
	if held, err := tiedThatHolds(spec, res, headroom, checked); err != nil || held {
		return err
	}
	if !failsAtOwnLoad(rb) {
		if held, err := nextThatHolds(spec, res, headroom, checked); err != nil || held {
			return err
		}
		res.Warnings = append(res.Warnings, "robustness: the recommendation "+rb.Note)
		return nil
	}
	return setAside(spec, res, headroom, checked)
}

// setAside replaces a recommendation that fails even at the plan's own
// load by the next best feasible point (not checked already, up to
// maxAlternatives) that holds at the full headroom, or failing that by
// the first that holds at the plan's own load, with its warning; by
// nothing when none does.
func setAside(spec Spec, res *Result, headroom float64, checked map[string]bool) error {
	rb := res.Robustness
	best, bestWhy := res.Recommended, rb.why
	var fallback *Robustness
	var fallbackAt map[string]float64
	for _, i := range unchecked(res, spec.Objective, checked) {
		if err := restorePointLonger(spec, &res.Points[i]); err != nil {
			return err
		}
		trial := *res
		trial.Recommended = res.Points[i].Params
		// First at the plan's own load alone (robustSeeds runs), then, if it
		// holds there, at the full headroom.
		alt, err := Robust(spec, &trial, 0)
		if err == nil && alt.Holds && headroom > 0 {
			runs, requests := alt.Runs, alt.Requests
			if alt, err = Robust(spec, &trial, headroom); err == nil {
				alt.Runs, alt.Requests = alt.Runs+runs, alt.Requests+requests
			}
		}
		if err != nil {
			return err
		}
		alt.Runs, alt.Requests = alt.Runs+rb.Runs, alt.Requests+rb.Requests
		rb = alt
		if alt.Holds {
			fallback, fallbackAt = alt, trial.Recommended
			break
		}
		if !failsAtOwnLoad(alt) && fallback == nil {
			fallback, fallbackAt = alt, trial.Recommended
		}
	}
	if fallback == nil {
		res.Robustness.Runs, res.Robustness.Requests = rb.Runs, rb.Requests
		res.Warnings = append(res.Warnings, fmt.Sprintf("robustness: the best point, %s, and the next feasible ones fail even at the plan's own load on fresh seeds and a longer run (%s): nothing is recommended; the plan's runs were too few or too short to trust: run it with more --replications or a longer run",
			ParamsText(best), bestWhy))
		res.Recommended = nil
		return nil
	}
	fallback.Runs, fallback.Requests = rb.Runs, rb.Requests
	res.Recommended, res.Robustness = fallbackAt, fallback
	res.Warnings = append(res.Warnings, fmt.Sprintf("robustness: the best point, %s, fails even at the plan's own load on fresh seeds and a longer run (%s): recommended instead the next best that holds, %s",
		ParamsText(best), bestWhy, ParamsText(fallbackAt)))
	if !fallback.Holds {
		res.Warnings = append(res.Warnings, "robustness: the recommendation "+fallback.Note)
	}
	return nil
}

// unchecked are the indexes of up to maxAlternatives feasible points
// after the recommended one, best objective first, that no check of this
// recommendation has run yet (checked, by ParamsText), each marked
// checked.
func unchecked(res *Result, o Objective, checked map[string]bool) []int {
	var out []int
	for _, i := range nextBest(res, o, len(res.Points)) {
		if key := ParamsText(res.Points[i].Params); !checked[key] && len(out) < maxAlternatives {
			checked[key] = true
			out = append(out, i)
		}
	}
	return out
}

// tiedThatHolds checks, when the recommendation did not hold, the
// feasible points that tie with it on the objective (within the plan's
// resolution: they are as good by the plan's own measure), in grid
// order, up to maxAlternatives: the first that holds at the full
// headroom is recommended instead, with a warning. It reports whether one
// did; every check's runs count into res.Robustness.
func tiedThatHolds(spec Spec, res *Result, headroom float64, checked map[string]bool) (bool, error) {
	at := slices.IndexFunc(res.Points, func(p Point) bool { return equalParams(p.Params, res.Recommended) })
	if at < 0 {
		return false, nil
	}
	var tied []int
	for i, p := range res.Points {
		if i != at && p.Feasible && ties(res.Points[at], p, spec.Objective) && len(tied) < maxAlternatives {
			checked[ParamsText(p.Params)] = true
			tied = append(tied, i)
		}
	}
	best, note := res.Recommended, strings.TrimPrefix(res.Robustness.Note, "the recommendation ")
	return firstThatHolds(spec, res, headroom, tied, true, func(p map[string]float64) string {
		return fmt.Sprintf("robustness: %s ties on the objective with %s but %s: recommended the tied %s, which holds",
			ParamsText(best), ParamsText(p), note, ParamsText(p))
	})
}

// nextThatHolds checks, when the recommendation holds at the plan's own
// load but not at the headroom, the next best feasible points not checked
// already (the tied ones), in objective order, up to maxAlternatives, at
// the full headroom alone
// (robustSeeds runs each): advice is followed blind, so the first that holds
// there is recommended instead, with a warning. It reports whether one
// did; every check's runs count into res.Robustness.
func nextThatHolds(spec Spec, res *Result, headroom float64, checked map[string]bool) (bool, error) {
	if headroom <= 0 || res.Robustness.Headroom <= 0 {
		return false, nil // no load to add: nothing else would hold more
	}
	best, note := res.Recommended, res.Robustness.Note
	return firstThatHolds(spec, res, headroom, unchecked(res, spec.Objective, checked), false, func(p map[string]float64) string {
		return fmt.Sprintf("robustness: the best point, %s, holds at the plan's own load but %s: recommended instead the next best that holds at %.0f%% more load, %s",
			ParamsText(best), note, 100*headroom, ParamsText(p))
	})
}

// firstThatHolds runs the robustness check on res's points at the
// indexes given, in order (with search, a point failing at the headroom
// is tried at smaller ones, for its note), and recommends the first that
// holds at the headroom, with the warning warn gives for it. It reports
// whether one did; every check's runs count into res.Robustness.
func firstThatHolds(spec Spec, res *Result, headroom float64, indexes []int, search bool, warn func(p map[string]float64) string) (bool, error) {
	rb := res.Robustness
	for _, i := range indexes {
		if err := restorePointLonger(spec, &res.Points[i]); err != nil {
			return false, err
		}
		trial := *res
		trial.Recommended = res.Points[i].Params
		alt, err := robust(spec, &trial, headroom, search)
		if err != nil {
			return false, err
		}
		alt.Runs, alt.Requests = alt.Runs+rb.Runs, alt.Requests+rb.Requests
		if alt.Holds {
			res.Warnings = append(res.Warnings, warn(trial.Recommended))
			res.Recommended, res.Robustness = trial.Recommended, alt
			return true, nil
		}
		rb.Runs, rb.Requests = alt.Runs, alt.Requests
	}
	res.Robustness = rb
	return false, nil
}

// refreshEdges replaces res's edge warnings with those of its
// recommendation now.
func refreshEdges(res *Result) {
	res.Warnings = slices.DeleteFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "edge: ") })
	res.Warnings = append(res.Warnings, edgeWarnings(res)...)
}

// failsAtOwnLoad reports whether a check failed even at the plan's own
// load (no headroom at all).
func failsAtOwnLoad(rb *Robustness) bool { return rb.failedOwn }

// nextBest are the indexes of up to n feasible points after the
// recommended one, best objective first (ties in grid order).
func nextBest(res *Result, o Objective, n int) []int {
	var idx []int
	for i, p := range res.Points {
		if p.Feasible && !equalParams(p.Params, res.Recommended) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return o.Better(objectiveValue(res.Points[idx[a]], o), objectiveValue(res.Points[idx[b]], o))
	})
	return idx[:min(n, len(idx))]
}
