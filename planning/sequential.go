package planning

import (
	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// Sequential replications: a point stops replicating as soon as it is
// infeasible at the stated confidence whatever its later replications,
// since an infeasible point's figures change no recommendation. A point
// that may still be feasible runs every replication, so its means, and
// the recommendation, are those of the exhaustive plan.
//
// The replications run in batches of ReplicationWorkers at once, but the
// verdict is read after each replication in seed order, and the runs
// after it are dropped: what a point reports (its runs, its figures) is
// the same whatever the number of workers.

// decidedInfeasible reports whether the replications rs already make the
// point infeasible for good: a critical finding the plan does not allow
// (more runs can only add findings), or a constraint that fails even on
// the near bound of its 95% confidence interval (from two replications).
func decidedInfeasible(spec Spec, params map[string]float64, rs []*metrics.Results) bool {
	p := Point{Params: params, Metrics: map[string]float64{}}
	if err := p.measure(spec, rs); err != nil {
		return false // the error shows when the point is measured in full
	}
	if !spec.AllowFindings && len(p.Findings) > 0 {
		return true
	}
	if len(rs) < 2 {
		return false
	}
	for _, c := range spec.Constraints {
		v := p.Metrics[c.Path]
		switch c.Op { // the near bound: the side of the interval that favours holding
		case "<", "<=":
			v -= p.Metrics[c.Path+".ci95"]
		default:
			v += p.Metrics[c.Path+".ci95"]
		}
		if ok, _, _ := c.CheckValue(v); !ok {
			return true
		}
	}
	return false
}

// runSequential runs the point's replications in seed order until they
// decide it infeasible (decidedInfeasible) or all have run; the first
// that fails is the point's error, returned with the runs up to it.
func runSequential(spec Spec, params map[string]float64, overrides []scenarios.Override) ([]*metrics.Results, error) {
	reps := max(1, spec.Replications)
	batch := max(1, spec.ReplicationWorkers)
	var rs []*metrics.Results
	for len(rs) < reps {
		from := len(rs)
		n := min(batch, reps-from)
		got, errs := make([]*metrics.Results, n), make([]error, n)
		par.Run(n, n, func(i int) bool {
			got[i], errs[i] = spec.Source.Simulate(overrides, from+i, spec.Interrupt)
			return errs[i] != nil
		})
		for i := range n {
			if errs[i] != nil {
				return ran(append(rs, got[i])), errs[i]
			}
			rs = append(rs, got[i])
			if len(rs) < reps && decidedInfeasible(spec, params, rs) {
				return rs, nil
			}
		}
	}
	return rs, nil
}
