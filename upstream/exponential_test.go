package upstream

import "testing"

var _ = example(Exponential{Average: 100 * ms})

// An exponential's mean must be positive.
func TestExponentialNeedsAMean(t *testing.T) {
	if err := (Exponential{}).Validate(); err == nil {
		t.Fatal("a mean of 0 accepted")
	}
}
