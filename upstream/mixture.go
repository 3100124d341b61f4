package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Mixture draws each latency from one of its components, picked by weight.
type Mixture struct {
	Components []Component
}

// Component is one part of a mixture.
type Component struct {
	Weight float64
	Dist   Dist
}

type mixture struct {
	cum   []float64
	parts []Latency
}

func (s Mixture) build() (Latency, error) {
	cs := s.Components
	if len(cs) < 2 {
		return nil, fmt.Errorf("%w: a mixture needs at least two components", ErrSpec)
	}
	var m mixture
	var total float64
	for i, c := range cs {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
			return nil, fmt.Errorf("%w: mixture component %d needs a positive weight", ErrSpec, i)
		}
		if f, _ := FamilyOf(c.Dist); f.Composite {
			return nil, fmt.Errorf("%w: mixtures do not nest", ErrSpec)
		}
		l, err := NewLatency(c.Dist)
		if err != nil {
			return nil, fmt.Errorf("mixture component %d: %w", i, err)
		}
		total += c.Weight
		m.cum = append(m.cum, total)
		m.parts = append(m.parts, l)
	}
	for i := range m.cum {
		m.cum[i] /= total
	}
	return m, nil
}

// Sample draws the component, then its latency, using r.
func (m mixture) Sample(r *rand.Rand) time.Duration {
	u := r.Float64()
	i := sort.SearchFloat64s(m.cum, u)
	if i >= len(m.parts) {
		i = len(m.parts) - 1
	}
	return m.parts[i].Sample(r)
}

// Mean returns the weighted mean of the components' means.
func (m mixture) Mean() time.Duration {
	var s, prev float64
	for i, p := range m.parts {
		s += (m.cum[i] - prev) * float64(p.Mean())
		prev = m.cum[i]
	}
	return dur(s)
}

// Sample draws one latency using r: the component, then its draw.
func (s Mixture) Sample(r *rand.Rand) time.Duration { return builtSample(s, r) }

// Mean returns the weighted mean of the components' means.
func (s Mixture) Mean() time.Duration { return builtMean(s) }

// Validate checks the weights and every component.
func (s Mixture) Validate() error { return builtValidate(s) }

// Keys are components.
func (Mixture) Keys(bool) []string { return []string{"components"} }

// Decode reads the components, each a weight and a distribution that is
// not a mixture.
func (Mixture) Decode(r Reader) Dist {
	var s Mixture
	for _, ct := range r.Tables("components") {
		w := ct.Float("weight", 1, 0, true)
		var sub Dist
		if ct.Required("dist") {
			if dt := ct.Sub("dist"); dt != nil {
				sub = decodeDist(dt, true)
			}
		}
		ct.Done("weight", "dist")
		s.Components = append(s.Components, Component{Weight: w, Dist: sub})
	}
	if len(s.Components) < 2 && !r.Rejected(r.Key("components")) { // not an array: said so
		r.Problem(r.Key("components"), "a mixture needs at least two components")
	}
	r.Done("dist", "components")
	return s
}

// Encode writes the components (one without a distribution, which no
// scenario decodes, as an empty table).
func (s Mixture) Encode(e Encoder) []string {
	c := make([]string, len(s.Components))
	for i, m := range s.Components {
		inner, err := e.Inline(m.Dist)
		if err != nil {
			inner = "{ }"
		}
		c[i] = fmt.Sprintf("{ weight = %s, dist = %s }", number(m.Weight), inner)
	}
	return []string{"components = [" + strings.Join(c, ", ") + "]"}
}

// loadFiles reads the components' data files.
func (s Mixture) loadFiles(key string, load func(key, file string) ([]time.Duration, bool)) Dist {
	cs := make([]Component, len(s.Components))
	for j, c := range s.Components {
		cs[j] = Component{Weight: c.Weight, Dist: LoadFiles(c.Dist, fmt.Sprintf("%s.components[%d].dist", key, j), load)}
	}
	s.Components = cs
	return s
}
