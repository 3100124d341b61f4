package planning

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// surface is a cheap stand-in for the simulator: a point is feasible when
// Σ coef·x ≤ limit (feasibility falls as any key rises) and its objective
// is Σ x, to maximise; or, up, when Σ coef·x ≥ limit, Σ x to minimise.
// With weights, the objective is Σ weight·x instead (no two corners of a
// cell tie, so a cell is kept or dropped on its corners' objectives alone).
// With first, the objective is the first key alone (ties go to the first
// point in grid order).
type surface struct {
	sweeps []Sweep
	coef   []float64
	limit  float64
	up     bool
	first  bool
	// weights, when set, weigh each key in the objective.
	weights []float64
}

// randomSurface is a surface over a grid of keys keys, each of 1 to most
// values.
func randomSurface(rng *rand.Rand, keys, most int) surface {
	var s surface
	top := 0.0
	for k := range keys {
		n, from, step := 1+rng.IntN(most), float64(rng.IntN(20)), float64(1+rng.IntN(5))
		sw := Sweep{Key: fmt.Sprintf("k%d", k)}
		for i := range n {
			sw.Values = append(sw.Values, from+float64(i)*step)
		}
		s.sweeps = append(s.sweeps, sw)
		s.coef = append(s.coef, 0.1+2*rng.Float64())
		top += s.coef[k] * sw.Values[n-1]
	}
	s.limit = 1.2 * top * rng.Float64() // at times no point, at times every point, is feasible
	return s
}

// point is the surface at grid point x.
func (s surface) point(index int, x []float64) Point {
	p := Point{Index: index, Params: map[string]float64{}, Metrics: map[string]float64{}}
	load, sum := 0.0, 0.0
	for k, v := range x {
		p.Params[s.sweeps[k].Key] = v
		load += s.coef[k] * v
		if s.weights != nil {
			v *= s.weights[k]
		}
		sum += v
	}
	p.Metrics["objective"] = sum
	if s.first {
		p.Metrics["objective"] = x[0]
	}
	p.Feasible = load <= s.limit
	if s.up {
		p.Feasible = load >= s.limit
	}
	return p
}

// recommend is Recommend's pick over points.
func recommend(points []Point, o Objective) map[string]float64 {
	res := &Result{Complete: true, Points: points}
	Recommend(res, o, nil)
	return res.Recommended
}

// TestRefineFindsTheFullGridsRecommendation: on 200 random monotone
// surfaces of 1, 2 and 3 keys, a refined plan recommends what the full
// grid does, running each point at most once.
func TestRefineFindsTheFullGridsRecommendation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ran, full := 0, 0
	for i := range 200 {
		keys := 1 + i%3
		s := randomSurface(rng, keys, []int{40, 20, 12}[keys-1])
		s.up, s.first = i%2 == 1, i/6%2 == 1
		if i%4 == 2 && !s.first {
			for range keys {
				s.weights = append(s.weights, 0.1+2*rng.Float64())
			}
		}
		o := Objective{Maximise: !s.up, Path: "objective"}
		grid := Grid(s.sweeps)
		var all []Point
		for j, x := range grid {
			all = append(all, s.point(j, x))
		}
		dims := make([]int, keys)
		for k, sw := range s.sweeps {
			dims[k] = len(sw.Values)
		}
		seen := map[int]bool{}
		got, _, complete := Refine(dims, o.Better, func(round []int) ([]Outcome, bool) {
			outs := make([]Outcome, len(round))
			for k, j := range round {
				if seen[j] {
					t.Fatalf("surface %d: point %d run twice", i, j)
				}
				seen[j] = true
				outs[k] = Outcome{Feasible: all[j].Feasible, Objective: all[j].Metrics["objective"]}
			}
			return outs, true
		})
		if !complete || len(got) != len(seen) {
			t.Fatalf("surface %d: complete %v, %d points listed of %d run", i, complete, len(got), len(seen))
		}
		var some []Point
		for _, j := range got {
			some = append(some, all[j])
		}
		want, have := recommend(all, o), recommend(some, o)
		if !reflect.DeepEqual(want, have) {
			t.Fatalf("surface %d (dims %v, coef %v, limit %v): refined recommends %v, the full grid %v", i, dims, s.coef, s.limit, have, want)
		}
		ran, full = ran+len(got), full+len(grid)
	}
	t.Logf("refinement ran %d of %d points (%.1f%%)", ran, full, 100*float64(ran)/float64(full))
}

// TestRefineRunsTheWholeSmallGrid: a key of at most 5 values is run whole
// in the coarse round.
func TestRefineRunsTheWholeSmallGrid(t *testing.T) {
	got, rounds, _ := Refine([]int{5, 3}, Objective{Maximise: true}.Better, func(round []int) ([]Outcome, bool) {
		return make([]Outcome, len(round)), true
	})
	if len(got) != 15 || rounds != 1 {
		t.Fatalf("ran %v in %d rounds, want all 15 points in 1", got, rounds)
	}
}

// TestCoarseSpacing: the coarse round keeps at most 5 values of a key,
// its ends among them.
func TestCoarseSpacing(t *testing.T) {
	for n := 1; n < 100; n++ {
		l := lattice(n, coarseSpacing(n))
		if len(l) > 5 || l[0] != 0 || l[len(l)-1] != n-1 || (n >= 3 && len(l) < 3) {
			t.Fatalf("n=%d: coarse values %v", n, l)
		}
	}
}

// On random monotone surfaces, rounds run on shards (each shard following
// the merged rounds before with replay and running the positions of the
// next that are its own) run exactly the points of the refinement run
// whole, in as many rounds, on 2 shards and on 3.
func TestShardedRoundsFollowTheRefinement(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 100 {
		keys := 1 + i%3
		s := randomSurface(rng, keys, []int{40, 20, 12}[keys-1])
		s.up, s.first = i%2 == 1, i/6%2 == 1
		o := Objective{Maximise: !s.up, Path: "objective"}
		grid := Grid(s.sweeps)
		dims := make([]int, keys)
		for k, sw := range s.sweeps {
			dims[k] = len(sw.Values)
		}
		outcome := func(j int) Outcome {
			p := s.point(j, grid[j])
			return Outcome{Feasible: p.Feasible, Objective: p.Metrics["objective"]}
		}
		whole, wholeRounds, _ := Refine(dims, o.Better, func(round []int) ([]Outcome, bool) {
			outs := make([]Outcome, len(round))
			for k, j := range round {
				outs[k] = outcome(j)
			}
			return outs, true
		})
		for _, shards := range []int{2, 3} {
			known := map[int]Outcome{}
			rounds := 0
			for ; ; rounds++ {
				done, pending, used := replay(dims, o.Better, known)
				if used != len(known) || done != rounds {
					t.Fatalf("surface %d, %d shards: replay followed %d rounds using %d of %d points, after %d rounds", i, shards, done, used, len(known), rounds)
				}
				if len(pending) == 0 {
					break
				}
				for part := range shards {
					for k, j := range pending {
						if k%shards == part {
							known[j] = outcome(j)
						}
					}
				}
			}
			got := slices.Sorted(maps.Keys(known))
			if !slices.Equal(got, whole) || rounds != wholeRounds {
				t.Fatalf("surface %d, %d shards: %d points in %d rounds, the whole refinement %d in %d", i, shards, len(got), rounds, len(whole), wholeRounds)
			}
		}
	}
}
