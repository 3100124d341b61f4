package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// Latency is an upstream's latency distribution in a scenario file.
type Latency upstream.Spec

// Quota is an upstream's server-side quota in a scenario file.
type Quota upstream.Quota

// Quotas are an upstream's quotas: one is written as an inline table,
// several as an array of them (all enforced).
type Quotas []Quota

// MarshalTOML renders one quota as an inline table, several as an array.
func (qs Quotas) MarshalTOML() ([]byte, error) {
	parts := make([]string, len(qs))
	for i, q := range qs {
		b, err := q.MarshalTOML()
		if err != nil {
			return nil, err
		}
		parts[i] = string(b)
	}
	if len(parts) == 1 {
		return []byte(parts[0]), nil
	}
	return []byte("[" + strings.Join(parts, ", ") + "]"), nil
}

// MarshalTOML renders the distribution as the inline table a scenario file
// uses, so a resolved scenario reads back as it was run.
func (l Latency) MarshalTOML() ([]byte, error) {
	s := upstream.Spec(l)
	parts := distFields(s, func(d time.Duration) string { return tomlString(d.String()) })
	switch s.Dist {
	case "empirical":
		if s.SamplesFile != "" {
			parts = append(parts, "samples = "+tomlString(s.SamplesFile))
		}
	case "mixture":
		c := make([]string, len(s.Mixture))
		for i, m := range s.Mixture {
			inner, err := Latency(m.Dist).MarshalTOML()
			if err != nil {
				return nil, err
			}
			c[i] = fmt.Sprintf("{ weight = %s, dist = %s }", strconv.FormatFloat(m.Weight, 'g', -1, 64), inner)
		}
		parts = append(parts, "components = ["+strings.Join(c, ", ")+"]")
	}
	return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
}

// distFields renders a distribution's dist and parameter keys, its
// values (durations, or counts) written by val; a mixture's components
// and an empirical samples file are left to the caller.
func distFields(s upstream.Spec, val func(time.Duration) string) []string {
	parts := []string{"dist = " + tomlString(s.Dist)}
	kv := func(k string, d time.Duration) { parts = append(parts, k+" = "+val(d)) }
	num := func(k string, f float64) { parts = append(parts, k+" = "+strconv.FormatFloat(f, 'g', -1, 64)) }
	switch s.Dist {
	case "constant":
		kv("value", s.Value)
	case "exponential":
		kv("mean", s.Mean)
	case "lognormal":
		if s.P50 > 0 {
			kv("p50", s.P50)
			kv("p99", s.P99)
		} else {
			kv("median", s.Median)
			num("sigma", s.Sigma)
		}
	case "gamma":
		kv("mean", s.Mean)
		num("shape", s.Shape)
	case "weibull", "pareto":
		kv("scale", s.Scale)
		num("shape", s.Shape)
	case "uniform":
		kv("min", s.Min)
		kv("max", s.Max)
	case "empirical":
		if s.SamplesFile == "" {
			q := make([]string, len(s.Quantiles))
			for i, p := range s.Quantiles {
				q[i] = fmt.Sprintf("[%s, %s]", strconv.FormatFloat(p.P, 'g', -1, 64), val(p.Value))
			}
			parts = append(parts, "quantiles = ["+strings.Join(q, ", ")+"]")
		}
	}
	return parts
}

// MarshalTOML renders the quota as an inline table.
func (q Quota) MarshalTOML() ([]byte, error) {
	parts := []string{"kind = " + tomlString(q.Kind)}
	k, err := upstream.LookupQuota(q.Kind)
	if err != nil {
		return nil, err
	}
	for _, key := range k.Keys {
		var v string
		switch key {
		case "rate":
			v = strconv.FormatFloat(q.Rate, 'g', -1, 64)
		case "burst":
			v = strconv.FormatFloat(q.Burst, 'g', -1, 64)
		case "limit":
			v = strconv.FormatInt(q.Limit, 10)
		case "window":
			v = tomlString(q.Window.String())
		case "permits":
			v = strconv.FormatInt(q.Permits, 10)
		case "unit":
			if !upstream.Quota(q).CountsCost() {
				continue // counting requests, the default
			}
			v = tomlString(q.Unit)
		case "schedule":
			if len(q.Schedule) == 0 {
				continue
			}
			steps := make([]string, len(q.Schedule))
			for i, st := range q.Schedule {
				steps[i] = fmt.Sprintf("{ at = %q, rate = %s }", st.At.String(), strconv.FormatFloat(st.Rate, 'g', -1, 64))
			}
			v = "[" + strings.Join(steps, ", ") + "]"
		default:
			return nil, fmt.Errorf("quota kind %s: no encoding for key %s", q.Kind, key)
		}
		parts = append(parts, key+" = "+v)
	}
	return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
}
