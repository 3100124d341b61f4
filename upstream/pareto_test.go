package upstream

import "testing"

var _ = example(Pareto{Scale: 50 * ms, Shape: 3})

// A Pareto's shape must be above 1, for a finite mean.
func TestParetoNeedsAFiniteMean(t *testing.T) {
	if err := (Pareto{Scale: ms, Shape: 1}).Validate(); err == nil {
		t.Fatal("a shape of 1 accepted")
	}
}
