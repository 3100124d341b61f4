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
	var parts []string
	kv := func(k, v string) { parts = append(parts, k+" = "+v) }
	dur := func(k string, d time.Duration) { kv(k, strconv.Quote(d.String())) }
	num := func(k string, f float64) { kv(k, strconv.FormatFloat(f, 'g', -1, 64)) }
	kv("dist", strconv.Quote(s.Dist))
	switch s.Dist {
	case "constant":
		dur("value", s.Value)
	case "exponential":
		dur("mean", s.Mean)
	case "lognormal":
		if s.P50 > 0 {
			dur("p50", s.P50)
			dur("p99", s.P99)
		} else {
			dur("median", s.Median)
			num("sigma", s.Sigma)
		}
	case "gamma":
		dur("mean", s.Mean)
		num("shape", s.Shape)
	case "weibull", "pareto":
		dur("scale", s.Scale)
		num("shape", s.Shape)
	case "uniform":
		dur("min", s.Min)
		dur("max", s.Max)
	case "empirical":
		if s.SamplesFile != "" {
			kv("samples", strconv.Quote(s.SamplesFile))
		} else {
			q := make([]string, len(s.Quantiles))
			for i, p := range s.Quantiles {
				q[i] = fmt.Sprintf("[%s, %q]", strconv.FormatFloat(p.P, 'g', -1, 64), p.Value.String())
			}
			kv("quantiles", "["+strings.Join(q, ", ")+"]")
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
		kv("components", "["+strings.Join(c, ", ")+"]")
	}
	return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
}

// MarshalTOML renders the quota as an inline table.
func (q Quota) MarshalTOML() ([]byte, error) {
	parts := []string{"kind = " + strconv.Quote(q.Kind)}
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
			v = strconv.Quote(q.Window.String())
		case "permits":
			v = strconv.FormatInt(q.Permits, 10)
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
