package report

import (
	"bytes"
	"image/png"
	"testing"
)

// A heat map of a metric that is the same at every point draws its cells
// (in one color) rather than an empty grey field: the map's own range,
// taken from the data, was empty.
func TestPlanHeatMapOfAConstantMetric(t *testing.T) {
	cells := func(values []float64) int {
		t.Helper()
		p := &Plan{Scenario: "s", Keys: []string{"a", "b"}, Objective: "max:goodput_rps", Recommended: -1,
			Params:   [][]float64{{1, 10}, {1, 20}, {2, 10}, {2, 20}},
			Metrics:  []PlanMetric{{Path: "rate_429", Values: values}},
			Feasible: []bool{true, true, true, true}, Pareto: []bool{false, false, false, false}}
		if err := DrawPlan(p); err != nil {
			t.Fatal(err)
		}
		if len(p.Charts) != 1 {
			t.Fatalf("%d charts, %v omitted", len(p.Charts), p.Omitted)
		}
		img, err := png.Decode(bytes.NewReader(p.Charts[0].PNG))
		if err != nil {
			t.Fatal(err)
		}
		colored := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y += 4 {
			for x := b.Min.X; x < b.Max.X; x += 4 {
				r, g, bl, _ := img.At(x, y).RGBA()
				if max(r, g, bl)-min(r, g, bl) > 0x3000 { // not white, grey or black
					colored++
				}
			}
		}
		return colored
	}
	varied, constant := cells([]float64{0, 0.1, 0.2, 0.3}), cells([]float64{0, 0, 0, 0})
	if varied < 1000 || constant < varied/2 {
		t.Fatalf("colored samples: %d with a varied metric, %d with a constant one", varied, constant)
	}
}
