package planning

import (
	"math"
	"testing"
)

// shareCase is four points over 20 draws, each the same objective in every
// draw it meets the constraints in (goodput 90, 95, 99, 100) and failing
// the first 0, 1, 4 and 5 draws: shares 100%, 95%, 80% and 75%, worst
// regrets 10, 5, 1 and 0 (the draw's best is the best point meeting the
// constraints there: 90 in draw 0, 95 in draws 1 to 3, 99 in draw 4, 100
// after).
func shareCase() [][]Point {
	goodput := []float64{90, 95, 99, 100}
	fails := []int{0, 1, 4, 5}
	ran := make([][]Point, len(goodput))
	for i := range ran {
		for d := range 20 {
			ran[i] = append(ran[i], Point{Index: i, Params: map[string]float64{"x": float64(i)},
				Metrics: map[string]float64{"goodput_rps": goodput[i]}, Feasible: d >= fails[i], Runs: 1})
		}
	}
	return ran
}

// A point meets the share required when its share of draws is at least
// it: one exactly at the boundary (19 of 20 at 95%, 16 of 20 at 80%) is
// feasible and, of least worst regret, recommended; a share just above
// the boundary excludes it.
func TestUncertainShareBoundary(t *testing.T) {
	spec := Spec{Sweeps: []Sweep{{Key: "x", Values: []float64{0, 1, 2, 3}}}, Objective: Objective{Maximise: true, Path: "goodput_rps"}}
	for _, c := range []struct {
		share    string
		feasible []bool
		want     float64 // the x recommended
	}{
		{"100%", []bool{true, false, false, false}, 0},
		{"95.1%", []bool{true, false, false, false}, 0},
		{"95%", []bool{true, true, false, false}, 1},
		{"0.95", []bool{true, true, false, false}, 1},
		{"80.1%", []bool{true, true, false, false}, 1},
		{"80%", []bool{true, true, true, false}, 2},
		{"75%", []bool{true, true, true, true}, 3},
	} {
		share, err := ParseThreshold(c.share)
		if err != nil {
			t.Fatal(err)
		}
		res := newResult(spec)
		weighDraws(res, spec, shareCase(), &Uncertain{ShareRequired: share}, share)
		for i, p := range res.Points {
			if p.Feasible != c.feasible[i] {
				t.Errorf("share %s: point %d (share %v) feasible %v, want %v", c.share, i, res.Uncertain.Points[i].Share, p.Feasible, c.feasible[i])
			}
		}
		if res.Recommended == nil || res.Recommended["x"] != c.want {
			t.Errorf("share %s: recommended %v, want x=%v", c.share, res.Recommended, c.want)
		}
	}
	res := newResult(spec)
	weighDraws(res, spec, shareCase(), &Uncertain{}, 0.95)
	for i, want := range []struct{ share, regret float64 }{{1, 10}, {0.95, 5}, {0.8, 1}, {0.75, 0}} {
		up := res.Uncertain.Points[i]
		if up.Share != want.share || up.MaxRegret == nil || *up.MaxRegret != want.regret {
			t.Errorf("point %d: share %v, worst regret %v; want %v, %v", i, up.Share, up.MaxRegret, want.share, want.regret)
		}
	}
	// Draw 4: 90 against the 99 of the best point meeting the constraints.
	if r := res.Uncertain.Points[0].Draws[4].Regret; r == nil || math.Abs(*r-9) > 1e-12 {
		t.Errorf("point 0's regret in draw 4: %v, want 9", r)
	}
	if r := res.Uncertain.Points[3].Draws[4].Regret; r != nil {
		t.Errorf("point 3 fails draw 4 and has a regret there: %v", *r)
	}
}
