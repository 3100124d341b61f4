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
		if got := whyInfeasible(c.points, cons, false); !strings.Contains(got, c.want) {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// A refined plan's edge suggestion steps as its full grid does, not as the
// points it ran happen to be spaced: 80:120:5 refined to 80, 90, 100, 105,
// 110, 120 and recommended at 80 says extend down to 70, as the full grid
// of nine values would.
func TestRefinedEdgeWarningStepsAsTheGrid(t *testing.T) {
	res := &Result{Keys: []string{"a"}, Refined: &Refined{Sizes: []int{9}}, Recommended: map[string]float64{"a": 80}}
	for _, a := range []float64{80, 90, 100, 105, 110, 120} {
		res.Points = append(res.Points, Point{Params: map[string]float64{"a": a}})
	}
	want := "edge: a=80 is the bottom of its swept range; the best may lie below it: extend the sweep down to 70"
	if got := strings.Join(edgeWarnings(res), "; "); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// A recommendation at an end of its range that ties on the objective with
// the next point inward gives no edge warning: the objective is flat
// there, and nothing says it improves beyond. One better than its
// neighbour by more than the plan resolves still does; so does an
// objective on the swept key itself.
func TestEdgeWarningNotWhereTheObjectiveIsFlat(t *testing.T) {
	point := func(rate, goodput float64) Point {
		return Point{Params: map[string]float64{"rate": rate}, Metrics: map[string]float64{"goodput_rps": goodput}, Feasible: true}
	}
	for _, c := range []struct {
		objective string
		goodput   []float64
		warned    bool
	}{
		{"max:goodput_rps", []float64{74.16, 74.16, 74.15}, false},
		{"max:goodput_rps", []float64{74.16, 74.10, 74.15}, false}, // 0.08%: within a thousandth
		{"max:goodput_rps", []float64{80, 79.49, 79}, true},        // 0.6%: resolved
		{"min:rate", []float64{74.16, 74.16, 74.16}, true},
	} {
		res := &Result{Keys: []string{"rate"}, Objective: c.objective, Recommended: map[string]float64{"rate": 80}}
		for i, g := range c.goodput {
			res.Points = append(res.Points, point(80+10*float64(i), g))
		}
		if got := len(edgeWarnings(res)) > 0; got != c.warned {
			t.Errorf("%s over %v: warned %v, want %v: %q", c.objective, c.goodput, got, c.warned, edgeWarnings(res))
		}
	}
}

// With --allow-findings a point's findings did not leave it out: one that
// meets every constraint and is still not feasible missed a constraint on
// its run as given, and says so rather than hint at --allow-findings.
func TestWhyInfeasibleWithFindingsAllowed(t *testing.T) {
	cons := []metrics.Assertion{{Path: "rate_429", Op: "<", Value: 0.01, Text: "rate_429<0.01"}}
	p := Point{Params: map[string]float64{"k": 110}, Metrics: map[string]float64{"rate_429": 0.001}, Findings: []string{"sustained_429"}, Horizon: &Horizon{Lengthened: 60}}
	got := whyInfeasible([]Point{p}, cons, true)
	if !strings.Contains(got, "k=110 meets every constraint on the longer run its horizon needs, not on the run as given") || strings.Contains(got, "--allow-findings") {
		t.Errorf("%q", got)
	}
	if got := whyInfeasible([]Point{p}, cons, false); !strings.Contains(got, "--allow-findings recommends it") {
		t.Errorf("%q", got)
	}
}
