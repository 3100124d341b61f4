package planning

import (
	"fmt"
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
