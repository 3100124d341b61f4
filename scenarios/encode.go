package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

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
			if k.Whole {
				v = serverRate(q.Rate, q.Per)
			}
		case "burst":
			v = strconv.FormatFloat(q.Burst, 'g', -1, 64)
		case "nodelay":
			v = strconv.FormatBool(q.NoDelay)
		case "delay":
			v = strconv.FormatInt(q.Delay, 10)
		case "conn":
			v = strconv.FormatInt(q.Permits, 10)
		case "max_tokens":
			v = strconv.FormatInt(q.MaxTokens, 10)
		case "tokens_per_fill":
			v = strconv.FormatInt(max(1, q.TokensPerFill), 10)
		case "fill_interval":
			v = tomlString(q.FillInterval.String())
		case "sample_aggregate_percentile":
			v = strconv.FormatFloat(q.SampleAggregatePercentile, 'g', -1, 64)
		case "concurrency_limit_params":
			v = fmt.Sprintf("{ concurrency_update_interval = %s, max_concurrency_limit = %d }",
				tomlString(q.ConcurrencyUpdateInterval.String()), q.MaxConcurrencyLimit)
		case "min_rtt_calc_params":
			p := q.MinRTTCalc
			v = fmt.Sprintf("{ interval = %s, request_count = %d, jitter = %s, min_concurrency = %d, buffer = %s }",
				tomlString(p.Interval.String()), p.RequestCount, strconv.FormatFloat(p.Jitter, 'g', -1, 64),
				p.MinConcurrency, strconv.FormatFloat(p.Buffer, 'g', -1, 64))
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
	if q.Status != 0 && q.Status != k.DefaultStatus() {
		parts = append(parts, "status = "+strconv.Itoa(q.Status))
	}
	return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
}

// serverRate writes a rate per second as nginx does, per the unit it was
// written in: "50r/s", "600r/m".
func serverRate(perS float64, per time.Duration) string {
	if per == time.Minute {
		return tomlString(strconv.FormatFloat(math.Round(perS*60), 'f', -1, 64) + "r/m")
	}
	return tomlString(strconv.FormatFloat(perS, 'f', -1, 64) + "r/s")
}
