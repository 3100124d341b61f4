package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// maxCostValue bounds a cost value: far beyond any provider's limit, well
// inside int64 nanoseconds.
const maxCostValue = 1e12

// Cost is a request's or a response's cost in a scenario file: a whole
// number (`cost = 3`), or a distribution of them
// (`cost = { dist = "lognormal", median = 1500, sigma = 0.8 }`), whose
// values are counts rather than durations.
type Cost struct {
	// N is the constant cost when Dist is nil.
	N int64
	// Dist is the distribution, its duration fields read as counts (see
	// upstream.Count).
	Dist *upstream.Spec
}

// Spec returns the cost as a count distribution.
func (c Cost) Spec() upstream.Spec {
	if c.Dist != nil {
		return *c.Dist
	}
	return upstream.Spec{Dist: "constant", Value: time.Duration(c.N)}
}

// constant returns the cost when every draw is the same (a number, or a
// constant distribution).
func (c Cost) constant() (int64, bool) {
	switch {
	case c.Dist == nil:
		return c.N, true
	case c.Dist.Dist == "constant":
		return max(1, int64(c.Dist.Value)), true
	}
	return 0, false
}

// MarshalTOML renders the cost as written: a number, or an inline table.
func (c Cost) MarshalTOML() ([]byte, error) {
	if c.Dist == nil {
		return []byte(strconv.FormatInt(c.N, 10)), nil
	}
	if !slices.Contains(upstream.CountDists, c.Dist.Dist) {
		return nil, fmt.Errorf("cost: no encoding for dist %q", c.Dist.Dist)
	}
	parts := distFields(*c.Dist, func(d time.Duration) string { return strconv.FormatInt(int64(d), 10) })
	return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
}

// cost reads key k of t as a cost: an integer of at least least, or a
// distribution table. def is the cost when k is absent.
func (d *decoder) cost(t *table, k string, least, def int64) Cost {
	v, ok := t.get(k)
	if !ok {
		return Cost{N: def}
	}
	if _, isTable := v.(map[string]any); !isTable {
		return Cost{N: t.integer(k, def, least)}
	}
	ct := t.sub(k)
	s := upstream.Spec{}
	problems := len(d.probs)
	if !ct.required("dist") {
		ct.done("dist")
		return Cost{N: def}
	}
	s.Dist = ct.enum("dist", "", upstream.CountDists...)
	count := func(key string, lo float64) time.Duration {
		if !ct.required(key) {
			return 1
		}
		f := ct.float(key, 1, lo, lo == 0)
		if f > maxCostValue {
			d.problem(ct.key(key), "must be at most %g, got %v", float64(maxCostValue), f)
			return 1
		}
		return time.Duration(math.Round(f))
	}
	switch s.Dist {
	case "constant":
		if ct.required("value") {
			s.Value = time.Duration(ct.integer("value", least, least))
		}
		ct.done("dist", "value")
	case "exponential":
		s.Mean = count("mean", 0)
		ct.done("dist", "mean")
	case "lognormal":
		if ct.has("p50") || ct.has("p99") {
			s.P50, s.P99 = count("p50", 0), count("p99", 0)
			if s.P99 <= s.P50 && d.intact(ct.key("p50"), ct.key("p99")) {
				d.problem(ct.key("p99"), "must be greater than p50 (%d)", int64(s.P50))
			}
			ct.done("dist", "p50", "p99")
		} else {
			s.Median = count("median", 0)
			if ct.required("sigma") {
				s.Sigma = ct.float("sigma", 0.5, 0, true)
			}
			ct.done("dist", "median", "sigma", "p50", "p99")
		}
	case "gamma":
		s.Mean = count("mean", 0)
		if ct.required("shape") {
			s.Shape = ct.float("shape", 1, 0, true)
		}
		ct.done("dist", "mean", "shape")
	case "uniform":
		okMin, okMax := ct.has("min"), ct.has("max")
		s.Min, s.Max = count("min", -1), count("max", -1)
		if s.Min < 0 && okMin {
			d.problem(ct.key("min"), "must not be negative")
		}
		if okMin && okMax && s.Max <= s.Min && d.intact(ct.key("min"), ct.key("max")) {
			d.problem(ct.key("max"), "must be greater than min (%d)", int64(s.Min))
		}
		ct.done("dist", "min", "max")
	case "empirical":
		d.countQuantiles(ct, &s)
		ct.done("dist", "quantiles")
	default:
		ct.done("dist", "value", "mean", "median", "sigma", "p50", "p99", "shape", "min", "max", "quantiles")
		return Cost{N: def}
	}
	if len(d.probs) == problems {
		// What the keys above do not check alone (empirical quantiles
		// that fall), as the run would build it.
		if _, err := upstream.NewCount(s, 1); err != nil {
			key := ct.key("dist")
			if s.Dist == "empirical" {
				key = ct.key("quantiles")
			}
			d.problem(key, "%v", err)
		}
	}
	return Cost{Dist: &s}
}

// countQuantiles reads an empirical count's [[p, n], …] quantile points.
func (d *decoder) countQuantiles(t *table, s *upstream.Spec) {
	if !t.required("quantiles") {
		return
	}
	v, _ := t.get("quantiles")
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		d.problem(t.key("quantiles"), "must be an array of at least two [p, count] pairs, from p = 0 to p = 1")
		return
	}
	for i, e := range arr {
		k := fmt.Sprintf("%s[%d]", t.key("quantiles"), i)
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			d.problem(k, "must be a [p, count] pair")
			continue
		}
		var nums [2]float64
		good := true
		for j, x := range pair {
			switch x := x.(type) {
			case float64:
				nums[j] = x
			case int64:
				nums[j] = float64(x)
			default:
				good = false
			}
		}
		if !good || math.IsNaN(nums[0]) || math.IsNaN(nums[1]) || nums[1] < 0 || nums[1] > maxCostValue {
			d.problem(k, "must be a [p, count] pair of numbers, the count between 0 and %g", float64(maxCostValue))
			continue
		}
		s.Quantiles = append(s.Quantiles, upstream.Quantile{P: nums[0], Value: time.Duration(math.Round(nums[1]))})
	}
}
