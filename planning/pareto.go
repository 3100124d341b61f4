package planning

// Pareto marks the feasible points no other feasible point beats on every
// metric at once (each metric's better direction given by better: +1 when
// higher is better, −1 when lower is).
func Pareto(metrics [][]float64, better []float64, feasible []bool) []bool {
	out := make([]bool, len(feasible))
	for i := range feasible {
		if !feasible[i] {
			continue
		}
		out[i] = true
		for j := range feasible {
			if j == i || !feasible[j] {
				continue
			}
			if dominates(metrics[j], metrics[i], better) {
				out[i] = false
				break
			}
		}
	}
	return out
}

// dominates reports whether a is at least as good as b everywhere and
// better somewhere.
func dominates(a, b, better []float64) bool {
	strictly := false
	for k := range a {
		d := (a[k] - b[k]) * better[k]
		if d < 0 {
			return false
		}
		if d > 0 {
			strictly = true
		}
	}
	return strictly
}
