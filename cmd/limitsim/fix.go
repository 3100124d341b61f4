package main

import (
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// fixRun gives r its fix: verified by running the diagnoses' fixes on the
// same arrivals and latencies (planning.VerifyFix), or, with --no-verify,
// their overrides together and marked unverified. cut reports whether an
// interrupt stopped the verification: the fix is then the overrides,
// unchecked, and marked so (planning.InterruptedFix). An interrupt after
// a verification that finished leaves its fix as it is: verified.
func fixRun(r *metrics.Results, src planning.Source, noVerify bool, interrupt *atomic.Bool) (cut bool) {
	if noVerify {
		r.Fix = planning.UnverifiedFix(r)
		return false
	}
	r.Fix = planning.VerifyFix(src, r, planning.FixOptions{Workers: runtime.GOMAXPROCS(0), Interrupt: interrupt})
	if r.Fix == nil && interrupt.Load() {
		// Stopped while verifying (VerifyFix gives nil then, as it does
		// when there is nothing to verify): the overrides, unchecked.
		r.Fix = planning.InterruptedFix(r)
		return r.Fix != nil
	}
	report.AttributeFix(r)
	return false
}

// horizonWarning warns in r when its steady window is too short for its
// long-run state to show (planning.HorizonOf).
func horizonWarning(r *metrics.Results, sc *scenarios.Scenario) {
	if h := planning.HorizonOf(sc, r); h.Short() && r.Complete {
		r.Warnings = append(r.Warnings, metrics.ShortHorizonWarning(h.WindowS, h.NeededS, h.Why))
	}
}

// writeFixed writes fixed.toml into folder f: the scenario with the verified
// fix applied. A run with no verified fix writes none and says why.
func writeFixed(f report.Folder, stderr io.Writer, src planning.Source, fix *metrics.VerifiedFix) error {
	if fix == nil || !fix.Verified || len(fix.Set) == 0 {
		why := "no diagnosis has a fix"
		if fix != nil {
			why = fix.Note
		}
		fmt.Fprintf(stderr, "limitsim: --fix: fixed.toml not written: %s\n", why)
		return nil
	}
	sc, err := src.Load(planning.FixOverrides(fix.Set)...)
	if err != nil {
		return fmt.Errorf("--fix: %w", err)
	}
	text, err := sc.Resolved()
	if err != nil {
		return fmt.Errorf("--fix: %w", err)
	}
	if err := f.WriteFile("fixed.toml", func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, text)
		return int64(n), err
	}); err != nil {
		return err
	}
	return f.Record([]string{"fixed.toml"})
}

// writeRunOutputs writes a run's outputs into dir (none without -o), and
// fixed.toml beside them with --fix.
func writeRunOutputs(dir string, withFix bool, stderr io.Writer, sc *scenarios.Scenario, out *client.Outcome, src planning.Source, st *session) error {
	if dir == "" {
		return nil
	}
	f := report.Folder{Dir: dir, FS: st.fsys}
	if err := writeOutputsTo(f, sc, out, sidecars{}, &st.outputs); err != nil {
		return err
	}
	if withFix && out.Interrupted {
		// No fix is verified for a run a signal stopped.
		fmt.Fprintln(stderr, "limitsim: --fix: fixed.toml not written: the run was interrupted, so no fix was verified")
		return nil
	}
	if withFix {
		return writeFixed(f, stderr, src, out.Results.Fix)
	}
	return nil
}
