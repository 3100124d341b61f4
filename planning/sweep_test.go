package planning

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/scenarios"
)

// A range's values are from + i×step rounded to the decimals written, so
// that a 0.1 step gives 0.3 and 0.7 exactly (what --set and
// recommended.toml then carry); a value written with an exponent is left
// as it computes. A list may not repeat a value, and a range needs its
// step.
func TestParseSweepValues(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []float64
	}{
		{"k=0.1:0.7:0.1", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}},
		{"k=80:120:10", []float64{80, 90, 100, 110, 120}},
		{"k=1:1.3:0.15", []float64{1, 1.15, 1.3}},
		{"k=0.05:0.15:0.05", []float64{0.05, 0.1, 0.15}},
		{"k=1e-3:2e-3:1e-3", []float64{0.001, 0.002}},
		{"k=3,1,2", []float64{3, 1, 2}},
		{"k=0:1:0x1p-2", []float64{0, 0.25, 0.5, 0.75, 1}},
		{"k=-0.9:0.9:0.3", []float64{-0.9, -0.6, -0.3, 0, 0.3, 0.6, 0.9}},
	} {
		sw, err := ParseSweep(c.spec)
		if err != nil || !slices.Equal(sw.Values, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.spec, sw.Values, err, c.want)
		}
		for _, v := range sw.Values {
			if v == 0 && math.Signbit(v) {
				t.Errorf("%s: a value of -0", c.spec)
			}
		}
	}
	// A [[sweep]] block's range is rounded alike.
	if got := (scenarios.Sweep{From: 0.1, To: 0.7, Step: 0.1}).Points(); !slices.Equal(got, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}) {
		t.Errorf("[[sweep]] 0.1 to 0.7 by 0.1: %v", got)
	}
	for spec, want := range map[string]string{
		"k=5,5":    "5 is listed twice",
		"k=10:20":  "a range needs its step",
		"k=1:2:0":  "the step must be positive",
		"k=2:1:1":  "an empty range",
		"k=1,x":    `"x" is not a number`,
		"k=1:2:3:": "want from:to:step",
	} {
		if _, err := ParseSweep(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", spec, err, want)
		}
	}
}
