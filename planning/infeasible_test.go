package planning

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// A plan with no feasible point says why: a point that meets every
// constraint but was left out for its critical findings or its refused
// horizon is named with that reason, before any constraint a point
// missed; with none such, the constraint missed by the least.
func TestWhyInfeasibleNamesWhatLeftAPointOut(t *testing.T) {
	cons := []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01, Text: "rate_429<0.01"}}
	missed := Point{Params: map[string]float64{"k": 105}, Metrics: map[string]float64{"rate_429": 0.047}}
	found := Point{Params: map[string]float64{"k": 110}, Metrics: map[string]float64{"rate_429": 0.001}, Findings: []string{"sustained_429"}}
	short := Point{Params: map[string]float64{"k": 95}, Metrics: map[string]float64{"rate_429": 0.009}, Horizon: &Horizon{Refused: true}}
	errored := Point{Params: map[string]float64{"k": 90}, Error: "stopped", Metrics: map[string]float64{"rate_429": 0}}
	for _, c := range []struct {
		points []Point
		want   string
	}{
		{[]Point{errored, missed, found}, "k=110 meets every constraint but has critical findings (sustained_429); --allow-findings recommends it"},
		{[]Point{missed, short}, "k=95 meets every constraint, but its run is too short"},
		{[]Point{errored, missed}, "rate_429<0.01 (got 0.047 at k=105)"},
	} {
		if got := whyInfeasible(c.points, cons); !strings.Contains(got, c.want) {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
