package planning

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// Point is one point of a plan and what its runs showed.
type Point struct {
	Index    int                `json:"index"` // in grid order, the last key varying fastest
	Params   map[string]float64 `json:"params"`
	Metrics  map[string]float64 `json:"metrics"`
	Feasible bool               `json:"feasible"`
	// Pareto: feasible, and no other feasible point is as good on the
	// objective and every constraint's metric and better on one.
	Pareto bool `json:"pareto"`
	// Findings are the codes of the critical diagnoses of any of the
	// point's runs: a point with one is not feasible unless the plan
	// allows findings.
	Findings []string `json:"findings,omitempty"`
	// Horizon is set when the point's first run was too short for its
	// long-run state to show: the plan ran it again on a longer run, or
	// refused it (not feasible).
	Horizon *Horizon `json:"horizon,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Runs and Requests are what the point cost: its runs (its
	// replications, and again on a longer horizon) and the requests they
	// simulated.
	Runs     int   `json:"runs"`
	Requests int64 `json:"requests"`
	// BadPath: the error is a path of the objective or a constraint that
	// names nothing in the point's results.
	BadPath bool `json:"-"`
	// longer are the overrides of a lengthened horizon.
	longer []scenarios.Override
}

// Result is a plan: every point it ran and its recommendation. Its JSON
// form is plan.json.
type Result struct {
	Scenario string `json:"scenario"`
	// Complete is false when the plan was stopped (a signal) before every
	// point ran: it then recommends nothing.
	Complete    bool     `json:"complete"`
	Keys        []string `json:"keys"` // the swept keys, in grid order
	Objective   string   `json:"objective"`
	Constraints []string `json:"constraints"`
	// AllowFindings: points with critical findings may be recommended.
	AllowFindings bool `json:"allow_findings,omitempty"`
	// Replications per point; with more than one, metrics carry PATH.ci95.
	Replications int                `json:"replications"`
	Points       []Point            `json:"points"`
	Recommended  map[string]float64 `json:"recommended"`
	// Closest names the constraint nearest to holding when no point
	// meets them all.
	Closest string `json:"closest,omitempty"`
	// Robustness is how the recommendation held beyond the plan: more
	// load, fresh seeds, a longer run.
	Robustness *Robustness `json:"robustness,omitempty"`
	// Warnings are the plan's notes on its points and recommendation:
	// horizons lengthened or refused, a recommendation at the edge of a
	// swept range, how it held on more load and fresh seeds.
	Warnings []string `json:"warnings,omitempty"`
	// Shard ("i/n") and GridPoints mark a partial result of a sharded
	// plan, which holds only its own points and no recommendation; Merge
	// joins the parts.
	Shard      string `json:"shard,omitempty"`
	GridPoints int    `json:"grid_points,omitempty"`
	// Fingerprint, in a part, is a digest of the scenario as run with the
	// plan's overrides and of every swept key's values: parts merge only
	// when theirs agree.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Refined, for a plan run with refinement (RunRefined), is how many of
	// the grid's points it ran, in how many rounds.
	Refined *Refined `json:"refined,omitempty"`
	// Cost is what the plan spent beside what an exhaustive plan would
	// have (Tally).
	Cost *Cost `json:"cost,omitempty"`
	// Uncertain, for a plan run over draws of the scenario's ranges
	// (RunUncertain), is each point's outcome in each draw, its share of
	// draws meeting the constraints and its worst regret.
	Uncertain *Uncertain `json:"uncertain,omitempty"`
}

// Spec is what every point of a plan shares.
type Spec struct {
	Source Source
	// Name is the scenario's name, for the output.
	Name        string
	Sweeps      []Sweep
	Objective   Objective
	Constraints []metrics.Assertion
	// AllowFindings lets a point with a critical finding be feasible.
	AllowFindings bool
	// KeepHorizon refuses a point whose run is too short for its long-run
	// state instead of running it again on a longer run.
	KeepHorizon bool
	// Replications per point (at least 1): seeds seed, seed+1, ….
	Replications int
	// AllReplications runs every replication of every point; otherwise a
	// point decided infeasible stops early (runSequential).
	AllReplications bool
	// Workers is how many points run at once; ReplicationWorkers how many
	// of one point's replications do. Neither changes the result.
	Workers, ReplicationWorkers int
	// Part of Parts: run only the points whose index ≡ Part (mod Parts).
	Part, Parts int
	// Progress, when set, is called as each point finishes.
	Progress func()
	// Interrupt, when set, stops the plan at the next event boundary.
	Interrupt *atomic.Bool
}

// newResult is the empty result of a plan of spec.
func newResult(spec Spec) *Result {
	res := &Result{Scenario: spec.Name, Complete: true, Objective: spec.Objective.String(), Constraints: []string{},
		AllowFindings: spec.AllowFindings, Replications: max(1, spec.Replications)}
	for _, sw := range spec.Sweeps {
		res.Keys = append(res.Keys, sw.Key)
	}
	for _, c := range spec.Constraints {
		res.Constraints = append(res.Constraints, c.Text)
	}
	return res
}

// interrupted reports whether spec's interrupt has been raised.
func (spec Spec) interrupted() bool { return spec.Interrupt != nil && spec.Interrupt.Load() }

// Run runs every point of grid (of spec's part) on spec.Workers
// goroutines; each point owns its engines and recorders and lands at its
// index, so the result does not depend on the number of workers. A plan
// interrupted before its end keeps the points that finished, is marked
// incomplete and recommends nothing.
func Run(spec Spec, grid [][]float64) *Result {
	res := newResult(spec)
	parts := max(1, spec.Parts)
	var mine []int
	for i := range grid {
		if i%parts == spec.Part {
			mine = append(mine, i)
		}
	}
	points := make([]Point, len(mine))
	done := make([]bool, len(mine))
	par.Run(len(mine), spec.Workers, func(k int) bool {
		points[k] = runPoint(spec, grid[mine[k]])
		points[k].Index = mine[k]
		// A point run while the plan was being stopped may have been cut
		// short: it is left out, as is every point after it.
		done[k] = !spec.interrupted()
		if spec.Progress != nil {
			spec.Progress()
		}
		return !done[k]
	})
	res.Points = []Point{}
	for k, p := range points {
		if done[k] {
			res.Points = append(res.Points, p)
		}
	}
	if len(res.Points) < len(mine) {
		res.Complete = false
	}
	res.Warnings = horizonWarnings(res.Points)
	if parts > 1 {
		res.Shard, res.GridPoints = fmt.Sprintf("%d/%d", spec.Part, parts), len(grid)
		res.Tally(len(mine))
		return res
	}
	Recommend(res, spec.Objective, spec.Constraints)
	res.Warnings = append(res.Warnings, edgeWarnings(res)...)
	res.Tally(len(grid))
	return res
}

// healthPaths are the figures every point reports beside its objective
// and constraints: whether the configuration serves its requests.
var healthPaths = []string{"goodput_rps", "offered_rps", "rate_429", "success_ratio",
	"requests.acquire_timeouts", "requests.timed_out", "requests.rejected"}

// runPoint runs one point spec.Replications times. A figure is the mean
// over the replications; with more than one, PATH.ci95 is its 95%
// confidence half-width and a constraint must hold on the bound on the
// far side of its threshold (the upper bound for <, the lower for >). A
// point whose first run was too short for its long-run state to show
// (HorizonOf) runs again on a run long enough, or is refused.
func runPoint(spec Spec, point []float64) Point { return runPointWith(spec, point, nil) }

// runPointWith is runPoint with the overrides extra applied after the
// point's own (a draw of the scenario's ranges).
func runPointWith(spec Spec, point []float64, extra []scenarios.Override) Point {
	p := Point{Params: map[string]float64{}, Metrics: map[string]float64{}}
	for i, sw := range spec.Sweeps {
		p.Params[sw.Key] = point[i]
	}
	overrides := append(PointOverrides(spec.Sweeps, point), extra...)
	rs, err := replicate(spec, p.Params, overrides)
	p.tally(rs)
	var first *Point // the run as given, when the point ran again longer
	if err == nil {
		if sc, lerr := spec.Source.Load(overrides...); lerr == nil {
			if h := HorizonOf(sc, rs[0]); h.Short() {
				longer, to, ok := lengthened(sc, rs[0], &h)
				if h.Refused = !ok || spec.KeepHorizon; !h.Refused {
					first = &Point{Params: p.Params, Metrics: map[string]float64{}}
					if err = first.measure(spec, rs); err != nil {
						p.Error, p.BadPath = err.Error(), true
						return p
					}
					h.Lengthened, p.longer = to, longer
					rs, err = replicate(spec, p.Params, append(overrides, longer...))
					p.tally(rs)
				}
				p.Horizon = &h
			}
		}
	}
	if err == nil {
		err = p.measure(spec, rs)
		p.BadPath = err != nil
	}
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.Feasible = holds(p, spec.Constraints) && (p.Horizon == nil || !p.Horizon.Refused)
	if first != nil {
		// The run as given must hold too: a schedule or a ramp shows there
		// with its full weight.
		p.Feasible = p.Feasible && holds(*first, spec.Constraints)
		for _, code := range first.Findings {
			if !slices.Contains(p.Findings, code) {
				p.Findings = append(p.Findings, code)
			}
		}
		sort.Strings(p.Findings)
	}
	p.Feasible = p.Feasible && (spec.AllowFindings || len(p.Findings) == 0)
	return p
}

// replicate runs a point's replications: every one, or in turn until the
// point is decided infeasible (runSequential).
func replicate(spec Spec, params map[string]float64, overrides []scenarios.Override) ([]*metrics.Results, error) {
	if spec.AllReplications || spec.Replications <= 1 {
		return runReplications(spec, overrides)
	}
	return runSequential(spec, params, overrides)
}

// runReplications runs the point's replications at once and reads them
// in order, as if one after another: the first that fails is the point's
// error, and none after it starts. With the error it returns the runs
// that ran up to it, for the point's cost.
func runReplications(spec Spec, overrides []scenarios.Override) ([]*metrics.Results, error) {
	reps := max(1, spec.Replications)
	rs, errs := make([]*metrics.Results, reps), make([]error, reps)
	par.Run(reps, spec.ReplicationWorkers, func(rep int) bool {
		rs[rep], errs[rep] = spec.Source.Simulate(overrides, rep, spec.Interrupt)
		return errs[rep] != nil
	})
	for i, err := range errs {
		if err != nil {
			return ran(rs[:i+1]), err
		}
	}
	return rs, nil
}

// ran are the results among rs of runs that ran (those before a failure
// in seed order, and the failed one when it ran, stopped early): what a
// point's cost counts, the same whatever the number of workers.
func ran(rs []*metrics.Results) []*metrics.Results {
	return slices.DeleteFunc(slices.Clone(rs), func(r *metrics.Results) bool { return r == nil })
}

// measure reads the point's figures (health, objective, constraints) from
// its replications, and the codes of their critical findings.
func (p *Point) measure(spec Spec, rs []*metrics.Results) error {
	paths := slices.Clone(healthPaths)
	if _, swept := p.Params[spec.Objective.Path]; !swept {
		paths = append(paths, spec.Objective.Path)
	}
	for _, c := range spec.Constraints {
		paths = append(paths, c.Path)
	}
	values := map[string][]float64{}
	findings := map[string]bool{}
	for rep, r := range rs {
		for _, path := range paths {
			if len(values[path]) > rep {
				continue // a path named twice
			}
			v, err := metrics.Lookup(r, path)
			if err != nil {
				return err
			}
			values[path] = append(values[path], v)
		}
		for _, d := range r.Diagnoses {
			if d.Severity == "critical" {
				findings[d.Code] = true
			}
		}
	}
	for path, vs := range values {
		s := metrics.SpreadOf(vs)
		p.Metrics[path] = s.Mean
		if len(rs) > 1 {
			p.Metrics[path+".ci95"] = s.CI95
		}
	}
	for code := range findings {
		p.Findings = append(p.Findings, code)
	}
	sort.Strings(p.Findings)
	return nil
}

// holds reports whether every constraint holds at p on its far bound.
func holds(p Point, cons []metrics.Assertion) bool {
	for _, c := range cons {
		v := p.Metrics[c.Path]
		switch c.Op {
		case "<", "<=":
			v += p.Metrics[c.Path+".ci95"]
		default:
			v -= p.Metrics[c.Path+".ci95"]
		}
		if ok, _, _ := c.CheckValue(v); !ok {
			return false
		}
	}
	return true
}

// MissedConstraints are the texts of the constraints p misses on their
// far bound, in order.
func MissedConstraints(p Point, cons []metrics.Assertion) []string {
	var out []string
	for _, c := range cons {
		if !holds(p, []metrics.Assertion{c}) {
			out = append(out, c.Text)
		}
	}
	return out
}

// objectiveValue is the objective's value at p: a swept key's value or a
// figure's mean.
func objectiveValue(p Point, o Objective) float64 {
	if v, ok := p.Params[o.Path]; ok {
		return v
	}
	return p.Metrics[o.Path]
}

// Recommend marks the Pareto front and picks the feasible point with the
// best objective (ties go to the first in grid order), or names the
// constraint closest to holding. An incomplete plan recommends nothing.
func Recommend(res *Result, o Objective, cons []metrics.Assertion) {
	markPareto(res, o, cons)
	res.Recommended, res.Closest = nil, ""
	if !res.Complete {
		return
	}
	best := -1
	var bestV float64
	for i, p := range res.Points {
		if !p.Feasible {
			continue
		}
		if v := objectiveValue(p, o); best < 0 || o.Better(v, bestV) {
			best, bestV = i, v
		}
	}
	if best >= 0 {
		res.Recommended = res.Points[best].Params
		return
	}
	res.Closest = whyInfeasible(res.Points, cons, res.AllowFindings)
}

// whyInfeasible says why no point of a plan is feasible: a point that meets
// every constraint on its figures and was left out for another reason
// (its critical findings, its horizon) is named with that reason, the
// first in grid order; otherwise the constraint closest to holding.
func whyInfeasible(points []Point, cons []metrics.Assertion, allowFindings bool) string {
	for _, p := range points {
		if p.Error == "" && !p.Feasible && holds(p, cons) {
			return blockedBy(p, allowFindings)
		}
	}
	return closest(points, cons)
}

// blockedBy is why p, which meets every constraint on its figures, is not
// feasible: a refused horizon, its critical findings (unless allowed), or
// else its run as given, which missed a constraint.
func blockedBy(p Point, allowFindings bool) string {
	at := ParamsText(p.Params)
	switch {
	case p.Horizon != nil && p.Horizon.Refused:
		return at + " meets every constraint, but its run is too short for its long-run state to show and --keep-horizon refuses a longer one"
	case len(p.Findings) > 0 && !allowFindings:
		return fmt.Sprintf("%s meets every constraint but has critical findings (%s); --allow-findings recommends it", at, strings.Join(p.Findings, ", "))
	}
	return at + " meets every constraint on the longer run its horizon needs, not on the run as given"
}

// closest names the constraint missed by the least, relative to its
// threshold, at its best point.
func closest(points []Point, cons []metrics.Assertion) string {
	out, miss := "", math.Inf(1)
	for _, c := range cons {
		for _, p := range points {
			got, ok := p.Metrics[c.Path]
			if !ok {
				continue
			}
			if holds, _, _ := (metrics.Assertion{Path: c.Path, Op: c.Op, Value: c.Value}).CheckValue(got); holds {
				continue
			}
			m := math.Abs(got-c.Value) / math.Max(math.Abs(c.Value), 1e-12)
			if m < miss {
				out, miss = fmt.Sprintf("%s (got %s at %s)", c.Text, report.Number(got, 4), ParamsText(p.Params)), m
			}
		}
	}
	return out
}

// markPareto marks the feasible points on the Pareto frontier of the
// objective and the constraints' metrics.
func markPareto(res *Result, o Objective, cons []metrics.Assertion) {
	better := []float64{-1}
	if o.Maximise {
		better[0] = 1
	}
	for _, c := range cons {
		if c.Op == "<" || c.Op == "<=" {
			better = append(better, -1)
		} else {
			better = append(better, 1)
		}
	}
	values := make([][]float64, len(res.Points))
	feasible := make([]bool, len(res.Points))
	for i, p := range res.Points {
		values[i] = []float64{objectiveValue(p, o)}
		for _, c := range cons {
			values[i] = append(values[i], p.Metrics[c.Path])
		}
		feasible[i] = p.Feasible
	}
	for i, on := range Pareto(values, better, feasible) {
		res.Points[i].Pareto = on
	}
}

// ParamsText is params as KEY=VALUE pairs in key order.
func ParamsText(params map[string]float64) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%s", k, strconv.FormatFloat(params[k], 'g', -1, 64))
	}
	return strings.Join(parts, " ")
}

// ParseShard reads i/n; an empty i is index (a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX). No shard ("") is 0/1.
func ParseShard(s, index string) (part, parts int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want i/n", s)
	}
	from := ""
	if is == "" {
		if is = index; is == "" {
			return 0, 0, fmt.Errorf("%q: no index, and JOB_COMPLETION_INDEX is not set", s)
		}
		from = fmt.Sprintf(" (i from JOB_COMPLETION_INDEX=%q)", index)
	}
	part, err1 := strconv.Atoi(is)
	parts, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || parts < 1 || part < 0 || part >= parts {
		return 0, 0, fmt.Errorf("%q%s: want i/n, whole numbers with 0 ≤ i < n", s, from)
	}
	return part, parts, nil
}

// Fingerprint is a digest of what a plan's points depend on beyond the
// fields its parts carry: the scenario as run with the plan's overrides
// at the grid's first point (however its path is spelt, and whatever its
// comments or layout) and the values of every swept key.
func Fingerprint(sc *scenarios.Scenario, sweeps []Sweep) (string, error) {
	c := *sc
	c.Variants = nil // compare's alternatives, not the plan's
	text, err := c.Resolved()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	io.WriteString(h, text)
	for _, sw := range sweeps {
		fmt.Fprintf(h, "\x00%s", sw.Key)
		for _, v := range sw.Values {
			fmt.Fprintf(h, "\x00%s", strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// BadPaths reports whether every point of res failed on a path of the
// objective or a constraint that names nothing in its results (an entry
// in brackets the scenario does not have): bad input, not a plan with no
// feasible point.
func (res *Result) BadPaths() bool {
	return len(res.Points) > 0 && !slices.ContainsFunc(res.Points, func(p Point) bool { return !p.BadPath })
}
