package upstream

import (
	"strings"
	"testing"
	"time"
)

var _ = example(Mixture{Components: []Component{
	{Weight: 0.95, Dist: Constant{Value: 10 * ms}},
	{Weight: 0.05, Dist: LogNormal{Median: time.Second, Sigma: 0.25}}}})

// Mixtures do not nest.
func TestMixtureDoesNotNest(t *testing.T) {
	inner := Mixture{Components: []Component{{Weight: 1, Dist: Constant{}}, {Weight: 1, Dist: Constant{}}}}
	err := (Mixture{Components: []Component{{Weight: 1, Dist: inner}, {Weight: 1, Dist: Constant{}}}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "do not nest") {
		t.Fatalf("nested mixture: %v", err)
	}
}
