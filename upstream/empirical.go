package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// Empirical is a latency read from data: quantile points, interpolated
// linearly between them, or a sample (SamplesFile, whose durations are
// Samples once loaded), interpolated between its order statistics.
type Empirical struct {
	Quantiles   []Quantile
	SamplesFile string
	Samples     []time.Duration
}

// Quantile is one point of an empirical distribution: P(X ≤ Value) = P.
type Quantile struct {
	P     float64
	Value time.Duration
}

// empirical interpolates linearly between quantile points (or between the
// order statistics of a sample).
type empirical struct {
	p []float64
	v []float64
}

func (s Empirical) build() (Latency, error) {
	var e empirical
	switch {
	case len(s.Samples) > 0 && len(s.Quantiles) > 0:
		return nil, fmt.Errorf("%w: %s takes quantiles or samples, not both", ErrSpec, Name(s))
	case len(s.Samples) > 0:
		xs := slices.Clone(s.Samples)
		slices.Sort(xs)
		if xs[0] < 0 {
			return nil, fmt.Errorf("%w: %s sample %v is negative", ErrSpec, Name(s), xs[0])
		}
		n := len(xs)
		for i, x := range xs {
			p := 0.0
			if n > 1 {
				p = float64(i) / float64(n-1)
			}
			e.p = append(e.p, p)
			e.v = append(e.v, float64(x))
		}
		if n == 1 {
			e.p, e.v = []float64{0, 1}, []float64{float64(xs[0]), float64(xs[0])}
		}
	case len(s.Quantiles) >= 2:
		q := slices.Clone(s.Quantiles)
		sort.SliceStable(q, func(i, j int) bool { return q[i].P < q[j].P })
		if q[0].P != 0 || q[len(q)-1].P != 1 {
			return nil, fmt.Errorf("%w: %s quantiles must start at p = 0 and end at p = 1", ErrSpec, Name(s))
		}
		for i, pt := range q {
			if pt.Value < 0 || (i > 0 && (pt.Value < q[i-1].Value || pt.P == q[i-1].P)) {
				return nil, fmt.Errorf("%w: %s quantiles must have distinct p and non-decreasing, non-negative values", ErrSpec, Name(s))
			}
			e.p = append(e.p, pt.P)
			e.v = append(e.v, float64(pt.Value))
		}
	default:
		return nil, fmt.Errorf("%w: %s needs at least two quantiles (p = 0 and p = 1) or a samples file", ErrSpec, Name(s))
	}
	return e, nil
}

func (e empirical) at(u float64) float64 {
	i := sort.SearchFloat64s(e.p, u)
	if i == 0 {
		return e.v[0]
	}
	if i >= len(e.p) {
		return e.v[len(e.v)-1]
	}
	f := (u - e.p[i-1]) / (e.p[i] - e.p[i-1])
	return e.v[i-1] + f*(e.v[i]-e.v[i-1])
}

// Sample draws one latency using r: a uniform share, interpolated.
func (e empirical) Sample(r *rand.Rand) time.Duration { return dur(e.at(r.Float64())) }

// Mean returns the mean of the interpolated distribution.
func (e empirical) Mean() time.Duration {
	var m float64
	for i := 1; i < len(e.p); i++ {
		m += (e.p[i] - e.p[i-1]) * (e.v[i] + e.v[i-1]) / 2
	}
	return dur(m)
}

// Sample draws one latency using r.
func (s Empirical) Sample(r *rand.Rand) time.Duration { return builtSample(s, r) }

// Mean returns the mean of the interpolated distribution.
func (s Empirical) Mean() time.Duration { return builtMean(s) }

// Validate checks the quantile points, or the samples once loaded.
func (s Empirical) Validate() error { return builtValidate(s) }

// validateCount refuses samples: a count's points are written out.
func (s Empirical) validateCount() error {
	if len(s.Samples) > 0 {
		return fmt.Errorf("%w: a count's %s distribution takes quantiles", ErrSpec, Name(s))
	}
	return nil
}

// Keys are quantiles, or (not for a count) samples.
func (Empirical) Keys(count bool) []string {
	if count {
		return []string{"quantiles"}
	}
	return []string{"quantiles", "samples"}
}

// Decode reads quantiles, or a latency's samples file (loaded later: see
// LoadFiles).
func (Empirical) Decode(r Reader) Dist {
	var s Empirical
	if _, ok := r.Count(); ok {
		if r.Required("quantiles") {
			s.Quantiles = countQuantiles(r)
		}
		r.Done("dist", "quantiles")
		return s
	}
	switch {
	case r.Has("quantiles") && r.Has("samples"):
		r.Get("quantiles")
		r.Get("samples")
		r.Problem(r.Key("samples"), "give quantiles or samples, not both")
	case r.Has("samples"):
		s.SamplesFile = r.Str("samples", "")
		if s.SamplesFile == "" {
			r.Problem(r.Key("samples"), "must name a CSV file of durations")
		}
	case r.Has("quantiles"):
		s.Quantiles = durationQuantiles(r)
		if s.Quantiles != nil && r.Intact(r.Key("quantiles")) { // with a pair left out, the rest would mislead
			if err := s.Validate(); err != nil {
				r.Problem(r.Key("quantiles"), "%v", err)
			}
		}
	default:
		r.Problem(r.Key("quantiles"), "%s needs quantiles = [[0, \"10ms\"], …, [1, \"2s\"]] or samples = \"file.csv\"", Name(s))
	}
	r.Done("dist", "quantiles", "samples")
	return s
}

// durationQuantiles reads a latency's [[p, "duration"], …] points (nil
// when quantiles is no such array, said so).
func durationQuantiles(r Reader) []Quantile {
	v, _ := r.Get("quantiles")
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		r.Problem(r.Key("quantiles"), "must be an array of at least two [p, \"duration\"] pairs, from p = 0 to p = 1")
		return nil
	}
	out := []Quantile{}
	for i, e := range arr {
		k := fmt.Sprintf("%s[%d]", r.Key("quantiles"), i)
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			r.Problem(k, "must be a [p, \"duration\"] pair")
			continue
		}
		var p float64
		switch x := pair[0].(type) {
		case float64:
			p = x
		case int64:
			p = float64(x)
		default:
			r.Problem(k, "p must be a number")
			continue
		}
		str, ok := pair[1].(string)
		dur, err := r.ParseDuration(str)
		if !ok || err != nil || dur < 0 || !(p >= 0 && p <= 1) {
			r.Problem(k, "must be [p in 0..1, non-negative duration string]")
			continue
		}
		out = append(out, Quantile{P: p, Value: dur})
	}
	return out
}

// countQuantiles reads a count's [[p, n], …] points.
func countQuantiles(r Reader) []Quantile {
	v, _ := r.Get("quantiles")
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		r.Problem(r.Key("quantiles"), "must be an array of at least two [p, count] pairs, from p = 0 to p = 1")
		return nil
	}
	var out []Quantile
	for i, e := range arr {
		k := fmt.Sprintf("%s[%d]", r.Key("quantiles"), i)
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			r.Problem(k, "must be a [p, count] pair")
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
		if !good || math.IsNaN(nums[0]) || math.IsNaN(nums[1]) || nums[1] < 0 || nums[1] > MaxCount {
			r.Problem(k, "must be a [p, count] pair of numbers, the count between 0 and %g", float64(MaxCount))
			continue
		}
		out = append(out, Quantile{P: nums[0], Value: time.Duration(math.Round(nums[1]))})
	}
	return out
}

// Encode writes the samples file when there is one, else the quantiles.
func (s Empirical) Encode(e Encoder) []string {
	if s.SamplesFile != "" {
		return []string{"samples = " + e.Str(s.SamplesFile)}
	}
	q := make([]string, len(s.Quantiles))
	for i, p := range s.Quantiles {
		q[i] = fmt.Sprintf("[%s, %s]", number(p.P), e.Value(p.Value))
	}
	return []string{"quantiles = [" + strings.Join(q, ", ") + "]"}
}

// loadFiles reads the samples file, if any.
func (s Empirical) loadFiles(key string, load func(key, file string) ([]time.Duration, bool)) Dist {
	if s.SamplesFile == "" {
		return s
	}
	if vals, ok := load(key+".samples", s.SamplesFile); ok {
		s.Samples = vals
	}
	return s
}
