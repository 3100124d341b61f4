package planning

import "testing"

// The Pareto frontier keeps the feasible points nothing beats everywhere:
// with goodput up and 429s down, (100, 0) beats (90, 0) and (100, 0.5); an
// infeasible point is never on it, and a trade-off keeps both sides.
func TestPareto(t *testing.T) {
	values := [][]float64{{100, 0}, {90, 0}, {100, 0.5}, {120, 0.2}, {200, 0}}
	feasible := []bool{true, true, true, true, false}
	got := Pareto(values, []float64{1, -1}, feasible)
	want := []bool{true, false, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Pareto = %v, want %v", got, want)
		}
	}
}
