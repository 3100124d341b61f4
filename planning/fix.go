package planning

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// DefaultFixMargin is the share of goodput a verified fix may cost: the
// article's safety margin (a rate at 0.9 of the quota) costs a tenth by
// itself, and the rest leaves room for a run's noise; a collapse never
// passes.
const DefaultFixMargin = 0.12

// Bounds of a fix's verification: candidates are tried in rounds, each
// extending the last round's with the fixes of the findings that remain
// or appear, and never more than maxFixRuns runs in all.
const (
	fixRounds     = 3
	maxFixRuns    = 16
	freshSeeds    = 2
	confirmRounds = 3
	// stressedSeeds of the fresh seeds run at DefaultHeadroom more
	// offered load on a run robustLonger times as long: the fix must hold
	// beyond the run it was found on, as a plan's recommendation must.
	stressedSeeds = 1
)

// FixOptions tune VerifyFix.
type FixOptions struct {
	// Margin is the share of goodput a fix may cost; 0 means
	// DefaultFixMargin.
	Margin float64
	// Replication is the replication the results are of: every candidate
	// runs on its seed, so that before and after see the same arrivals
	// and latencies.
	Replication int
	// Workers is how many candidates run at once.
	Workers int
	// Interrupt, when set, stops the verification (it then reports no
	// fix).
	Interrupt *atomic.Bool
	// runFresh, when set, stands in for a fresh run (runCandidateWith),
	// so that a test can make one fail.
	runFresh func(src Source, set map[string]any, extra []scenarios.Override, rep int, opt FixOptions) (*metrics.Results, error)
}

// candidate is one set of overrides tried as a fix, and what its run
// showed.
type candidate struct {
	set     map[string]any
	results *metrics.Results
	err     error
	// setAside says why a candidate that won was not kept: what it left
	// on a fresh seed.
	setAside string
}

// UnverifiedFix is the union of the critical diagnoses' overrides (then
// the warnings'), as --no-verify prints it: not run, so not known to help.
func UnverifiedFix(before *metrics.Results) *metrics.VerifiedFix {
	set := map[string]any{}
	for _, d := range before.Diagnoses {
		for k, v := range d.Fix.Set {
			if _, taken := set[k]; !taken {
				set[k] = v
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return &metrics.VerifiedFix{Status: "unverified", Set: set, Margin: DefaultFixMargin, Before: metrics.FiguresOf(before),
		Cleared: []string{}, Remaining: []string{},
		Note: "not verified (--no-verify): the diagnoses' overrides together, as they were found; applied, they may not clear the findings and may cost goodput"}
}

// InterruptedFix is UnverifiedFix for a verification a signal cut
// short: the same overrides, and a note that says so (nil when there are
// none).
func InterruptedFix(before *metrics.Results) *metrics.VerifiedFix {
	fix := UnverifiedFix(before)
	if fix != nil {
		fix.Note = metrics.InterruptedFixNote + "; the diagnoses' overrides together, unchecked"
	}
	return fix
}

// VerifyFix runs the diagnoses' fixes of before on the scenario src
// describes, on the same seed and horizon, and returns the set of
// overrides that clears the critical findings without introducing one
// and without losing more than the margin of goodput, or the best that
// helps, or none with the reason. It returns nil when no diagnosis has a
// fix to try. Each candidate owns its engine, so the result does not
// depend on opt.Workers. It returns nil too when opt.Interrupt stops it:
// a fix it returns was verified whole.
func VerifyFix(src Source, before *metrics.Results, opt FixOptions) *metrics.VerifiedFix {
	if opt.Margin <= 0 {
		opt.Margin = DefaultFixMargin
	}
	round := initialCandidates(before.Diagnoses)
	if len(round) == 0 {
		return nil
	}
	var tried []*candidate
	seen := map[string]bool{}
	// run runs the candidates not tried yet, within the bound, and
	// returns them; false once the verification is asked to stop.
	run := func(round []*candidate) ([]*candidate, bool) {
		var fresh []*candidate
		for _, c := range round {
			if k := setKey(c.set); !seen[k] && len(tried)+len(fresh) < maxFixRuns {
				seen[k] = true
				fresh = append(fresh, c)
			}
		}
		par.Run(len(fresh), opt.Workers, func(i int) bool {
			fresh[i].results, fresh[i].err = runCandidate(src, fresh[i].set, opt.Replication, opt)
			return false
		})
		tried = append(tried, fresh...)
		return fresh, !opt.interrupted()
	}
	for r := 0; r < fixRounds && len(round) > 0; r++ {
		fresh, ok := run(round)
		if !ok {
			return nil
		}
		round = extend(fresh)
	}
	return confirm(src, before, &tried, run, opt)
}

// confirm judges the candidates and runs the best on fresh seeds (the
// replications after the run's own). One that leaves a critical finding
// there is set aside, and the fixes of what it left are tried with it;
// the next best is judged, up to confirmRounds times.
func confirm(src Source, before *metrics.Results, tried *[]*candidate, run func([]*candidate) ([]*candidate, bool), opt FixOptions) *metrics.VerifiedFix {
	var fix *metrics.VerifiedFix
	var left []seedFindings
	freshRuns := 0
	for range confirmRounds {
		var best *candidate
		fix, best = judge(before, *tried, opt.Margin)
		if best == nil || fix.Status == "none" {
			return fix
		}
		v, next := freshCheck(src, best, fix.Cleared, before.Seed, opt)
		if opt.interrupted() {
			return nil
		}
		left = v.left
		for _, u := range v.unchecked {
			fix.Note += "; not checked on " + u
		}
		fix.Seeds = append([]uint64{before.Seed + uint64(opt.Replication)}, v.seeds...)
		freshRuns += 2 * (freshSeeds + stressedSeeds)
		fix.Runs = len(*tried) + freshRuns
		if len(left) == 0 && len(v.seeds) == 0 {
			// Held on the run's own seed, but no fresh run could be
			// compared: not verified beyond it.
			fix.Status = "partial"
			fix.Note += "; checked on no fresh seed, so only partly verified"
			return fix
		}
		if len(left) == 0 {
			for _, a := range v.also {
				fix.Note += fmt.Sprintf("; on %s it leaves %s, which the run without it has there too", a.where(), strings.Join(a.codes, ", "))
			}
			return fix
		}
		best.setAside = fmt.Sprintf("on %s it leaves %s", left[0].where(), strings.Join(left[0].codes, ", "))
		if next != nil {
			if _, ok := run([]*candidate{next}); !ok {
				return nil
			}
		}
	}
	// Every round's best left a finding on a fresh seed: the last is kept
	// as partial, with what it leaves there.
	fix.Status = "partial"
	for _, l := range left {
		for _, code := range l.codes {
			if !slices.Contains(fix.Remaining, code) {
				fix.Remaining = append(fix.Remaining, code)
			}
		}
	}
	fix.Note += fmt.Sprintf("; on %s it still leaves %s", left[0].where(), strings.Join(left[0].codes, ", "))
	return fix
}

// seedFindings are the critical findings a fix leaves on one seed, run
// as the scenario is or stressed (how says how: more load on a longer
// run).
type seedFindings struct {
	seed  uint64
	codes []string
	how   string
}

// where names the run: "seed 4", or "seed 4 at 10% more load on a run 2×
// as long", so that the note says how to reproduce it.
func (f seedFindings) where() string {
	if f.how != "" {
		return fmt.Sprintf("seed %d %s", f.seed, f.how)
	}
	return fmt.Sprintf("seed %d", f.seed)
}

// freshVerdict is what the fresh runs of a fix showed: the seeds it was
// checked on, what it leaves against the run without it on any (left),
// what it leaves that the run without it had there too (also: not its
// doing), and the runs that could not be compared (unchecked: a run that
// failed, for instance a doubled horizon past a limit).
type freshVerdict struct {
	seeds     []uint64
	left      []seedFindings
	also      []seedFindings
	unchecked []string
}

// freshCheck runs the scenario with and without c's set on freshSeeds
// seeds after the run's own, then on stressedSeeds more at more load on a
// longer run. On each, the fix must clear what it cleared on the run's
// seed (cleared) and introduce no critical finding the run without it did
// not have there. base is the seed of the run's replication 0. It returns the verdict and c extended by the fixes of
// what it leaves (nil when that adds nothing).
func freshCheck(src Source, c *candidate, cleared []string, base uint64, opt FixOptions) (freshVerdict, *candidate) {
	n := 2 * (freshSeeds + stressedSeeds)
	stress := stressOf(src)
	rs, errs := make([]*metrics.Results, n), make([]error, n)
	runFresh := opt.runFresh
	if runFresh == nil {
		runFresh = runCandidateWith
	}
	par.Run(n, opt.Workers, func(i int) bool {
		set := c.set
		if i%2 == 1 {
			set = nil // the run without the fix, on the same seed
		}
		var extra []scenarios.Override
		if i/2 >= freshSeeds {
			extra = stress.overrides
		}
		rs[i], errs[i] = runFresh(src, set, extra, opt.Replication+1+i/2, opt)
		return false
	})
	var v freshVerdict
	ext := c.set
	for k := 0; k < n; k += 2 {
		how := ""
		if k/2 >= freshSeeds {
			how = stress.how
		}
		if err := errors.Join(errs[k], errs[k+1]); err != nil {
			seed := seedFindings{seed: base + uint64(opt.Replication+1+k/2), how: how}
			v.unchecked = append(v.unchecked, fmt.Sprintf("%s (%v)", seed.where(), firstLine(err)))
			continue
		}
		v.seeds = append(v.seeds, rs[k].Seed)
		bad, had := splitFindings(rs[k], rs[k+1], cleared)
		if len(bad) > 0 {
			v.left = append(v.left, seedFindings{rs[k].Seed, bad, how})
			for _, d := range rs[k].Diagnoses {
				if slices.Contains(bad, d.Code) {
					ext = union(ext, d.Fix.Set)
				}
			}
		}
		if len(had) > 0 {
			v.also = append(v.also, seedFindings{rs[k].Seed, had, how})
		}
	}
	if len(ext) > len(c.set) {
		return v, &candidate{set: ext}
	}
	return v, nil
}

// splitFindings splits the critical findings of a fix's run (after) into
// those it is answerable for (bad: one it cleared on the run's seed, or
// one the run without it, before, does not have) and those before has too.
func splitFindings(after, before *metrics.Results, cleared []string) (bad, had []string) {
	was := metrics.FiguresOf(before).Critical
	for _, code := range metrics.FiguresOf(after).Critical {
		if slices.Contains(cleared, code) || !slices.Contains(was, code) {
			bad = append(bad, code)
		} else {
			had = append(had, code)
		}
	}
	return bad, had
}

// firstLine is err's message up to its first line break.
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// interrupted reports whether the verification was asked to stop.
func (opt FixOptions) interrupted() bool { return opt.Interrupt != nil && opt.Interrupt.Load() }

// stress is what a stressed fresh run adds to the scenario, and how a
// note names it.
type stress struct {
	overrides []scenarios.Override
	how       string
}

// stressOf is a stressed fresh run: DefaultHeadroom more offered load on
// a run robustLonger times as long. A trace's load is what it is: its
// stressed run is only longer, and says so.
func stressOf(src Source) stress {
	sc, err := src.Load()
	if err != nil {
		return stress{} // the candidates' own loads report it
	}
	var s stress
	longer := longerOverrides(sc)
	more, err := loadOverrides(sc, 1+DefaultHeadroom)
	switch {
	case err == nil && len(longer) > 0:
		s.how = fmt.Sprintf("at %.0f%% more load on a run %d× as long", 100*DefaultHeadroom, robustLonger)
	case err == nil:
		s.how = fmt.Sprintf("at %.0f%% more load", 100*DefaultHeadroom)
	case len(longer) > 0:
		s.how = fmt.Sprintf("on a run %d× as long at its own load (a trace's is not scaled)", robustLonger)
	}
	s.overrides = append(more, longer...)
	return s
}

// runCandidate runs the scenario with set applied, on the replication of
// the run being fixed. A run that stops early (a deadlock the fix did
// not clear) is still a result: its findings say so.
func runCandidate(src Source, set map[string]any, rep int, opt FixOptions) (*metrics.Results, error) {
	return runCandidateWith(src, set, nil, rep, opt)
}

// runCandidateWith is runCandidate with extra overrides after the set's.
func runCandidateWith(src Source, set map[string]any, extra []scenarios.Override, rep int, opt FixOptions) (*metrics.Results, error) {
	sc, err := src.Load(append(FixOverrides(set), extra...)...)
	if err != nil {
		return nil, err
	}
	cfg, err := sc.Build()
	if err != nil {
		return nil, err
	}
	out, err := client.RunReplication(cfg, rep, client.Options{Interrupt: opt.Interrupt, SeriesUnread: true})
	if err != nil {
		return nil, err
	}
	defer out.Series.Close()
	report.Analyze(out.Results, out.Series)
	if err := out.Series.Err(); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// FixOverrides are a fix's set as overrides, in key order.
func FixOverrides(set map[string]any) []scenarios.Override {
	keys := sortedKeys(set)
	out := make([]scenarios.Override, len(keys))
	for i, k := range keys {
		out[i] = scenarios.Override{Key: k, Value: set[k]}
	}
	return out
}

func sortedKeys(set map[string]any) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// setKey names a set of overrides whatever its map's order.
func setKey(set map[string]any) string {
	var b strings.Builder
	for _, k := range sortedKeys(set) {
		fmt.Fprintf(&b, "%s=%#v\x00", k, set[k])
	}
	return b.String()
}

// union is a with the keys of b it lacks: a's values win.
func union(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if _, taken := out[k]; !taken {
			out[k] = v
		}
	}
	return out
}

// initialCandidates are each diagnosis's fix alone, the critical
// diagnoses' fixes together and every fix together (critical ones first,
// so their values win where two set one key).
func initialCandidates(ds []metrics.Diagnosis) []*candidate {
	var out []*candidate
	critical, all := map[string]any{}, map[string]any{}
	for _, d := range ds {
		if len(d.Fix.Set) == 0 {
			continue
		}
		out = append(out, &candidate{set: union(d.Fix.Set, nil)})
		if d.Severity == "critical" {
			critical = union(critical, d.Fix.Set)
		}
		all = union(all, d.Fix.Set)
	}
	if len(critical) > 0 {
		out = append(out, &candidate{set: critical})
	}
	if len(all) > 0 {
		out = append(out, &candidate{set: all})
	}
	return out
}

// extend makes the next round: each candidate that left critical findings
// with fixes of their own, with those fixes added (its own values win).
func extend(round []*candidate) []*candidate {
	var out []*candidate
	for _, c := range round {
		if c.err != nil {
			continue
		}
		next := c.set
		for _, d := range c.results.Diagnoses {
			if d.Severity == "critical" && len(d.Fix.Set) > 0 {
				next = union(next, d.Fix.Set)
			}
		}
		if len(next) > len(c.set) {
			out = append(out, &candidate{set: next})
		}
	}
	return out
}
