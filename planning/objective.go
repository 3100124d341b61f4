package planning

import (
	"fmt"
	"math"
	"strings"
)

// Objective is what a plan optimises: a figure of the results (a metric
// path such as goodput_rps) or a swept key, to maximise or minimise.
type Objective struct {
	Maximise bool
	Path     string
}

// ParseObjective reads max:PATH or min:PATH.
func ParseObjective(s string) (Objective, error) {
	dir, path, ok := strings.Cut(s, ":")
	if !ok || (dir != "max" && dir != "min") || path == "" {
		return Objective{}, fmt.Errorf("%q: want max:PATH or min:PATH", s)
	}
	return Objective{Maximise: dir == "max", Path: path}, nil
}

// String is the objective as ParseObjective reads it.
func (o Objective) String() string {
	if o.Maximise {
		return "max:" + o.Path
	}
	return "min:" + o.Path
}

// Better reports whether a is strictly better than b.
func (o Objective) Better(a, b float64) bool {
	if o.Maximise {
		return a > b
	}
	return a < b
}

// tieShare is the relative difference within which two figures of one
// replication each tie: finer than a run's noise resolves (a run's edges
// alone moved token-bucket's goodput by 0.6% between 20 and 40 permits).
const tieShare = 0.001

// ties reports whether p and q reach the objective alike, within the
// plan's resolution: the larger of their 95% half-widths with
// replications, else a tieShare of the larger value. An objective on a
// swept key ties only where the values are equal.
func ties(p, q Point, o Objective) bool {
	a, b := objectiveValue(p, o), objectiveValue(q, o)
	if _, swept := p.Params[o.Path]; swept {
		return a == b
	}
	tol := math.Max(p.Metrics[o.Path+".ci95"], q.Metrics[o.Path+".ci95"])
	if tol == 0 {
		tol = tieShare * math.Max(math.Abs(a), math.Abs(b))
	}
	return math.Abs(a-b) <= tol
}
