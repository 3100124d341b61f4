package planning

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Source is a scenario as advice loads it again and again: a TOML file or
// a bundled example's name, read once through Loader (nil reads it afresh
// every time), with the overrides Sets applied to every load.
type Source struct {
	Loader *scenarios.Loader
	Path   string
	Sets   []scenarios.Override
	// Journal, when set, holds the replications a plan already finished:
	// Simulate reads them from it and records those it runs.
	Journal *Journal
}

// Load loads the scenario with Sets and then extra applied.
func (s Source) Load(extra ...scenarios.Override) (*scenarios.Scenario, error) {
	return s.Loader.Open(s.Path, append(slices.Clip(s.Sets), extra...))
}

// Simulate loads the scenario with extra applied, runs its replication
// rep (seed run.seed + rep) and analyses it. A run that stopped early
// (interrupted, stalled, guarded) or that measured no steady state is an
// error: its figures are nothing to advise on. The results come back
// with the error when there are any. With a Journal, a replication it
// holds is read from it, not run, and one run is recorded in it unless
// the interrupt was raised (its run may have been cut short).
func (s Source) Simulate(extra []scenarios.Override, rep int, interrupt *atomic.Bool) (*metrics.Results, error) {
	if rec := s.Journal.lookup(extra, rep); rec != nil {
		return rec.outcome()
	}
	r, err := s.simulate(extra, rep, interrupt)
	if interrupt == nil || !interrupt.Load() {
		s.Journal.record(extra, rep, r, err)
	}
	return r, err
}

// simulate runs the replication Simulate asks for.
func (s Source) simulate(extra []scenarios.Override, rep int, interrupt *atomic.Bool) (*metrics.Results, error) {
	sc, err := s.Load(extra...)
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
