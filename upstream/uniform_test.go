package upstream

import "testing"

var _ = example(Uniform{Min: 10 * ms, Max: 30 * ms}, Uniform{Max: 1})

// A uniform's max must be above its min.
func TestUniformNeedsARange(t *testing.T) {
	if err := (Uniform{Min: ms, Max: ms}).Validate(); err == nil {
		t.Fatal("min = max accepted")
	}
}
