package planning

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/limitsim/limitsim/scenarios"
)

// Sweep is one swept scenario key and the values a plan gives it.
type Sweep struct {
	Key    string
	Values []float64
	// Flag names where the sweep came from ("--sweep", "--search",
	// "[[sweep]]") in a problem its values cause; empty for --set.
	Flag string
}

// MaxSweepPoints bounds the points of one swept key.
const MaxSweepPoints = 1_000_000

// ParseSweep reads KEY=from:to:step (points from + i×step, counted by
// index, so that 0.1 steps do not drift) or KEY=v1,v2,….
func ParseSweep(s string) (Sweep, error) {
	key, spec, ok := strings.Cut(s, "=")
	key, spec = strings.TrimSpace(key), strings.TrimSpace(spec)
	if !ok || key == "" || spec == "" {
		return Sweep{}, fmt.Errorf("%q: want KEY=from:to:step or KEY=v1,v2,…", s)
	}
	sw := Sweep{Key: key, Flag: "--sweep"}
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		var f [3]float64
		for i, p := range parts {
			v, err := parseNumber(key, p)
			if err != nil {
				return Sweep{}, err
			}
			f[i] = v
		}
		from, to, step := f[0], f[1], f[2]
		switch {
		case step <= 0:
			return Sweep{}, fmt.Errorf("%s: the step must be positive, got %v", key, step)
		case to < from:
			return Sweep{}, fmt.Errorf("%s: an empty range: %v is below %v", key, to, from)
		}
		n := math.Floor((to-from)/step*(1+1e-12)) + 1
		if n > MaxSweepPoints {
			return Sweep{}, fmt.Errorf("%s: %.3g points, over the limit of %d", key, n, MaxSweepPoints)
		}
		// Each value rounded to the decimals written, as a [[sweep]]
		// block's range is.
		for i := 0; i < int(n); i++ {
			sw.Values = append(sw.Values, scenarios.SweepValue(from, step, i))
		}
		return sw, nil
	}
	if strings.Count(spec, ":") > 0 {
		return Sweep{}, fmt.Errorf("%s: %q: want from:to:step (a range needs its step) or v1,v2,…", key, spec)
	}
	for _, p := range strings.Split(spec, ",") {
		v, err := parseNumber(key, p)
		if err != nil {
			return Sweep{}, err
		}
		if slices.Contains(sw.Values, v) {
			return Sweep{}, fmt.Errorf("%s: %v is listed twice", key, v)
		}
		sw.Values = append(sw.Values, v)
	}
	return sw, nil
}

func parseNumber(key, p string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: %q is not a number", key, p)
	}
	return v, nil
}

// Grid lists every point of the sweeps' grid, the last key varying
// fastest: point i holds one value per sweep, in the sweeps' order.
func Grid(sweeps []Sweep) [][]float64 {
	grid := [][]float64{{}}
	for _, sw := range sweeps {
		var next [][]float64
		for _, p := range grid {
			for _, v := range sw.Values {
				next = append(next, append(append([]float64(nil), p...), v))
			}
		}
		grid = next
	}
	return grid
}

// GridSize is the number of points of the sweeps' grid, as a float so
// that a grid too large to list can be refused.
func GridSize(sweeps []Sweep) float64 {
	n := 1.0
	for _, sw := range sweeps {
		n *= float64(len(sw.Values))
	}
	return n
}

// PointOverrides are the overrides that set each swept key to its value
// at point.
func PointOverrides(sweeps []Sweep, point []float64) []scenarios.Override {
	out := make([]scenarios.Override, len(sweeps))
	for i, sw := range sweeps {
		out[i] = scenarios.Override{Key: sw.Key, Value: point[i], Flag: sw.Flag}
	}
	return out
}

// CheckSweepValues loads the scenario at point with each swept key, in
// turn, at its least value, its greatest and its first that is not a
// whole number, and returns the first load's problem: a value out of a
// key's range (an initial_fill of 1.5, a permit count of 2.5) is refused
// before anything runs, wherever it sits in the sweep, rather than run as
// a point that errs.
func CheckSweepValues(src Source, sweeps []Sweep, point []float64) error {
	for i, sw := range sweeps {
		lo, hi := slices.Min(sw.Values), slices.Max(sw.Values)
		tries := []float64{lo, hi}
		if at := slices.IndexFunc(sw.Values, func(v float64) bool { return v != math.Trunc(v) }); at >= 0 {
			tries = append(tries, sw.Values[at])
		}
		for _, v := range tries {
			if v == point[i] {
				continue // loaded already
			}
			at := slices.Clone(point)
			at[i] = v
			if _, err := src.Load(PointOverrides(sweeps, at)...); err != nil {
				return err
			}
		}
	}
	return nil
}
