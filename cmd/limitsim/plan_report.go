package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// writePlan prints every point with its health (success ratio, requests
// that timed out or were refused, critical findings), then the
// recommendation as --set flags, followed by base: the plan's own --set
// overrides, without which the recommendation does not apply.
func writePlan(w io.Writer, res *planning.Result, base []scenarios.Override) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := res.Keys
	mcols := []string{"goodput_rps", "rate_429"}
	obj := strings.SplitN(res.Objective, ":", 2)[1]
	for _, c := range append([]string{obj}, constraintPaths(res)...) {
		if !contains(cols, c) && !contains(mcols, c) {
			mcols = append(mcols, c)
		}
	}
	head := append(append(append([]string{}, cols...), mcols...), "success", "timeouts", "rejected", "feasible")
	if res.Replications > 1 {
		head = append(head, "runs") // a point decided infeasible stops early
	}
	u := res.Uncertain
	if u != nil {
		head = append(head, "draws met", "worst regret")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	lengthened := false
	// A plan over draws judges a point by its share of draws, not by
	// its means: its rows name no missed constraint.
	var cons []metrics.Assertion
	if u == nil {
		cons = assertionsOf(res.Constraints)
	}
	for i, p := range res.Points {
		var row []string
		for _, c := range cols {
			row = append(row, strconv.FormatFloat(p.Params[c], 'g', -1, 64))
		}
		for _, c := range mcols {
			row = append(row, withInterval(p, c))
		}
		mark := "" // counts over a longer run than the other rows'
		if ranLonger(p) {
			mark, lengthened = report.LongerRunMark, true
		}
		row = append(row, report.Figure("success_ratio", p.Metrics["success_ratio"], math.NaN()),
			report.Figure("requests.timeouts", p.Metrics["requests.acquire_timeouts"]+p.Metrics["requests.timed_out"], math.NaN())+mark,
			report.Figure("requests.rejected", p.Metrics["requests.rejected"], math.NaN())+mark, feasibleText(p, res.AllowFindings || u != nil, cons))
		if res.Replications > 1 {
			row = append(row, strconv.Itoa(p.Runs))
		}
		if u != nil {
			row = append(row, uncertainCells(u, i)...)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeTableNotes(&b, res, lengthened)
	writeVerdict(&b, res, base)
	if line := res.Refined.Line(); line != "" {
		b.WriteString(line + "\n")
	}
	if line := res.Cost.CostLine(); line != "" {
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTableNotes writes what the table's figures are (counts over a
// longer run, means over draws or replications), the objective and
// constraints, and the warnings.
func writeTableNotes(b *strings.Builder, res *planning.Result, lengthened bool) {
	if lengthened {
		b.WriteString("\n" + report.LongerRunNote + "\n")
	}
	if u := res.Uncertain; u != nil {
		fmt.Fprintf(b, "\n%s\n", uncertainNote(u))
	} else if res.Replications > 1 {
		runs := fmt.Sprintf("%d replications", res.Replications)
		if slices.ContainsFunc(res.Points, func(p planning.Point) bool { return p.Error == "" && p.Runs < res.Replications }) {
			runs = fmt.Sprintf("at most %d replications; one decided infeasible stops early", res.Replications)
		}
		fmt.Fprintf(b, "\nmeans over each point's runs (%s) ± the 95%% confidence half-width; constraints hold on the far bound\n", runs)
	}
	consText := strings.Join(res.Constraints, ", ")
	if consText == "" {
		consText = "none"
	}
	fmt.Fprintf(b, "\nobjective %s; constraints: %s\n", res.Objective, consText)
	for _, w := range res.Warnings {
		fmt.Fprintf(b, "warning: %s\n", w)
	}
}

// writeVerdict writes what the plan recommends, or why it recommends
// nothing, with the robustness of its recommendation.
func writeVerdict(b *strings.Builder, res *planning.Result, base []scenarios.Override) {
	u := res.Uncertain
	switch {
	case res.Refined != nil && res.Refined.Pending > 0:
		// A merged round of a sharded refined plan: not stopped, waiting
		// for its next round.
		fmt.Fprintf(b, "merged: %d round(s) of the refined plan; nothing is recommended until its last round\n", res.Refined.Rounds)
	case !res.Complete:
		fmt.Fprintf(b, "INCOMPLETE: the plan was stopped after %d points; it recommends nothing\n", len(res.Points))
	case res.Recommended == nil && u != nil:
		share, at := u.BestShare(res.Points)
		fmt.Fprintf(b, "no point meets every constraint in %s of the %d draws", planning.ThresholdText(u.ShareRequired), len(u.Draws))
		if at != "" {
			fmt.Fprintf(b, "; the most met: %s at %s", planning.ShareText(share, len(u.Draws)), at)
		}
		b.WriteString("\n")
	case res.Recommended == nil && res.Robustness != nil:
		// Feasible points were found, and set aside by the robustness check.
		b.WriteString("nothing is recommended: the feasible points checked fail on fresh seeds even at the plan's own load (see the robustness warning)\n")
	case res.Recommended == nil:
		b.WriteString("no point meets every constraint")
		if res.Closest != "" {
			fmt.Fprintf(b, "; the closest to holding: %s", res.Closest)
		}
		b.WriteString("\n")
	default:
		b.WriteString("recommended: " + recommendedFlags(res, base) + "\n")
		if rb := res.Robustness; rb != nil && rb.Holds {
			fmt.Fprintf(b, "robustness: %s\n", rb.Note)
		}
	}
}

// recommendedFlags are the recommended point's swept keys as --set
// flags, then the plan's own overrides (base) that it was found with,
// each group in key order: pasted alone, the swept keys would run without
// what the plan held (an acquisition timeout, a horizon).
func recommendedFlags(res *planning.Result, base []scenarios.Override) string {
	keys := make([]string, 0, len(res.Recommended))
	for k := range res.Recommended {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	flags := make([]string, len(keys))
	for i, k := range keys {
		flags[i] = fmt.Sprintf("--set %s=%s", k, strconv.FormatFloat(res.Recommended[k], 'g', -1, 64))
	}
	own := map[string]any{}
	for _, o := range base {
		if _, swept := res.Recommended[o.Key]; !swept {
			own[o.Key] = o.Value
		}
	}
	if len(own) > 0 {
		flags = append(flags, report.SetFlags(own))
	}
	return strings.Join(flags, " ")
}

// uncertainCells are point i's share of draws met and worst regret ("-"
// when it met the constraints in none).
func uncertainCells(u *planning.Uncertain, i int) []string {
	up := u.Points[i]
	regret := "-"
	if up.MaxRegret != nil {
		regret = strconv.FormatFloat(*up.MaxRegret, 'g', 4, 64)
	}
	return []string{planning.ShareText(up.Share, len(u.Draws)), regret}
}

// uncertainNote says what a plan under uncertainty's table shows.
func uncertainNote(u *planning.Uncertain) string {
	keys := make([]string, len(u.Ranges))
	for i, r := range u.Ranges {
		keys[i] = r.Key
	}
	return fmt.Sprintf("each point ran in the same %d draws of %s; its figures are means over them; feasible: it meets every constraint in at least %s of them; "+
		"worst regret: the most its objective falls short of the best point's in a draw it meets them in; recommended: the least worst regret among the feasible",
		len(u.Draws), strings.Join(keys, ", "), planning.ThresholdText(u.ShareRequired))
}

// withInterval is a point's figure, with its 95% half-width when the plan
// ran replications.
func withInterval(p planning.Point, path string) string {
	if ci, ok := p.Metrics[path+".ci95"]; ok {
		return report.Figure(path, p.Metrics[path], ci)
	}
	return report.Figure(path, p.Metrics[path], math.NaN())
}

// feasibleText says whether a point is feasible, and why not: the
// constraints it misses (its figures are in the row), a horizon refused,
// its critical findings.
func feasibleText(p planning.Point, allowFindings bool, cons []metrics.Assertion) string {
	switch {
	case p.Error != "":
		return "error: " + p.Error
	case p.Feasible:
		return "yes"
	}
	why := planning.MissedConstraints(p, cons)
	if p.Horizon != nil && p.Horizon.Refused {
		why = append(why, fmt.Sprintf("needs a %.0fs steady window", p.Horizon.NeededS))
	}
	if len(p.Findings) > 0 && !allowFindings {
		why = append(why, strings.Join(p.Findings, ", "))
	}
	if len(why) == 0 {
		return "no"
	}
	return "no: " + strings.Join(why, "; ")
}

// assertionsOf are a plan's constraints as assertions.
func assertionsOf(texts []string) []metrics.Assertion {
	var out []metrics.Assertion
	for _, c := range texts {
		if a, err := metrics.ParseAssertion(c); err == nil {
			out = append(out, a)
		}
	}
	return out
}

func constraintPaths(res *planning.Result) []string {
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

// planDocument is the report of a plan: its metrics and health over the
// points, and why each point that is not feasible is not.
func planDocument(spec planning.Spec, res *planning.Result) *report.Plan {
	p := &report.Plan{Scenario: res.Scenario, Keys: res.Keys, Objective: res.Objective, Constraints: spec.Constraints,
		Recommended: -1, Replications: res.Replications, Closest: res.Closest, Incomplete: !res.Complete, Warnings: res.Warnings}
	if rb := res.Robustness; rb != nil {
		p.Robustness = rb.Note
	}
	p.Cost, p.Refined = res.Cost.CostLine(), res.Refined.Line()
	if res.Recommended != nil {
		p.Flags = recommendedFlags(res, spec.Source.Sets)
	}
	var paths []string
	if !contains(res.Keys, spec.Objective.Path) { // a swept key is an axis, not a metric
		paths = append(paths, spec.Objective.Path)
	}
	for _, c := range spec.Constraints {
		if !contains(paths, c.Path) {
			paths = append(paths, c.Path)
		}
	}
	for _, path := range paths {
		p.Metrics = append(p.Metrics, planMetric(res, path, path))
	}
	p.Health = []report.PlanMetric{planMetric(res, "success_ratio", "success_ratio"),
		planMetric(res, "timeouts", "requests.acquire_timeouts", "requests.timed_out"),
		planMetric(res, "rejected", "requests.rejected")}
	if u := res.Uncertain; u != nil {
		p.Uncertain = uncertainNote(u)
		met, regret := report.PlanMetric{Path: "draws_met"}, report.PlanMetric{Path: "worst_regret"}
		for _, up := range u.Points {
			met.Values = append(met.Values, up.Share)
			r := math.NaN()
			if up.MaxRegret != nil {
				r = *up.MaxRegret
			}
			regret.Values = append(regret.Values, r)
		}
		p.Health = append(p.Health, met, regret)
	}
	for i, pt := range res.Points {
		vals := make([]float64, len(res.Keys))
		for k, key := range res.Keys {
			vals[k] = pt.Params[key]
		}
		p.Params = append(p.Params, vals)
		p.Feasible = append(p.Feasible, pt.Feasible)
		p.Pareto = append(p.Pareto, pt.Pareto)
		p.Errors = append(p.Errors, pt.Error)
		p.Longer = append(p.Longer, ranLonger(pt))
		p.Runs = append(p.Runs, pt.Runs)
		why := whyNotFeasible(pt, spec, res.AllowFindings)
		if u := res.Uncertain; u != nil && !pt.Feasible && pt.Error == "" {
			why = fmt.Sprintf("meets the constraints in %s of the draws, needs %s", planning.ShareText(u.Points[i].Share, len(u.Draws)), planning.ThresholdText(u.ShareRequired))
		}
		p.Why = append(p.Why, why)
		if res.Recommended != nil && equalParams(pt.Params, res.Recommended) {
			p.Recommended = i
		}
	}
	return p
}

// ranLonger reports whether the plan ran pt on a longer run than the
// others, so its counts are not comparable with theirs.
func ranLonger(pt planning.Point) bool {
	return pt.Horizon != nil && pt.Horizon.Lengthened > 0
}

// planMetric is the sum of the figures at paths at every point, named
// name: NaN at a point whose run failed. With replications its half-width
// is the sum of theirs, a bound on the sum's own (the spread of a sum is
// at most the sum of the spreads).
func planMetric(res *planning.Result, name string, paths ...string) report.PlanMetric {
	m := report.PlanMetric{Path: name}
	for _, pt := range res.Points {
		v, ci := 0.0, 0.0
		for _, path := range paths {
			v += pt.Metrics[path]
			ci += pt.Metrics[path+".ci95"]
		}
		if pt.Error != "" {
			v = math.NaN()
		}
		m.Values = append(m.Values, v)
		if res.Replications > 1 {
			m.CI95 = append(m.CI95, ci)
		}
	}
	return m
}

// whyNotFeasible says why pt is not feasible beyond the constraints its
// figures miss (which the report reads from them): its critical findings,
// its horizon refused, or the run as given missing a constraint when the
// longer run met them all. It is "" for a feasible point or one that
// failed.
func whyNotFeasible(pt planning.Point, spec planning.Spec, allowFindings bool) string {
	if pt.Feasible || pt.Error != "" {
		return ""
	}
	var why []string
	if len(pt.Findings) > 0 && !allowFindings {
		why = append(why, "critical findings: "+strings.Join(pt.Findings, ", "))
	}
	h := pt.Horizon
	if h != nil && h.Refused {
		why = append(why, fmt.Sprintf("horizon refused: its long-run state needs a %s steady window (%s), the run has %s",
			seconds(h.NeededS), h.Why, seconds(h.WindowS)))
	}
	if len(why) == 0 && h != nil && h.Lengthened > 0 && holdsOnFarBound(pt, spec.Constraints) {
		why = append(why, fmt.Sprintf("the run as given misses a constraint (the run lengthened to %s meets them)", seconds(h.Lengthened)))
	}
	return strings.Join(why, "; ")
}

// holdsOnFarBound reports whether every constraint holds at pt on the
// bound of its confidence interval on the far side of its threshold.
func holdsOnFarBound(pt planning.Point, cons []metrics.Assertion) bool {
	for _, c := range cons {
		v := pt.Metrics[c.Path]
		if c.Op == "<" || c.Op == "<=" {
			v += pt.Metrics[c.Path+".ci95"]
		} else {
			v -= pt.Metrics[c.Path+".ci95"]
		}
		if ok, _, _ := c.CheckValue(v); !ok {
			return false
		}
	}
	return true
}

// seconds is a length of time for people: 2h46m40s, 90s, 0.5s.
func seconds(s float64) string {
	if s >= 1 && s < 1e9 {
		return time.Duration(math.Round(s) * float64(time.Second)).String()
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + "s"
}

// writePlanReport writes plan.json, plan.md and plan.html with their
// charts, and the scenario as configured at the recommended point
// (recommended.toml), into dir through file system fsys (nil: the
// operating system's). The folder carries the INCOMPLETE marker while it
// is written; a plan stopped before its end writes no recommended.toml
// (an earlier one is removed) and leaves the marker in place.
func writePlanReport(fsys report.FS, dir string, spec planning.Spec, res *planning.Result) (err error) {
	f := report.Folder{Dir: dir, FS: fsys}
	var written []string // so far: listed in the manifest if a later step fails
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Record(written))
		}
	}()
	if err := checkWritable(dir); err != nil {
		return err
	}
	note := incompleteNote
	if !res.Complete {
		note = "the plan was stopped before every point ran: plan.json holds the points that finished, and nothing is recommended\n"
	}
	if err := f.Mark(incompleteMarker, note); err != nil {
		return err
	}
	if err := f.WriteFile("plan.json", func(w io.Writer) (int64, error) {
		return 0, printJSON(w, res)
	}); err != nil {
		return err
	}
	written = append(written, "plan.json")
	p := planDocument(spec, res)
	if err := report.DrawPlan(p); err != nil {
		return err
	}
	if err := p.WriteFilesTo(f, func(n string) { written = append(written, n) }); err != nil {
		return err
	}
	if res.Recommended == nil {
		// The plan's own scenario and data files stay where they are.
		var inputs []string
		if sc, err := spec.Source.Load(); err == nil {
			inputs = inputsIn(dir, sc)
		} else if rel, rerr := filepath.Rel(dir, spec.Source.Path); rerr == nil && filepath.IsLocal(rel) {
			inputs = []string{rel}
		}
		if err := f.Prune(written, inputs, []string{"recommended.toml"}); err != nil {
			return err
		}
	} else if written, err = writeRecommended(f, spec, res, written); err != nil {
		return err
	}
	if !res.Complete {
		return nil
	}
	return f.Remove(incompleteMarker)
}

// writeRecommended writes recommended.toml and the data files it reads
// into folder f, and ends the folder's writing.
func writeRecommended(f report.Folder, spec planning.Spec, res *planning.Result, written []string) ([]string, error) {
	var ovs []scenarios.Override
	for _, key := range res.Keys {
		ovs = append(ovs, scenarios.Override{Key: key, Value: res.Recommended[key]})
	}
	sc, err := spec.Source.Load(ovs...)
	if err != nil {
		return written, err
	}
	resolved, err := sc.Resolved()
	if err != nil {
		return written, err
	}
	if err := f.WriteFile("recommended.toml", func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, resolved)
		return int64(n), err
	}); err != nil {
		return written, err
	}
	written = append(written, "recommended.toml")
	data, kept, err := copyDataFiles(f, sc, written)
	written = append(written, data...)
	if err != nil {
		return written, err
	}
	return written, f.Prune(written, append(kept, inputsIn(f.Dir, sc)...), []string{"recommended.toml"})
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

// writePartFile writes a shard's part, what it prints (--json), into dir
// as part.json for `limitsim merge`, through file system fsys (nil: the
// operating system's). The folder carries the INCOMPLETE marker while it
// is written, and keeps it when the shard was stopped before its end.
func writePartFile(fsys report.FS, dir string, spec planning.Spec, res *planning.Result) error {
	f := report.Folder{Dir: dir, FS: fsys}
	if err := checkWritable(dir); err != nil {
		return err
	}
	note := incompleteNote
	if !res.Complete {
		note = "the shard was stopped before every point ran: part.json holds the points that finished\n"
	}
	if err := f.Mark(incompleteMarker, note); err != nil {
		return err
	}
	if err := f.WriteFile("part.json", func(w io.Writer) (int64, error) {
		return 0, printJSON(w, res)
	}); err != nil {
		return err
	}
	var inputs []string // the plan's own scenario and data files stay where they are
	if sc, err := spec.Source.Load(); err == nil {
		inputs = inputsIn(dir, sc)
	}
	if err := f.Prune([]string{"part.json"}, inputs, nil); err != nil {
		return errors.Join(err, f.Record([]string{"part.json"}))
	}
	if !res.Complete {
		return nil
	}
	return f.Remove(incompleteMarker)
}
