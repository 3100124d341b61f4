package upstream

import "testing"

var _ = example(Gamma{Average: 100 * ms, Shape: 2}, Gamma{Average: 3 * ms, Shape: 0.25})

// A gamma needs a positive shape.
func TestGammaNeedsAShape(t *testing.T) {
	if err := (Gamma{Average: ms}).Validate(); err == nil {
		t.Fatal("a shape of 0 accepted")
	}
}
