package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// sweepFlags collects repeated --sweep flags as written; they are parsed
// after the flags, so that a bad one is an invalid input (exit 2), like a
// bad [[sweep]] in a file.
type sweepFlags []string

func (s *sweepFlags) String() string { return fmt.Sprint(len(*s)) }

// Type names the flag's value in help.
func (s *sweepFlags) Type() string { return "KEY=SPEC" }

// Set records one KEY=SPEC.
func (s *sweepFlags) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// planOptions are the flags of `limitsim plan`.
type planOptions struct {
	args          []string // the command's, recorded in the lock of -o
	sweepArgs     sweepFlags
	sets          overrides
	cons          assertions
	objective     string
	workers       int
	reps          int
	maxPoints     int
	asJSON, quiet bool
	start         time.Time // when the plan began, for its wall time
	stderr        io.Writer
	outDir        string
	shard         string
	search        string
	allowFindings bool
	keepHorizon   bool
	// allReplications turns sequential replications off.
	allReplications bool
	headroom        string
	// refine runs a coarse grid and refines around its boundary.
	refine bool
	// resume is the folder of the plan --resume continues.
	resume string
	// uncertain is how many draws of the scenario's ranges each point
	// runs in (0: none, the ranges at their mids); uncertainShare the
	// share of them a recommended point must meet the constraints in.
	uncertain      int
	uncertainShare string
	// flagInputs are the texts of the flags that change a result, for
	// the plan's fingerprint (resultFlags).
	flagInputs map[string]string
	// journal holds the replications finished (with -o); session is
	// what the command shares with the signal handler.
	journal *planning.Journal
	session *session
	// fromMerged is a merged plan to go on from: a round of a sharded
	// refined plan, or (without refine) a sharded grid.
	fromMerged string
}

// newPlanCommand declares `limitsim plan`.
func newPlanCommand(env *environment) *cobra.Command {
	o := planOptions{args: env.args}
	cmd := &cobra.Command{
		Use:   "plan SCENARIO (--sweep KEY=SPEC... | --search KEY=lo:hi)",
		Short: "Sweep or search scenario keys and recommend a configuration",
		Long: `Sweep scenario keys over a grid (or bisect one with --search, or refine
around the feasibility boundary with --refine), run the points, and
recommend the configuration that best meets the objective under the
constraints. A point stops replicating once it is infeasible whatever its
later runs. The recommendation is checked at --headroom more load, on
fresh seeds and a longer run, before it is printed. Without --sweep or
--search, the scenario's own [[sweep]] blocks are swept. With -o DIR,
every replication is journaled in DIR as it finishes: a plan stopped
there, by a signal or killed, continues with 'limitsim plan --resume DIR'.`,
		Example:           "  limitsim plan seed-crawler --sweep client.limiter.bucket.rate=60:100:10 --objective max:goodput_rps --constraint 'rate_429<0.01'",
		Args:              resumeArgs(&o),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdResume(env, &o)
			}
			return cmdPlan(env, cmd, &o, args[0])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "plan.json, plan.md, plan.html, its charts, recommended.toml (a shard: part.json) and the journal --resume reads")
	addJSONFlag(fs, &o.asJSON, "the plan")
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "at every point")
	fs.Var(&o.sweepArgs, "sweep", "sweep a numeric key: `KEY=from:to:step` or KEY=v1,v2,… (repeatable: a grid)")
	fs.StringVar(&o.search, "search", "", "instead of a grid, bisect one key: `KEY=lo:hi[:tolerance]` for the largest (max:KEY) or smallest (min:KEY) value meeting the constraints")
	fs.Var(&o.cons, "constraint", "a point is feasible when `PATH OP VALUE` holds (repeatable)")
	fs.StringVar(&o.objective, "objective", "max:goodput_rps", "what to optimise: `max:PATH` or min:PATH (PATH may be a swept key)")
	fs.IntVar(&o.reps, "replications", 1, "runs per point at most (seeds seed, seed+1, …); constraints then hold on the 95% confidence bound, and a point stops early once it is infeasible whatever its later runs")
	fs.BoolVar(&o.allReplications, "all-replications", false, "run every replication of every point, even of one already decided infeasible (the recommendation is the same)")
	fs.BoolVar(&o.allowFindings, "allow-findings", false, "let a point whose runs have a critical finding (a deadlock, sustained 429s, memory growth, …) be feasible and recommended")
	fs.BoolVar(&o.keepHorizon, "keep-horizon", false, "refuse a point whose run is too short for its long-run state to show, instead of running it again on a longer run")
	fs.StringVar(&o.headroom, "headroom", "10%", "check the recommendation at this much more offered load (`PCT`), on fresh seeds and a run twice as long")
	fs.IntVar(&o.workers, "workers", runtime.GOMAXPROCS(0), "points run at once; the output does not depend on it")
	fs.IntVar(&o.maxPoints, "max-points", 10_000, "refuse grids with more points")
	fs.BoolVar(&o.refine, "refine", false, "run a coarse grid, then only the points around the feasibility boundary and the best feasible point, down to each sweep's step (not with --search); with --shard, one round at a time")
	fs.StringVar(&o.fromMerged, "from-merged", "", "go on from the shards' parts merged in `PLAN.json` (the output of 'limitsim merge'): with --refine, from its rounds (with --shard, this shard's part of the next round; without, every round left); without --refine, a merged grid: check its recommendation and write its outputs, running no point of it")
	fs.StringVar(&o.shard, "shard", "", "run only points i, i+n, i+2n, …: `i/n` (an empty i reads JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it); merge the parts with 'limitsim merge' (not with --search)")
	fs.IntVar(&o.uncertain, "uncertain", 0, "run every point in `N` draws of the scenario's ranges (the same draws for every point) and recommend the least worst regret among the points meeting the constraints in --uncertain-share of them (not with --search, --refine or --shard)")
	fs.StringVar(&o.uncertainShare, "uncertain-share", "95%", "with --uncertain, the least share of draws (`PCT`) in which a recommended point meets every constraint")
	fs.StringVar(&o.resume, "resume", "", "continue the plan stopped in this `directory` (its -o), running only the replications its journal lacks; alone, it runs the plan the folder records")
	return cmd
}

// cmdPlan sweeps scenario keys over a grid (or bisects one), runs every
// point and recommends the best one that meets the constraints.
func cmdPlan(env *environment, cmd *cobra.Command, o *planOptions, path string) error {
	o.start, o.stderr = time.Now(), env.stderr
	stdout, stderr, st := env.stdout, env.stderr, env.session
	o.session = st
	if o.resume != "" {
		if o.outDir != "" && filepath.Clean(o.outDir) != filepath.Clean(o.resume) {
			return usageError(cmd, "--resume %s continues the plan in %s: give no other -o", o.resume, o.resume)
		}
		o.outDir = o.resume
	}
	var sws []planning.Sweep
	for _, a := range o.sweepArgs {
		sw, serr := planning.ParseSweep(a)
		if serr != nil {
			return invalidInput(fmt.Errorf("limitsim plan: --sweep %w", serr))
		}
		sws = append(sws, sw)
	}
	// Every load of the plan reads the scenario and its data files through
	// one Loader: read and parsed once, the same at every point.
	src := planning.Source{Loader: scenarios.NewLoader(), Sets: o.sets}
	if len(sws) == 0 && o.search == "" {
		// No --sweep: the sweeps the scenario declares.
		src.Path = path
		sc, lerr := src.Load()
		if lerr != nil {
			return loadError(lerr)
		}
		for _, s := range sc.Sweeps {
			sws = append(sws, planning.Sweep{Key: s.Key, Values: s.Points(), Flag: "[[sweep]]"})
		}
	}
	switch {
	case len(sws) == 0 && o.search == "":
		return usageError(cmd, "give --sweep KEY=SPEC (or [[sweep]] blocks in the scenario) or --search KEY=lo:hi: the scenario declares no sweep")
	case len(sws) > 0 && o.search != "":
		return usageError(cmd, "give --sweep KEY=SPEC (or [[sweep]] blocks in the scenario) or --search KEY=lo:hi, not both")
	}
	src.Path = path
	spec, err := planSpec(o, src, sws)
	if err != nil {
		return err
	}
	spec.Interrupt = &st.interrupt
	o.flagInputs = resultFlags(cmd.Flags())
	switch {
	case o.refine && o.search != "":
		return usageError(cmd, "--refine refines a grid: a --search is already a bisection, give one or the other")
	case o.fromMerged != "" && o.search != "":
		return usageError(cmd, "--from-merged goes on from the merged parts of a grid: a --search is not sharded")
	case o.fromMerged != "" && !o.refine && o.shard != "":
		return usageError(cmd, "--from-merged without --refine finishes a merged grid, whose points all ran: no --shard")
	case o.uncertain < 0 || o.uncertain > maxDraws || (o.uncertain == 0 && cmd.Flags().Changed("uncertain")):
		return invalidInput(fmt.Errorf("limitsim plan: --uncertain takes a number of draws from 1 to %d, got %d", maxDraws, o.uncertain))
	case o.uncertain == 0 && cmd.Flags().Changed("uncertain-share"):
		return usageError(cmd, "--uncertain-share is the share of --uncertain's draws a point must meet the constraints in: give --uncertain N too")
	case o.uncertain > 0 && o.search != "":
		return usageError(cmd, "--uncertain weighs a grid's points over draws: a --search bisects one key on one scenario; sweep the key instead")
	case o.uncertain > 0 && o.refine:
		return usageError(cmd, "--uncertain cannot be refined: the feasibility boundary moves from draw to draw; run the full grid")
	case o.search != "" && o.shard != "":
		return usageError(cmd, "--shard splits a grid's points: a --search bisects one key, one run after another, and cannot be split; run it whole, or sweep the key and shard that")
	case o.uncertain > 0 && o.shard != "":
		return usageError(cmd, "--uncertain cannot be sharded: a point's regret needs every point's run in each draw; run the plan whole")
	}
	if share, serr := planning.ParseThreshold(o.uncertainShare); serr != nil || share <= 0 || share > 1 {
		return usageError(cmd, "--uncertain-share %q: want a share of draws above 0%% and at most 100%%, such as 95%%", o.uncertainShare)
	}
	if o.search != "" {
		return cmdSearch(o, spec, stdout, stderr, st)
	}
	return cmdGrid(o, spec, stdout, stderr, st)
}

// planSpec checks the flags shared by a grid and a search and makes the
// plan's spec from them.
func planSpec(o *planOptions, src planning.Source, sws []planning.Sweep) (planning.Spec, error) {
	spec := planning.Spec{Source: src, Sweeps: sws, Constraints: o.cons, AllowFindings: o.allowFindings, KeepHorizon: o.keepHorizon,
		Replications: o.reps, AllReplications: o.allReplications, Workers: o.workers}
	if o.workers < 1 {
		return spec, invalidInput(fmt.Errorf("limitsim plan: --workers must be at least 1, got %d", o.workers))
	}
	seenKey := map[string]bool{}
	for _, sw := range sws {
		if seenKey[sw.Key] {
			return spec, badUsage(fmt.Errorf("limitsim plan: %s is swept twice: give its values in one sweep", sw.Key))
		}
		seenKey[sw.Key] = true
	}
	for _, ov := range o.sets {
		if seenKey[ov.Key] {
			return spec, badUsage(fmt.Errorf("limitsim plan: --set %s: the key is swept, and the sweep sets it at every point", ov))
		}
	}
	if o.search != "" && o.objective == "max:goodput_rps" {
		o.objective = "max:" + strings.TrimSpace(strings.SplitN(o.search, "=", 2)[0])
	}
	if _, err := planning.ParseThreshold(o.headroom); err != nil {
		return spec, invalidInput(fmt.Errorf("limitsim plan: --headroom: %w", err))
	}
	obj, err := planning.ParseObjective(o.objective)
	if err != nil {
		return spec, badUsage(fmt.Errorf("limitsim plan: --objective %w", err))
	}
	spec.Objective = obj
	return spec, nil
}

// cmdGrid runs a plan's grid (or its shard of it) and prints it.
func cmdGrid(o *planOptions, spec planning.Spec, stdout, stderr io.Writer, st *session) error {
	sws := spec.Sweeps
	if !slices.ContainsFunc(sws, func(sw planning.Sweep) bool { return sw.Key == spec.Objective.Path }) {
		if err := metrics.CheckPath(spec.Objective.Path); err != nil {
			if isScenarioKey(spec.Objective.Path) {
				err = fmt.Errorf("%s: a scenario key is an objective only when it is swept: add --sweep %s=... (or --search it)", spec.Objective.Path, spec.Objective.Path)
			}
			return badUsage(fmt.Errorf("limitsim plan: --objective %w", err))
		}
	}
	if n := planning.GridSize(sws); n > float64(o.maxPoints) {
		return invalidInput(fmt.Errorf("limitsim plan: the grid has %.4g points, over --max-points %d", n, o.maxPoints))
	}
	grid := planning.Grid(sws)
	// Validate the scenario at the first point before running anything.
	first, err := spec.Source.Load(planning.PointOverrides(sws, grid[0])...)
	if err == nil {
		err = planning.CheckSweepValues(spec.Source, sws, grid[0])
	}
	if err != nil {
		return loadError(err)
	}
	if o.reps < 1 || o.reps > 1000 {
		return invalidInput(errors.New("limitsim plan: --replications must be between 1 and 1000"))
	}
	spec.Name = first.Name
	if spec.Part, spec.Parts, err = planning.ParseShard(o.shard, os.Getenv("JOB_COMPLETION_INDEX")); err != nil {
		return badUsage(fmt.Errorf("limitsim plan: --shard: %w", err))
	}
	if o.outDir != "" {
		unlock, err := holdPlanOutput(o, first)
		if err != nil {
			return err
		}
		defer unlock()
		shard := ""
		if spec.Parts > 1 {
			shard = fmt.Sprintf("%d/%d", spec.Part, spec.Parts)
		}
		if done, err := openPlanJournal(o, &spec, first, sws, shard); done || err != nil {
			return err
		}
	}
	var fp string
	if spec.Parts > 1 || o.fromMerged != "" {
		// At the grid's first point, which every part shares: the file
		// alone may not load (a key only the sweep gives).
		if fp, err = planning.Fingerprint(first, sws); err != nil {
			return loadError(err)
		}
	}
	run, runs, err := gridRunner(o, spec, first, grid, stderr)
	if err != nil {
		return err
	}
	var prog *progress
	if !o.quiet {
		prog = startProgress(stderr, "plan", runs)
		spec.Progress = prog.step
	}
	// Points run on the workers; a plan of fewer points than workers runs
	// each point's replications on those left.
	spec.ReplicationWorkers = max(1, o.workers/max(1, (runs-spec.Part+spec.Parts-1)/spec.Parts))
	res, err := runGrid(o, spec, grid, fp, run)
	if prog != nil {
		prog.finish()
	}
	if err != nil {
		return err
	}
	if spec.Parts > 1 {
		res.Fingerprint = fp
	}
	return finishPlan(o, spec, res, stdout, st)
}

// runGrid runs the plan's grid: refined, finished from its shards'
// merged points (--from-merged), or by run.
func runGrid(o *planOptions, spec planning.Spec, grid [][]float64, fp string, run func(planning.Spec, [][]float64) *planning.Result) (*planning.Result, error) {
	switch {
	case o.refine:
		return runRefined(o, spec, grid, fp)
	case o.fromMerged != "":
		return fromMergedGrid(o, spec, grid, fp)
	}
	return run(spec, grid), nil
}

// maxDraws bounds --uncertain.
const maxDraws = 10_000

// gridRunner is how the plan runs its grid when it is not refined
// (planning.Run, or RunUncertain over draws of the scenario's ranges) and
// how many point runs that makes, for the progress. Without --uncertain, each range of
// the scenario is noted on stderr: the plan runs it at its mid.
func gridRunner(o *planOptions, spec planning.Spec, first *scenarios.Scenario, grid [][]float64, stderr io.Writer) (func(planning.Spec, [][]float64) *planning.Result, int, error) {
	if o.uncertain == 0 {
		for _, r := range first.Ranges {
			fmt.Fprintf(stderr, "limitsim: %s is a range, %s: the plan runs its mid, %s (--uncertain N draws it)\n",
				r.Key, r, strconv.FormatFloat(r.Mid, 'g', -1, 64))
		}
		return planning.Run, len(grid), nil
	}
	if len(first.Ranges) == 0 {
		return nil, 0, invalidInput(errors.New("limitsim plan: --uncertain: the scenario has no range to draw (write a number as { low, mid, high } where it is uncertain; a swept or --set key is not one)"))
	}
	share, _ := planning.ParseThreshold(o.uncertainShare) // checked with the flags
	draws := planning.Draws(first.Ranges, first.Run.Seed, o.uncertain)
	if err := planning.CheckDraws(spec.Source, planning.PointOverrides(spec.Sweeps, grid[0]), draws); err != nil {
		return nil, 0, invalidInput(fmt.Errorf("limitsim plan: --uncertain: %w", err))
	}
	run := func(spec planning.Spec, grid [][]float64) *planning.Result {
		return planning.RunUncertain(spec, grid, first.Ranges, draws, share)
	}
	return run, len(grid) * len(draws), nil
}

// cmdSearch bisects one key and prints the plan it ran.
func cmdSearch(o *planOptions, spec planning.Spec, stdout, stderr io.Writer, st *session) error {
	b, err := planning.ParseBisection(o.search)
	if err != nil { // a value that cannot be used, as a --sweep's
		return invalidInput(fmt.Errorf("limitsim plan: --search: %w", err))
	}
	if spec.Objective.Path != b.Key {
		err = fmt.Errorf("the objective must be max:%s or min:%s", b.Key, b.Key)
	}
	if err == nil && len(spec.Constraints) == 0 {
		err = fmt.Errorf("a search needs at least one --constraint")
	}
	if err != nil {
		return badUsage(fmt.Errorf("limitsim plan: --search: %w", err))
	}
	first, err := spec.Source.Load(scenarios.Override{Key: b.Key, Value: b.Low, Flag: "--search"})
	if err == nil { // both ends, before anything runs
		_, err = spec.Source.Load(scenarios.Override{Key: b.Key, Value: b.High, Flag: "--search"})
	}
	if err != nil {
		return loadError(err)
	}
	// A key that refuses a value between whole numbers takes whole
	// numbers only.
	_, fractional := spec.Source.Load(scenarios.Override{Key: b.Key, Value: math.Min(b.Low+0.5, (b.Low+b.High)/2), Flag: "--search"})
	if err := b.KeyTakes(fractional != nil); err != nil {
		return badUsage(fmt.Errorf("limitsim plan: --search: %w", err))
	}
	if o.outDir != "" {
		unlock, err := holdPlanOutput(o, first)
		if err != nil {
			return err
		}
		defer unlock()
		if done, err := openPlanJournal(o, &spec, first, nil, ""); done || err != nil {
			return err
		}
	}
	// One point at a time: its replications run on every worker.
	spec.Name, spec.Replications, spec.ReplicationWorkers = first.Name, max(1, o.reps), o.workers
	res := planning.Search(spec, b)
	return finishPlan(o, spec, res, stdout, st)
}

// holdPlanOutput locks the plan's -o folder and checks it can take the
// plan's outputs, or says why it cannot.
func holdPlanOutput(o *planOptions, first *scenarios.Scenario) (func(), error) {
	unlock, err := holdOutputDir(o.outDir, "plan", o.args)
	if err != nil {
		return nil, err
	}
	if err := checkOutputDir(o.outDir, first, "recommended.toml"); err != nil {
		unlock()
		return nil, invalidInput(fmt.Errorf("limitsim plan: -o %s: %w", o.outDir, err))
	}
	return unlock, nil
}

// finishPlan writes a plan's report (-o) and prints it; a plan stopped
// before its end, which recommends nothing, ends in exit 130 (143 on
// SIGTERM).
func finishPlan(o *planOptions, spec planning.Spec, res *planning.Result, stdout io.Writer, st *session) error {
	if res.BadPaths() {
		return invalidInput(fmt.Errorf("limitsim plan: %s", res.Points[0].Error))
	}
	// A plan under uncertainty has weighed its recommendation over the
	// draws: its robustness is its share and regret.
	if res.Recommended != nil && spec.Parts <= 1 && res.Uncertain == nil {
		headroom, _ := planning.ParseThreshold(o.headroom) // checked with the flags
		err := planning.CheckRecommendation(spec, res, headroom)
		if errors.Is(err, planning.ErrInterrupted) {
			// Stopped before the recommendation was checked: nothing is
			// recommended, as for a plan stopped among its points.
			res.Complete, res.Robustness, err = false, nil, nil
			planning.Recommend(res, spec.Objective, spec.Constraints)
			res.Warnings = append(res.Warnings, "interrupted while checking the recommendation's robustness: nothing is recommended")
		}
		if err != nil {
			return invalidInput(fmt.Errorf("limitsim plan: --headroom: %w", err))
		}
	}
	// Tallied again with the robustness check's runs. The wall time is for
	// a person watching: a log or a notebook stays the same bytes.
	res.Tally(0)
	if !o.quiet && isTerminal(o.stderr) {
		fmt.Fprintf(o.stderr, "limitsim: the plan took %s of wall time\n", report.Seconds(math.Round(time.Since(o.start).Seconds()*10)/10))
	}
	if o.outDir != "" {
		write := writePlanReport
		if spec.Parts > 1 {
			write = writePartFile
		}
		if err := write(st.fsys, o.outDir, spec, res); err != nil {
			return outputsFailed("limitsim plan: -o "+o.outDir, o.outDir, err)
		}
		journalSummary(o)
	}
	var err error
	if o.asJSON || spec.Parts > 1 { // a part is for `limitsim merge`: always JSON
		err = printJSON(stdout, res)
	} else {
		err = writePlan(stdout, res, o.sets)
	}
	if err != nil {
		return internalError(err)
	}
	if !res.Complete {
		how := ""
		if o.outDir != "" {
			how = fmt.Sprintf("; '%s' continues it, running only what is missing", resumeCommand(o.outDir))
		}
		return st.stopped(fmt.Errorf("limitsim plan: interrupted after %d points; the plan is incomplete and recommends nothing%s", len(res.Points), how))
	}
	return nil
}

// isScenarioKey reports whether path names a scenario key (its first part
// a scenario table) rather than a figure of the results.
func isScenarioKey(path string) bool {
	table, _, _ := strings.Cut(path, ".")
	return slices.Contains([]string{"run", "workload", "client", "upstream", "quota"}, table)
}
