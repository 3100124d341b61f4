package metrics

import "testing"

// Replications that agree but for floating-point rounding in the mean
// (ten seconds summed as 10/3 three times) have no spread: the interval
// printed as "10s ± 0.00000000247µs".
func TestSpreadOfEqualValuesIsZero(t *testing.T) {
	if s := SpreadOf([]float64{10, 10, 10, 10, 10}); s.CI95 != 0 || s.Mean != 10 {
		t.Errorf("%+v", s)
	}
	xs := []float64{0.1 + 0.2, 0.3, 0.1 + 0.2, 0.3, 0.30000000000000004}
	if s := SpreadOf(xs); s.CI95 != 0 {
		t.Errorf("rounding read as spread: %+v", s)
	}
	if s := SpreadOf([]float64{10, 10.001}); s.CI95 == 0 {
		t.Errorf("a real spread read as none: %+v", s)
	}
}
