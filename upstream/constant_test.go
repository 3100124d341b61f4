package upstream

import "testing"

var _ = example(Constant{Value: 5 * ms}, Constant{})

// A constant draws no random number.
func TestConstantDrawsNothing(t *testing.T) {
	c, err := NewCount(Constant{Value: 3}, 1)
	if k, ok := c.Constant(); err != nil || !ok || k != 3 {
		t.Fatalf("constant count: %d %v %v", k, ok, err)
	}
}
