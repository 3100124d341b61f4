package planning

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// CompareEntry is one scenario of a comparison, as loaded: a file given on
// the command line, or a file's [[variant]].
type CompareEntry struct {
	Name     string
	Scenario *scenarios.Scenario
}

// ComparedRun is one entry's runs in a comparison.
type ComparedRun struct {
	Name string
	// Results is the first replication's, with a warning for every later
	// replication that measured no steady state.
	Results *metrics.Results
	// Series is the first replication's series; the caller closes it.
	Series *metrics.Series
	// Replications holds every replication's results, in seed order:
	// replication k of every entry ran on the same seed.
	Replications []*metrics.Results
}

// CompareOptions says how RunCompared runs the entries.
type CompareOptions struct {
	// Replications is the number of runs of each entry, on seeds seed …
	// seed+Replications−1; less than 1 is taken as 1.
	Replications int
	// Workers is the number of runs at once; 0 or less: GOMAXPROCS. The
	// results do not depend on it.
	Workers int
	// Charted records the first replications' series whole, for charts.
	Charted bool
	// Interrupt, when set, stops every run at its next event boundary.
	Interrupt *atomic.Bool
	// Step, when set, is called after each replication, from the
	// goroutine that ran it.
	Step func()
}

// CompareError is the failure of one entry of a comparison.
type CompareError struct {
	Entry string
	// Build is true when the entry's configuration did not build (a
	// problem of the scenario, before anything ran), false when a run
	// failed.
	Build bool
	Err   error
}

// Error names the entry and the failure.
func (e *CompareError) Error() string { return fmt.Sprintf("%s: %v", e.Entry, e.Err) }

// Unwrap returns the failure.
func (e *CompareError) Unwrap() error { return e.Err }

// RunCompared runs every entry opt.Replications times on common random
// numbers: replication k of every entry runs on the scenario's seed plus
// k, so entries that share a workload and upstreams see the same arrivals
// and latencies, and their differences pair replication by replication.
// Every configuration is built before anything runs; the replications then
// run at once, each on its own engine, and are read in order, so the
// result is the same on any number of workers. It stops at the first
// failure, a *CompareError; on success the caller closes each run's
// Series.
func RunCompared(entries []CompareEntry, opt CompareOptions) ([]ComparedRun, error) {
	reps := max(1, opt.Replications)
	cfgs := make([]*client.Config, len(entries))
	for i, e := range entries {
		cfg, err := e.Scenario.Build()
		if err != nil {
			return nil, &CompareError{Entry: e.Name, Build: true, Err: err}
		}
		cfgs[i] = cfg
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type done struct {
		out *client.Outcome
		err error
	}
	// Replication rep of entry i is job i·reps + rep. Once one fails, no
	// later job starts: the comparison stops at the first failure.
	jobs := make([]done, len(entries)*reps)
	par.Run(len(jobs), workers, func(j int) bool {
		i, rep := j/reps, j%reps
		out, err := client.RunReplication(cfgs[i], rep, client.Options{Interrupt: opt.Interrupt, SeriesUnread: !opt.Charted})
		if err == nil {
			report.Analyze(out.Results, out.Series)
			if rep > 0 { // only the first replication's series is kept
				err = errors.Join(out.Series.Err(), out.Series.Close())
			}
		}
		jobs[j] = done{out, err}
		if opt.Step != nil {
			opt.Step()
		}
		return err != nil
	})
	runs := make([]ComparedRun, 0, len(entries))
	for i, e := range entries {
		c := ComparedRun{Name: e.Name}
		for rep := range reps {
			d := jobs[i*reps+rep]
			if d.err != nil {
				for k := 0; k < len(jobs); k += reps { // the first replications' series
					if jobs[k].out != nil {
						jobs[k].out.Series.Close()
					}
				}
				return nil, &CompareError{Entry: e.Name, Err: d.err}
			}
			c.Replications = append(c.Replications, d.out.Results)
			if rep == 0 {
				c.Series = d.out.Series
			}
		}
		c.Results = c.Replications[0]
		warnUnmeasured(&c)
		runs = append(runs, c)
	}
	return runs, nil
}

// warnUnmeasured warns on the first replication of c, which the reports
// show, of every later replication that measured no steady state (its
// zeros are in the means), and analyses it again if any did.
func warnUnmeasured(c *ComparedRun) {
	named := false
	for k, r := range c.Replications[1:] {
		if w, none := r.NoSteadyState(); none {
			c.Results.Warnings = append(c.Results.Warnings, metrics.ReplicationNoSteadyStateWarning(k+2, len(c.Replications), w))
			named = true
		}
	}
	if named {
		report.Analyze(c.Results, c.Series)
	}
}
