package scenarios

import (
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// envoyAdaptiveParam decodes one key of Envoy's adaptive concurrency
// filter (its gradient controller's configuration, with Envoy's names and
// defaults); false for a key it does not know.
func (d *decoder) envoyAdaptiveParam(t *table, q *upstream.Quota, key string) bool {
	switch key {
	case "sample_aggregate_percentile":
		q.SampleAggregatePercentile = d.percent(t, key, upstream.DefaultSampleAggregatePercentile)
	case "concurrency_limit_params":
		d.concurrencyLimitParams(t, q)
	case "min_rtt_calc_params":
		d.minRTTCalcParams(t, q)
	default:
		return false
	}
	return true
}

// concurrencyLimitParams reads concurrency_limit_params, which Envoy
// requires: concurrency_update_interval (required) and
// max_concurrency_limit.
func (d *decoder) concurrencyLimitParams(t *table, q *upstream.Quota) {
	q.MaxConcurrencyLimit = upstream.DefaultMaxConcurrencyLimit
	if !t.required("concurrency_limit_params") {
		return
	}
	st := t.sub("concurrency_limit_params")
	if st.required("concurrency_update_interval") {
		q.ConcurrencyUpdateInterval = d.milliseconds(st, "concurrency_update_interval", 0)
	}
	q.MaxConcurrencyLimit = st.integer("max_concurrency_limit", upstream.DefaultMaxConcurrencyLimit, 1)
	d.atMost(st, "max_concurrency_limit", q.MaxConcurrencyLimit, maxWhole)
	st.done("concurrency_update_interval", "max_concurrency_limit")
}

// minRTTCalcParams reads min_rtt_calc_params, each key defaulting as in
// Envoy (upstream.DefaultMinRTTCalc).
func (d *decoder) minRTTCalcParams(t *table, q *upstream.Quota) {
	p := upstream.DefaultMinRTTCalc()
	defer func() { q.MinRTTCalc = p }()
	if !t.has("min_rtt_calc_params") {
		return
	}
	st := t.sub("min_rtt_calc_params")
	p.Interval = d.milliseconds(st, "interval", p.Interval)
	p.RequestCount = st.integer("request_count", p.RequestCount, 1)
	d.atMost(st, "request_count", p.RequestCount, maxWhole)
	p.Jitter = d.percent(st, "jitter", p.Jitter)
	p.MinConcurrency = st.integer("min_concurrency", p.MinConcurrency, 1)
	d.atMost(st, "min_concurrency", p.MinConcurrency, maxWhole)
	p.Buffer = d.percent(st, "buffer", p.Buffer)
	st.done("interval", "request_count", "jitter", "min_concurrency", "buffer")
}

// percent reads a percent from 0 to 100, as Envoy's Percent is written.
func (d *decoder) percent(t *table, key string, def float64) float64 {
	v := t.float(key, def, 0, false)
	if v > 100 {
		d.problem(t.key(key), "must be a percent from 0 to 100, got %v", v)
		return def
	}
	return v
}

// milliseconds reads a duration of whole milliseconds, at least 1 ms and
// at most a year, as Envoy reads its filter's intervals.
func (d *decoder) milliseconds(t *table, key string, def time.Duration) time.Duration {
	v := t.duration(key, def, 0, true)
	switch {
	case v == def:
	case v < time.Millisecond || v%time.Millisecond != 0:
		d.problem(t.key(key), "must be whole milliseconds, at least 1ms (Envoy reads it to the millisecond), got %v", v)
		return def
	case v > maxFillInterval:
		d.problem(t.key(key), "must be at most %v, got %v", maxFillInterval, v)
		return def
	}
	return v
}
