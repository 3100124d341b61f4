package planning

import (
	"fmt"
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
// article's safety margin (a rate at 0.9 of the quota) costs up to about a
// tenth; a collapse never passes.
const DefaultFixMargin = 0.1

// Bounds of a fix's verification: candidates are tried in rounds, each
// extending the last round's with the fixes of the findings that remain
// or appear, and never more than maxFixRuns runs in all.
const (
	fixRounds  = 3
	maxFixRuns = 16
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
}

// candidate is one set of overrides tried as a fix, and what its run
// showed.
type candidate struct {
	set     map[string]any
	results *metrics.Results
	err     error
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

// VerifyFix runs the diagnoses' fixes of before on the scenario src
// describes, on the same seed and horizon, and returns the set of
// overrides that clears the critical findings without introducing one
// and without losing more than the margin of goodput, or the best that
// helps, or none with the reason. It returns nil when no diagnosis has a
// fix to try. Each candidate owns its engine, so the result does not
// depend on opt.Workers.
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
	for r := 0; r < fixRounds && len(round) > 0; r++ {
		var fresh []*candidate
		for _, c := range round {
			if k := setKey(c.set); !seen[k] && len(tried)+len(fresh) < maxFixRuns {
				seen[k] = true
				fresh = append(fresh, c)
			}
		}
		par.Run(len(fresh), opt.Workers, func(i int) bool {
			fresh[i].results, fresh[i].err = runCandidate(src, fresh[i].set, opt)
			return false
		})
		if opt.Interrupt != nil && opt.Interrupt.Load() {
			return nil
		}
		tried = append(tried, fresh...)
		round = extend(fresh)
	}
	return judge(before, tried, opt.Margin)
}

// runCandidate runs the scenario with set applied, on the replication of
// the run being fixed. A run that stops early (a deadlock the fix did
// not clear) is still a result: its findings say so.
func runCandidate(src Source, set map[string]any, opt FixOptions) (*metrics.Results, error) {
	sc, err := src.Load(FixOverrides(set)...)
	if err != nil {
		return nil, err
	}
	cfg, err := sc.Build()
	if err != nil {
		return nil, err
	}
	out, err := client.RunReplication(cfg, opt.Replication, client.Options{Interrupt: opt.Interrupt, SeriesUnread: true})
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
