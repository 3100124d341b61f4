package report

import (
	"math"
	"slices"
	"testing"
)

// A search's probes close together (16 17 18 19 on an axis from 2 to
// 60) printed their labels over each other. The ends and the
// recommended value are labelled, and no two labels are closer than
// their widths; values far apart are all labelled.
func TestSpacedTicksDoNotOverlap(t *testing.T) {
	values := []float64{2, 16, 17, 18, 19, 23, 31, 60}
	ticks := spacedTicks(values, []float64{18})
	var labelled []float64
	for i, tk := range ticks {
		if tk.Value != values[i] {
			t.Fatalf("tick %d at %v, not %v", i, tk.Value, values[i])
		}
		if tk.Label != "" {
			labelled = append(labelled, tk.Value)
		}
	}
	for _, v := range []float64{2, 18, 60, 31} {
		if !slices.Contains(labelled, v) {
			t.Errorf("%v not labelled: %v", v, labelled)
		}
	}
	for i := 1; i < len(labelled); i++ {
		if gap := (labelled[i] - labelled[i-1]) / 58 * plotWidthPoints; gap < 2*tickDigitPoints+tickGapPoints-1e-9 {
			t.Errorf("labels %v and %v %.1f points apart", labelled[i-1], labelled[i], gap)
		}
	}
	all := spacedTicks([]float64{80, 100, 120}, nil)
	for _, tk := range all {
		if tk.Label == "" || math.IsNaN(tk.Value) {
			t.Errorf("%v unlabelled among values far apart", tk.Value)
		}
	}
}
