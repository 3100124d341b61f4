package upstream

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// adaptiveQuota is an envoy_adaptive_concurrency quota with Envoy's
// defaults, a 100 ms update interval and request_count samples.
func adaptiveQuota(requestCount int64) Quota {
	p := DefaultMinRTTCalc()
	p.RequestCount = requestCount
	return Quota{Kind: "envoy_adaptive_concurrency", SampleAggregatePercentile: DefaultSampleAggregatePercentile,
		ConcurrencyUpdateInterval: 100 * ms, MaxConcurrencyLimit: DefaultMaxConcurrencyLimit, MinRTTCalc: p}
}

// jitterStream is the filter's named stream in these tests.
func jitterStream() *rand.Rand { return rand.New(rand.NewPCG(7, 0xadc)) }

// The percentile reads circllhist's bins of two significant digits: a
// constant 10 ms (10 000 µs, bin [10 000, 11 000)) reads at p50 as the
// middle of its bin, and a rank at a bin's end reads its right edge.
func TestLatencyHistReadsCircllhistBins(t *testing.T) {
	cases := []struct {
		name    string
		samples []int64
		q       float64
		want    int64
	}{
		{"constant 10ms, p50", []int64{10000, 10000, 10000, 10000}, 0.5, 10500},
		{"constant 10ms, p90", []int64{10000, 10000, 10000, 10000, 10000}, 0.9, 10900},
		// Ranks 1 and 2 in bin [1000, 1100), 3 and 4 in [2000, 2100): p50
		// is rank 2, the first bin's end.
		{"two bins, p50 at a bin's end", []int64{1005, 1090, 2000, 2050}, 0.5, 1100},
		// p75 is rank 3 of 4: halfway through the second bin's two.
		{"two bins, p75", []int64{1005, 1090, 2000, 2050}, 0.75, 2050},
		{"single digits: 0.1 µs bins", []int64{7}, 0.5, 7},
		{"p0 is the first bin's left edge", []int64{345, 999}, 0, 340},
	}
	for _, c := range cases {
		var h latencyHist
		for _, v := range c.samples {
			h.add(v)
		}
		if got := h.take(c.q); got != c.want {
			t.Errorf("%s: %d µs, want %d", c.name, got, c.want)
		}
		if h.count != 0 {
			t.Errorf("%s: take left %d samples", c.name, h.count)
		}
	}
}

// One update by hand from Envoy's formula, minRTT 10 000 µs and buffer
// 25%: the gradient 12 500 ÷ sampleRTT clamped to [0.5, 2], then
// ⌊limit × gradient + √(limit × gradient)⌋ within [3, 1000].
func TestGradientStep(t *testing.T) {
	cases := []struct {
		limit, sampleRTT, want int64
	}{
		{10, 20000, 8},    // 0.625: 6.25 + 2.5 = 8.75
		{10, 12500, 13},   // 1: 10 + 3.162 = 13.16
		{10, 5000, 24},    // 2.5 clamped to 2: 20 + 4.472 = 24.47
		{10, 100000, 7},   // 0.125 clamped to 0.5: 5 + 2.236 = 7.24
		{990, 5000, 1000}, // 1980 + 44.5, clamped to max_concurrency_limit
		{3, 100000, 3},    // 1.5 + 1.22 = 2.72, clamped to min_concurrency
		{40, 0, 88},       // a 0 µs sample: gradient 2, 80 + 8.94
	}
	for _, c := range cases {
		a, err := newAdaptiveConcurrency(adaptiveQuota(50), jitterStream())
		if err != nil {
			t.Fatal(err)
		}
		a.minRTT, a.limit, a.sampleRTT = 10000, c.limit, c.sampleRTT
		if got := a.newLimit(); got != c.want {
			t.Errorf("limit %d, sampleRTT %d µs: new limit %d, want %d", c.limit, c.sampleRTT, got, c.want)
		}
	}
}

// serveOne forwards a request at at and answers it after lat; it fails
// the test if the filter refuses it.
func serveOne(t *testing.T, a *adaptiveConcurrency, at, lat time.Duration) {
	t.Helper()
	if !a.forward(at) {
		t.Fatalf("refused at %v (limit %d, %d outstanding)", at, a.limit, a.outstanding)
	}
	a.record(at+lat, at)
}

// The minimum RTT measurement: pinned at min_concurrency from time 0
// until request_count samples are in, then the limit grows by the
// gradient and its headroom each update; the next measurement starts
// interval plus a jitter drawn from the filter's stream after the last
// ended, pins the limit again, drops the samples of requests forwarded
// before it, and restores the limit it found when it ends.
func TestMinRTTWindowPinsAndRestores(t *testing.T) {
	a, err := newAdaptiveConcurrency(adaptiveQuota(5), jitterStream())
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if !a.forward(0) {
			t.Fatalf("request %d refused under the pinned limit 3", k)
		}
	}
	if a.forward(0) {
		t.Fatal("a fourth request forwarded while the limit is pinned at 3")
	}
	for range 3 {
		a.record(10*ms, 0)
	}
	serveOne(t, a, 10*ms, 10*ms)
	if !a.measuring() {
		t.Fatal("the measurement ended after 4 of 5 samples")
	}
	serveOne(t, a, 20*ms, 10*ms) // the fifth, answered at 30 ms
	if a.measuring() || a.minRTT != 10500 || a.limit != 3 {
		t.Fatalf("after 5 samples: measuring %v, minRTT %d µs, limit %d; want done, 10 500 µs (the bin's middle), 3", a.measuring(), a.minRTT, a.limit)
	}
	want := jitterStream()
	jitter := time.Duration(60000+want.Uint64()%9000) * ms // ⌈60 000 ms × 15%⌉ = 9000
	if a.minRTTAt != 30*ms+jitter || a.sampleAt != 130*ms {
		t.Fatalf("next measurement at %v, update at %v; want %v and 130ms", a.minRTTAt, a.sampleAt, 30*ms+jitter)
	}
	// Updates every 100 ms with 10 ms samples: gradient 13 125 ÷ 10 500 =
	// 1.25, so 3 → ⌊3.75 + 1.94⌋ = 5 → ⌊6.25 + 2.5⌋ = 8 → ⌊10 + 3.16⌋ = 13.
	for k, limit := range []int64{5, 8, 13} {
		at := 130*ms + time.Duration(k)*100*ms
		serveOne(t, a, at-50*ms, 10*ms)
		if got := a.Limit(at); got != limit {
			t.Fatalf("update %d at %v: limit %d, want %d", k+1, at, got, limit)
		}
	}
	// A request forwarded just before the measurement, answered in it.
	start := a.minRTTAt
	if !a.forward(start - ms) {
		t.Fatal("refused before the measurement")
	}
	if got := a.Limit(start); got != 3 || !a.measuring() || a.epoch != start {
		t.Fatalf("at %v: limit %d, measuring %v from %v; want 3 from %v", start, got, a.measuring(), a.epoch, start)
	}
	a.record(start+9*ms, start-ms)
	if a.hist.count != 0 {
		t.Fatal("a request forwarded before the measurement began was sampled")
	}
	for k := range 5 {
		serveOne(t, a, start+time.Duration(k)*ms, 20*ms)
	}
	if a.measuring() || a.minRTT != 20500 || a.limit != 13 {
		t.Fatalf("after the second measurement: measuring %v, minRTT %d, limit %d; want done, 20 500 µs, 13 restored", a.measuring(), a.minRTT, a.limit)
	}
}

// Five updates in a row that leave the limit at min_concurrency start a
// measurement at once: the minimum RTT may be stale.
func TestFiveUpdatesAtTheMinimumRemeasure(t *testing.T) {
	a, err := newAdaptiveConcurrency(adaptiveQuota(1), jitterStream())
	if err != nil {
		t.Fatal(err)
	}
	serveOne(t, a, 0, 10*ms) // minRTT 10 500 µs from one sample, at 10 ms
	for k := range 5 {
		at := 110*ms + time.Duration(k)*100*ms
		serveOne(t, a, at-90*ms, 80*ms) // gradient 0.5: 3 stays 3
		a.advance(at)
		if got := a.measuring(); got != (k == 4) {
			t.Fatalf("update %d at %v: measuring %v", k+1, at, got)
		}
	}
	if a.epoch != 510*ms {
		t.Fatalf("the measurement began at %v, want the fifth update, 510ms", a.epoch)
	}
}

// Out-of-range parameters are refused with the key named.
func TestAdaptiveConcurrencyRejectsBadParameters(t *testing.T) {
	for key, change := range map[string]func(q *Quota){
		"sample_aggregate_percentile":         func(q *Quota) { q.SampleAggregatePercentile = 101 },
		"concurrency_update_interval":         func(q *Quota) { q.ConcurrencyUpdateInterval = 1500 * time.Microsecond },
		"max_concurrency_limit":               func(q *Quota) { q.MaxConcurrencyLimit = 0 },
		"min_rtt_calc_params.interval":        func(q *Quota) { q.MinRTTCalc.Interval = 0 },
		"min_rtt_calc_params.request_count":   func(q *Quota) { q.MinRTTCalc.RequestCount = 0 },
		"min_rtt_calc_params.jitter":          func(q *Quota) { q.MinRTTCalc.Jitter = -1 },
		"min_rtt_calc_params.min_concurrency": func(q *Quota) { q.MinRTTCalc.MinConcurrency = 0 },
		"min_rtt_calc_params.buffer":          func(q *Quota) { q.MinRTTCalc.Buffer = 150 },
	} {
		q := adaptiveQuota(50)
		change(&q)
		_, err := newAdaptiveConcurrency(q, jitterStream())
		if !errors.Is(err, ErrQuota) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s out of range: %v", key, err)
		}
	}
}
