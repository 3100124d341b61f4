package scenarios

import (
	"errors"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim"
)

// Outcome is one replication's result.
type Outcome struct {
	Results *report.Results
	Series  *report.Series
	// Stall is set when the run ended with work parked and nothing left to
	// wake it: a deadlock between limiters, or waiters nobody releases.
	Stall *sim.StallError
}

// RunReplication simulates replication rep (seed run.seed + rep).
func RunReplication(sc *Scenario, rep int) (*Outcome, error) {
	p, err := newPipeline(sc, rep)
	if err != nil {
		return nil, err
	}
	p.start()
	err = p.eng.Run()
	out := &Outcome{}
	var stall *sim.StallError
	complete, reason := true, ""
	if errors.As(err, &stall) {
		out.Stall = stall
		complete, reason = false, "stalled: "+stall.Error()
	} else if err != nil {
		return nil, err
	}
	res, series := p.rec.Finish(p.eng.Now(), p.eng.Events(), complete, reason)
	res.Warnings = append(res.Warnings, sc.Warnings...)
	out.Results, out.Series = res, series
	return out, nil
}

// Run simulates every replication in order and returns the first one's
// outcome with the spread over all replications attached.
func Run(sc *Scenario) (*Outcome, error) {
	first, err := RunReplication(sc, 0)
	if err != nil || sc.Run.Replications <= 1 {
		return first, err
	}
	all := []*report.Results{first.Results}
	for rep := 1; rep < sc.Run.Replications; rep++ {
		o, err := RunReplication(sc, rep)
		if err != nil {
			return nil, err
		}
		all = append(all, o.Results)
	}
	first.Results.Replications = report.Summarize(all)
	return first, nil
}
