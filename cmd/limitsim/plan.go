package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// sweep is one swept key and its values.
type sweep struct {
	key    string
	values []float64
}

// parseSweep reads KEY=from:to:step (points from + i×step, counted by
// index) or KEY=v1,v2,….
func parseSweep(s string) (sweep, error) {
	key, spec, ok := strings.Cut(s, "=")
	key, spec = strings.TrimSpace(key), strings.TrimSpace(spec)
	if !ok || key == "" || spec == "" {
		return sweep{}, fmt.Errorf("%q: want KEY=from:to:step or KEY=v1,v2,…", s)
	}
	sw := sweep{key: key}
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		var f [3]float64
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return sweep{}, fmt.Errorf("%s: %q is not a number", key, p)
			}
			f[i] = v
		}
		from, to, step := f[0], f[1], f[2]
		switch {
		case step <= 0:
			return sweep{}, fmt.Errorf("%s: the step must be positive, got %v", key, step)
		case to < from:
			return sweep{}, fmt.Errorf("%s: an empty range: %v is below %v", key, to, from)
		}
		n := math.Floor((to-from)/step*(1+1e-12)) + 1
		if n > maxSweepPoints {
			return sweep{}, fmt.Errorf("%s: %.3g points, over the limit of %d", key, n, maxSweepPoints)
		}
		for i := 0; i < int(n); i++ {
			sw.values = append(sw.values, from+float64(i)*step)
		}
		return sw, nil
	}
	for _, p := range strings.Split(spec, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return sweep{}, fmt.Errorf("%s: %q is not a number", key, p)
		}
		sw.values = append(sw.values, v)
	}
	return sw, nil
}

// maxSweepPoints bounds the points of one swept key.
const maxSweepPoints = 1_000_000

// sweepFlags collects repeated --sweep flags as written; they are parsed
// after the flags, so that a bad one is an invalid input (exit 2), like a
// bad [[sweep]] in a file.
type sweepFlags []string

func (s *sweepFlags) String() string { return fmt.Sprint(len(*s)) }

// Set records one KEY=SPEC.
func (s *sweepFlags) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// objective is what a plan optimises: a figure of the results or a swept
// key, to maximise or minimise.
type objective struct {
	maximise bool
	path     string
}

func parseObjective(s string) (objective, error) {
	dir, path, ok := strings.Cut(s, ":")
	if !ok || (dir != "max" && dir != "min") || path == "" {
		return objective{}, fmt.Errorf("%q: want max:PATH or min:PATH", s)
	}
	return objective{maximise: dir == "max", path: path}, nil
}

// planPoint is one point of the grid and what its run showed.
type planPoint struct {
	Index    int                `json:"index"` // in grid order, the last key varying fastest
	Params   map[string]float64 `json:"params"`
	Metrics  map[string]float64 `json:"metrics"`
	Feasible bool               `json:"feasible"`
	// Pareto: feasible, and no other feasible point is as good on the
	// objective and every constraint's metric and better on one.
	Pareto bool   `json:"pareto"`
	Error  string `json:"error,omitempty"`
	// badPath: the error is a path of the objective or a constraint that
	// names nothing in the point's results.
	badPath bool
}

// planResult is the output of `limitsim plan`.
type planResult struct {
	Scenario    string   `json:"scenario"`
	Keys        []string `json:"keys"` // the swept keys, in grid order
	Objective   string   `json:"objective"`
	Constraints []string `json:"constraints"`
	// Replications per point; with more than one, metrics carry PATH.ci95.
	Replications int                `json:"replications"`
	Points       []planPoint        `json:"points"`
	Recommended  map[string]float64 `json:"recommended"`
	// Closest names the constraint nearest to holding when no point
	// meets them all.
	Closest string `json:"closest,omitempty"`
	// Shard ("i/n") and GridPoints mark a partial result of --shard, which
	// holds only its own points and no recommendation; `limitsim merge`
	// joins the parts.
	Shard      string `json:"shard,omitempty"`
	GridPoints int    `json:"grid_points,omitempty"`
	// Fingerprint, in a part, is a digest of the scenario as run with the
	// plan's --set flags and of every swept key's values: parts merge only
	// when theirs agree.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// cmdPlan sweeps scenario keys over a grid, runs every point and
// recommends the best one that meets the constraints.
func cmdPlan(args []string, stdout, stderr io.Writer, interrupt *atomic.Bool) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sweepArgs sweepFlags
	fs.Var(&sweepArgs, "sweep", "sweep a numeric key: `KEY=from:to:step` or KEY=v1,v2,… (repeatable: a grid)")
	var sets overrides
	fs.Var(&sets, "set", "override a key at every point: `KEY=VALUE` (repeatable)")
	var cons assertions
	fs.Var(&cons, "constraint", "a point is feasible when `PATH OP VALUE` holds (repeatable)")
	obj := fs.String("objective", "max:goodput_rps", "what to optimise: `max:PATH` or min:PATH (PATH may be a swept key)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "points run at once; the output does not depend on it")
	reps := fs.Int("replications", 1, "runs per point (seeds seed, seed+1, …); constraints then hold on the 95% confidence bound")
	maxPoints := fs.Int("max-points", 10_000, "refuse grids with more points")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	outDir := fs.String("o", "", "write plan.json, plan.md, its charts and recommended.toml into this `directory`")
	shard := fs.String("shard", "", "run only points i, i+n, i+2n, …: `i/n` (an empty i reads JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it); merge the parts with `limitsim merge`")
	search := fs.String("search", "", "instead of a grid, bisect one key: `KEY=lo:hi[:tolerance]` for the largest (max:KEY) or smallest (min:KEY) value meeting the constraints")
	pos, err := parse(fs, args)
	var sws []sweep
	for _, a := range sweepArgs {
		sw, serr := parseSweep(a)
		if serr != nil {
			fmt.Fprintf(stderr, "limitsim plan: --sweep %v\n", serr)
			return exitInvalid
		}
		sws = append(sws, sw)
	}
	// Every load of the plan reads the scenario and its data files through
	// ld: read and parsed once, the same at every point.
	ld := scenarios.NewLoader()
	if err == nil && len(pos) == 1 && len(sws) == 0 && *search == "" {
		// No --sweep: the sweeps the scenario declares.
		sc, lerr := loadWith(ld, pos[0], sets)
		if lerr != nil {
			return loadError(stderr, lerr)
		}
		for _, s := range sc.Sweeps {
			sws = append(sws, sweep{key: s.Key, values: s.Points()})
		}
	}
	if err != nil || len(pos) != 1 || (len(sws) == 0) == (*search == "") {
		fmt.Fprintln(stderr, "usage: limitsim plan SCENARIO (--sweep KEY=SPEC [...] | --search KEY=lo:hi[:tol]) [--objective max:PATH|min:PATH] [--constraint EXPR ...] [--set KEY=VALUE ...] [--replications R] [--workers N] [--max-points N] [--json]")
		return exitUsage
	}
	if *workers < 1 {
		fmt.Fprintf(stderr, "limitsim plan: --workers must be at least 1, got %d\n", *workers)
		return exitUsage
	}
	seenKey := map[string]bool{}
	for _, sw := range sws {
		if seenKey[sw.key] {
			fmt.Fprintf(stderr, "limitsim plan: %s is swept twice: give its values in one sweep\n", sw.key)
			return exitUsage
		}
		seenKey[sw.key] = true
	}
	for _, o := range sets {
		if seenKey[o.Key] {
			fmt.Fprintf(stderr, "limitsim plan: --set %s: the key is swept, and the sweep sets it at every point\n", o)
			return exitUsage
		}
	}
	if *search != "" && *obj == "max:goodput_rps" {
		*obj = "max:" + strings.TrimSpace(strings.SplitN(*search, "=", 2)[0])
	}
	o, err := parseObjective(*obj)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim plan: --objective %v\n", err)
		return exitUsage
	}
	if *search != "" {
		return cmdSearch(stdout, stderr, ld, pos[0], *search, sets, o, cons, *reps, *workers, *asJSON, interrupt)
	}
	if !slices.ContainsFunc(sws, func(sw sweep) bool { return sw.key == o.path }) {
		if err := metrics.CheckPath(o.path); err != nil {
			fmt.Fprintf(stderr, "limitsim plan: --objective %v\n", err)
			return exitUsage
		}
	}
	points := 1.0
	for _, sw := range sws {
		points *= float64(len(sw.values))
	}
	if points > float64(*maxPoints) {
		fmt.Fprintf(stderr, "limitsim plan: the grid has %.4g points, over --max-points %d\n", points, *maxPoints)
		return exitInvalid
	}
	grid := enumerate(sws)
	// Validate the scenario at the first point before running anything.
	first, err := loadWith(ld, pos[0], append(copyOverrides(sets), pointOverrides(sws, grid[0])...))
	if err != nil {
		return loadError(stderr, err)
	}
	if *reps < 1 || *reps > 1000 {
		fmt.Fprintln(stderr, "limitsim plan: --replications must be between 1 and 1000")
		return exitUsage
	}
	part, parts, err := parseShard(*shard)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim plan: --shard: %v\n", err)
		return exitUsage
	}
	if *outDir != "" && parts == 1 {
		if err := checkOutputDir(*outDir, first, "recommended.toml"); err != nil {
			fmt.Fprintf(stderr, "limitsim plan: -o %s: %v\n", *outDir, err)
			return exitInvalid
		}
	}
	var fp string
	if parts > 1 {
		// At the grid's first point, which every part shares: the file
		// alone may not load (a key only the sweep gives).
		sc, err := loadWith(ld, pos[0], append(copyOverrides(sets), pointOverrides(sws, grid[0])...))
		if err == nil {
			fp, err = fingerprint(sc, sws)
		}
		if err != nil {
			return loadError(stderr, err)
		}
	}
	prog := startProgress(stderr, "plan", len(grid))
	ps := planSpec{ld: ld, scenario: pos[0], name: first.Name, sets: sets, sweeps: sws, obj: o, cons: cons, reps: *reps, prog: prog, part: part, parts: parts}
	// Points run on the workers; a plan of fewer points than workers runs
	// each point's replications on those left.
	ps.repWorkers = max(1, *workers/max(1, (len(grid)-part+parts-1)/parts))
	res := runPlan(ps, grid, max(1, *workers), interrupt)
	res.Fingerprint = fp
	prog.finish()
	if badPaths(res) {
		fmt.Fprintf(stderr, "limitsim plan: %s\n", res.Points[0].Error)
		return exitInvalid
	}
	if *outDir != "" && parts == 1 {
		if err := writePlanReport(*outDir, ld, pos[0], res, sets, o, cons); err != nil {
			fmt.Fprintf(stderr, "limitsim plan: -o %s: %v\n", *outDir, err)
			return exitInternal
		}
	}
	if *asJSON || parts > 1 { // a part is for `limitsim merge`: always JSON
		err = printJSON(stdout, res)
	} else {
		err = writePlan(stdout, res, sws)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}

func copyOverrides(o overrides) []scenarios.Override { return append([]scenarios.Override(nil), o...) }

// enumerate lists every point of the grid, the last key varying fastest.
func enumerate(sws []sweep) [][]float64 {
	grid := [][]float64{{}}
	for _, sw := range sws {
		var next [][]float64
		for _, p := range grid {
			for _, v := range sw.values {
				next = append(next, append(append([]float64(nil), p...), v))
			}
		}
		grid = next
	}
	return grid
}

func pointOverrides(sws []sweep, point []float64) []scenarios.Override {
	out := make([]scenarios.Override, len(sws))
	for i, sw := range sws {
		out[i] = scenarios.Override{Key: sw.key, Value: point[i]}
	}
	return out
}

// planSpec is what every point of a plan shares.
type planSpec struct {
	ld       *scenarios.Loader
	scenario string // the argument, to load
	name     string // the scenario's name, for the output
	sets     overrides
	sweeps   []sweep
	obj      objective
	cons     []metrics.Assertion
	reps     int
	// repWorkers is how many of a point's replications run at once: the
	// processors the points leave idle (a search runs one point at a time).
	repWorkers int
	prog       *progress // counts points done; may be nil
	// part of parts: run only the points whose index ≡ part (mod parts).
	part, parts int
}

// runPlan runs every point on workers goroutines; each point owns its
// engines and recorders and lands at its index, so the result does not
// depend on the number of workers.
func runPlan(ps planSpec, grid [][]float64, workers int, interrupt *atomic.Bool) *planResult {
	o := ps.obj
	res := &planResult{Scenario: ps.name, Objective: map[bool]string{true: "max:", false: "min:"}[o.maximise] + o.path,
		Constraints: []string{}, Replications: ps.reps}
	for _, sw := range ps.sweeps {
		res.Keys = append(res.Keys, sw.key)
	}
	for _, c := range ps.cons {
		res.Constraints = append(res.Constraints, c.Text)
	}
	parts := max(1, ps.parts)
	var mine []int
	for i := range grid {
		if i%parts == ps.part {
			mine = append(mine, i)
		}
	}
	res.Points = make([]planPoint, len(mine))
	par.Run(len(mine), workers, func(k int) bool {
		res.Points[k] = runPoint(ps, grid[mine[k]], interrupt)
		res.Points[k].Index = mine[k]
		if ps.prog != nil {
			ps.prog.step()
		}
		return false
	})
	if parts > 1 {
		res.Shard, res.GridPoints = fmt.Sprintf("%d/%d", ps.part, parts), len(grid)
		return res
	}
	recommend(res, o, ps.cons)
	return res
}

// markPareto marks the feasible points on the Pareto frontier of the
// objective and the constraints' metrics.
func markPareto(res *planResult, o objective, cons []metrics.Assertion) {
	better := []float64{-1}
	if o.maximise {
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
		v, ok := p.Params[o.path]
		if !ok {
			v = p.Metrics[o.path]
		}
		values[i] = []float64{v}
		for _, c := range cons {
			values[i] = append(values[i], p.Metrics[c.Path])
		}
		feasible[i] = p.Feasible
	}
	for i, on := range report.Pareto(values, better, feasible) {
		res.Points[i].Pareto = on
	}
}

// parseShard reads --shard i/n; an empty i is read from
// JOB_COMPLETION_INDEX. No shard is 0/1.
func parseShard(s string) (part, parts int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want i/n", s)
	}
	if is == "" {
		if is = os.Getenv("JOB_COMPLETION_INDEX"); is == "" {
			return 0, 0, fmt.Errorf("%q: no index, and JOB_COMPLETION_INDEX is not set", s)
		}
	}
	part, err1 := strconv.Atoi(is)
	parts, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || parts < 1 || part < 0 || part >= parts {
		return 0, 0, fmt.Errorf("%q: want 0 ≤ i < n", s)
	}
	return part, parts, nil
}

// runPoint runs one point of the grid, ps.reps times. A figure is the
// mean over the replications; with more than one, PATH.ci95 is its 95%
// confidence half-width and a constraint must hold on the bound on the
// far side of its threshold (the upper bound for <, the lower for >).
func runPoint(ps planSpec, point []float64, interrupt *atomic.Bool) planPoint {
	p := planPoint{Params: map[string]float64{}, Metrics: map[string]float64{}}
	for i, sw := range ps.sweeps {
		p.Params[sw.key] = point[i]
	}
	paths := []string{"goodput_rps", "offered_rps", "rate_429"}
	if _, swept := p.Params[ps.obj.path]; !swept {
		paths = append(paths, ps.obj.path)
	}
	for _, c := range ps.cons {
		paths = append(paths, c.Path)
	}
	values := map[string][]float64{}
	rs, errs := make([]*metrics.Results, ps.reps), make([]error, ps.reps)
	// The replications run at once on up to ps.repWorkers goroutines and
	// are read in order, as if one after another: the first that fails is
	// the point's error, and none after it starts.
	par.Run(ps.reps, ps.repWorkers, func(rep int) bool {
		rs[rep], errs[rep] = simulatePoint(ps.ld, ps.scenario, append(copyOverrides(ps.sets), pointOverrides(ps.sweeps, point)...), rep, interrupt)
		return errs[rep] != nil
	})
	for rep := range ps.reps {
		r, err := rs[rep], errs[rep]
		if err != nil {
			p.Error = err.Error()
			return p
		}
		for _, path := range paths {
			v, err := metrics.Lookup(r, path)
			if err != nil {
				p.Error, p.badPath = err.Error(), true
				return p
			}
			values[path] = append(values[path], v)
		}
	}
	for path, vs := range values {
		s := metrics.SpreadOf(vs)
		p.Metrics[path] = s.Mean
		if ps.reps > 1 {
			p.Metrics[path+".ci95"] = s.CI95
		}
	}
	p.Feasible = true
	for _, c := range ps.cons {
		v := p.Metrics[c.Path]
		switch c.Op {
		case "<", "<=":
			v += p.Metrics[c.Path+".ci95"]
		default:
			v -= p.Metrics[c.Path+".ci95"]
		}
		if holds, _, _ := c.CheckValue(v); !holds {
			p.Feasible = false
		}
	}
	return p
}

func simulatePoint(ld *scenarios.Loader, scenario string, ovs []scenarios.Override, rep int, interrupt *atomic.Bool) (*metrics.Results, error) {
	sc, err := loadWith(ld, scenario, ovs)
	if err != nil {
		return nil, err
	}
	cfg, err := sc.Build()
	if err != nil {
		return nil, err
	}
	out, err := client.RunReplication(cfg, rep, client.Options{Interrupt: interrupt, SeriesUnread: true})
	if err != nil {
		return nil, err
	}
	report.Analyze(out.Results, out.Series)
	if err := errors.Join(out.Series.Err(), out.Series.Close()); err != nil {
		return out.Results, err
	}
	if !out.Results.Complete {
		return out.Results, errors.New("the run stopped early: " + out.Results.Stop.Text)
	}
	if w, none := out.Results.NoSteadyState(); none { // its steady-state figures are empty: nothing to select on
		if rep > 0 {
			return out.Results, fmt.Errorf("no steady state in replication %d: %s", rep+1, w.Text)
		}
		return out.Results, errors.New("no steady state: " + w.Text)
	}
	return out.Results, nil
}

// recommend picks the feasible point with the best objective (ties go to
// the first in grid order), or names the constraint closest to holding.
func recommend(res *planResult, o objective, cons []metrics.Assertion) {
	markPareto(res, o, cons)
	best := -1
	var bestV float64
	for i, p := range res.Points {
		if !p.Feasible {
			continue
		}
		v, ok := p.Params[o.path]
		if !ok {
			v = p.Metrics[o.path]
		}
		if best < 0 || (o.maximise && v > bestV) || (!o.maximise && v < bestV) {
			best, bestV = i, v
		}
	}
	if best >= 0 {
		res.Recommended = res.Points[best].Params
		return
	}
	// No point is feasible: the constraint missed by the least, relative
	// to its threshold, at its best point.
	closest, miss := "", math.Inf(1)
	for _, c := range cons {
		for _, p := range res.Points {
			got, ok := p.Metrics[c.Path]
			if !ok {
				continue
			}
			if holds, _, _ := (metrics.Assertion{Path: c.Path, Op: c.Op, Value: c.Value}).CheckValue(got); holds {
				continue
			}
			m := math.Abs(got-c.Value) / math.Max(math.Abs(c.Value), 1e-12)
			if m < miss {
				closest, miss = fmt.Sprintf("%s (got %.4g at %s)", c.Text, got, paramsText(p.Params)), m
			}
		}
	}
	res.Closest = closest
}

func paramsText(ps map[string]float64) string {
	keys := make([]string, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, ps[k])
	}
	return strings.Join(parts, " ")
}

// writePlan prints every point, then the recommendation as --set flags.
func writePlan(w io.Writer, res *planResult, sws []sweep) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	var cols []string
	for _, sw := range sws {
		cols = append(cols, sw.key)
	}
	mcols := []string{"goodput_rps", "rate_429"}
	obj := strings.SplitN(res.Objective, ":", 2)[1]
	for _, c := range append([]string{obj}, constraintPaths(res)...) {
		if !contains(cols, c) && !contains(mcols, c) {
			mcols = append(mcols, c)
		}
	}
	fmt.Fprintln(tw, strings.Join(append(append(cols, mcols...), "feasible"), "\t")+"\t")
	for _, p := range res.Points {
		var row []string
		for _, c := range cols {
			row = append(row, strconv.FormatFloat(p.Params[c], 'g', -1, 64))
		}
		for _, c := range mcols {
			row = append(row, fmt.Sprintf("%.4g", p.Metrics[c]))
		}
		f := "yes"
		if !p.Feasible {
			f = "no"
			if p.Error != "" {
				f = "error: " + p.Error
			}
		}
		fmt.Fprintln(tw, strings.Join(append(row, f), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nobjective %s; constraints: %s\n", res.Objective, strings.Join(res.Constraints, ", "))
	if res.Recommended == nil {
		fmt.Fprintf(&b, "no point meets every constraint")
		if res.Closest != "" {
			fmt.Fprintf(&b, "; the closest to holding: %s", res.Closest)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("recommended:")
		keys := make([]string, 0, len(res.Recommended))
		for k := range res.Recommended {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " --set %s=%s", k, strconv.FormatFloat(res.Recommended[k], 'g', -1, 64))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func constraintPaths(res *planResult) []string {
	var out []string
	for _, c := range res.Constraints {
		if a, err := metrics.ParseAssertion(c); err == nil {
			out = append(out, a.Path)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// cmdSearch bisects one key between lo and hi for the largest (max:KEY)
// or smallest (min:KEY) value meeting the constraints, assuming they hold
// on one side of a threshold: more rate breaks a 429 constraint, more
// permits mend a wait constraint. Each step runs one point.
func cmdSearch(stdout, stderr io.Writer, ld *scenarios.Loader, scenario, spec string, sets overrides, o objective, cons []metrics.Assertion,
	reps, workers int, asJSON bool, interrupt *atomic.Bool) int {
	key, lo, hi, tol, err := parseSearch(spec)
	if err == nil && o.path != key {
		err = fmt.Errorf("the objective must be max:%s or min:%s", key, key)
	}
	if err == nil && len(cons) == 0 {
		err = errors.New("a search needs at least one --constraint")
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim plan: --search: %v\n", err)
		return exitUsage
	}
	sw := []sweep{{key: key}}
	first, err := loadWith(ld, scenario, append(copyOverrides(sets), pointOverrides(sw, []float64{lo})...))
	if err != nil {
		return loadError(stderr, err)
	}
	// One point at a time: its replications run on every worker.
	ps := planSpec{ld: ld, scenario: scenario, name: first.Name, sets: sets, sweeps: sw, obj: o, cons: cons, reps: max(1, reps), repWorkers: workers}
	res := &planResult{Scenario: ps.name, Keys: []string{key}, Objective: map[bool]string{true: "max:", false: "min:"}[o.maximise] + o.path,
		Constraints: []string{}, Replications: ps.reps}
	for _, c := range cons {
		res.Constraints = append(res.Constraints, c.Text)
	}
	feasible := func(v float64) bool {
		p := runPoint(ps, []float64{v}, interrupt)
		p.Index = len(res.Points)
		res.Points = append(res.Points, p)
		return p.Feasible
	}
	// good is a value known feasible, bad one known infeasible (or the
	// end of the range); the threshold lies between them.
	good, bad := lo, hi
	if !o.maximise {
		good, bad = hi, lo
	}
	switch {
	case !feasible(good):
		recommend(res, o, cons) // none feasible: names the closest constraint
	case feasible(bad):
		res.Recommended = map[string]float64{key: bad}
	default:
		for math.Abs(bad-good) > tol {
			mid := (good + bad) / 2
			if tol >= 1 && lo == math.Trunc(lo) && hi == math.Trunc(hi) {
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
		res.Recommended = map[string]float64{key: good}
	}
	if badPaths(res) {
		fmt.Fprintf(stderr, "limitsim plan: %s\n", res.Points[0].Error)
		return exitInvalid
	}
	if asJSON {
		err = printJSON(stdout, res)
	} else {
		err = writePlan(stdout, res, sw)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// parseSearch reads KEY=lo:hi[:tolerance]; the tolerance defaults to 1
// for whole bounds (an integer search) and to a 64th of the range otherwise.
func parseSearch(spec string) (key string, lo, hi, tol float64, err error) {
	key, rng, ok := strings.Cut(spec, "=")
	key = strings.TrimSpace(key)
	parts := strings.Split(rng, ":")
	if !ok || key == "" || len(parts) < 2 || len(parts) > 3 {
		return "", 0, 0, 0, fmt.Errorf("%q: want KEY=lo:hi[:tolerance]", spec)
	}
	var f [3]float64
	for i, p := range parts {
		if f[i], err = strconv.ParseFloat(strings.TrimSpace(p), 64); err != nil || math.IsNaN(f[i]) || math.IsInf(f[i], 0) {
			return "", 0, 0, 0, fmt.Errorf("%q: %q is not a number", spec, p)
		}
	}
	lo, hi = f[0], f[1]
	if !(hi > lo) {
		return "", 0, 0, 0, fmt.Errorf("%q: hi must be above lo", spec)
	}
	tol = (hi - lo) / 64
	if lo == math.Trunc(lo) && hi == math.Trunc(hi) {
		tol = 1
	}
	if len(parts) == 3 {
		if tol = f[2]; !(tol > 0) {
			return "", 0, 0, 0, fmt.Errorf("%q: the tolerance must be positive", spec)
		}
	}
	return key, lo, hi, tol, nil
}

// writePlanReport writes plan.json, plan.md with its charts, and the
// scenario (loaded from path) as configured at the recommended point
// (recommended.toml).
func writePlanReport(dir string, ld *scenarios.Loader, path string, res *planResult, sets overrides, o objective, cons []metrics.Assertion) (err error) {
	var written []string // so far: listed in the manifest if a later step fails
	defer func() {
		if err != nil {
			err = errors.Join(err, report.RecordWritten(dir, written))
		}
	}()
	if err := checkWritable(dir); err != nil {
		return err
	}
	if err := report.WriteFileAtomic(dir, "plan.json", func(w io.Writer) (int64, error) {
		return 0, printJSON(w, res)
	}); err != nil {
		return err
	}
	written = append(written, "plan.json")
	p := &report.Plan{Scenario: res.Scenario, Keys: res.Keys, Objective: res.Objective, Recommended: -1}
	paths := []metrics.Assertion{{Path: o.path}}
	if contains(res.Keys, o.path) {
		paths = nil // the objective is a swept key: an axis, not a metric
	}
	paths = append(paths, cons...)
	for _, a := range paths {
		m := report.PlanMetric{Path: a.Path, Op: a.Op, Threshold: a.Value}
		for _, pt := range res.Points {
			m.Values = append(m.Values, pt.Metrics[a.Path])
		}
		p.Metrics = append(p.Metrics, m)
	}
	for i, pt := range res.Points {
		vals := make([]float64, len(res.Keys))
		for k, key := range res.Keys {
			vals[k] = pt.Params[key]
		}
		p.Params = append(p.Params, vals)
		p.Feasible = append(p.Feasible, pt.Feasible)
		p.Pareto = append(p.Pareto, pt.Pareto)
		if res.Recommended != nil && equalParams(pt.Params, res.Recommended) {
			p.Recommended = i
		}
	}
	if err := report.DrawPlan(p); err != nil {
		return err
	}
	if err := p.WriteFilesNoting(dir, func(n string) { written = append(written, n) }); err != nil {
		return err
	}
	if res.Recommended == nil {
		// The plan's own scenario and data files stay where they are.
		var inputs []string
		if sc, err := loadWith(ld, path, copyOverrides(sets)); err == nil {
			inputs = inputsIn(dir, sc)
		} else if rel, rerr := filepath.Rel(dir, path); rerr == nil && filepath.IsLocal(rel) {
			inputs = []string{rel}
		}
		return report.PruneOutputs(dir, written, inputs, []string{"recommended.toml"})
	}
	ovs := copyOverrides(sets)
	for _, key := range res.Keys {
		ovs = append(ovs, scenarios.Override{Key: key, Value: res.Recommended[key]})
	}
	sc, err := loadWith(ld, path, ovs)
	if err != nil {
		return err
	}
	resolved, err := sc.Resolved()
	if err != nil {
		return err
	}
	if err := report.WriteFileAtomic(dir, "recommended.toml", func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, resolved)
		return int64(n), err
	}); err != nil {
		return err
	}
	written = append(written, "recommended.toml")
	data, kept, err := copyDataFiles(dir, sc, written)
	written = append(written, data...)
	if err != nil {
		return err
	}
	return report.PruneOutputs(dir, written, append(kept, inputsIn(dir, sc)...), []string{"recommended.toml"})
}

func equalParams(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// fingerprint is a digest of what a plan's points depend on beyond the
// fields its parts carry: the scenario as run with the plan's --set flags
// at the grid's first point (however its path is spelt, and whatever its
// comments or layout) and the values of every swept key.
func fingerprint(sc *scenarios.Scenario, sws []sweep) (string, error) {
	c := *sc
	c.Variants = nil // compare's alternatives, not the plan's
	text, err := c.Resolved()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	io.WriteString(h, text)
	for _, sw := range sws {
		fmt.Fprintf(h, "\x00%s", sw.key)
		for _, v := range sw.values {
			fmt.Fprintf(h, "\x00%s", strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// badPaths reports whether every point of res failed on a path of the
// objective or a constraint that names nothing in its results (an entry
// in brackets the scenario does not have): bad input, not a plan with no
// feasible point.
func badPaths(res *planResult) bool {
	return len(res.Points) > 0 && !slices.ContainsFunc(res.Points, func(p planPoint) bool { return !p.badPath })
}
