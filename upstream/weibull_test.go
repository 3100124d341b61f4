package upstream

import "testing"

var _ = example(Weibull{Scale: 100 * ms, Shape: 1.5})

// A Weibull needs a positive scale.
func TestWeibullNeedsAScale(t *testing.T) {
	if err := (Weibull{Shape: 1}).Validate(); err == nil {
		t.Fatal("a scale of 0 accepted")
	}
}
