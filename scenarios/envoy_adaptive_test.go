package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

// adaptiveBadCases are bad inputs of Envoy's adaptive concurrency filter:
// each names the file, the line and the (nested) key.
var adaptiveBadCases = []badCase{
	{name: "without concurrency_limit_params", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency" }`}},
		key: "upstream[0].quota.concurrency_limit_params", at: "envoy_adaptive_concurrency", want: []string{"is required"}},
	{name: "without concurrency_update_interval", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = { max_concurrency_limit = 10 } }`}},
		key: "upstream[0].quota.concurrency_limit_params.concurrency_update_interval", at: "envoy_adaptive_concurrency", want: []string{"is required"}},
	{name: "update interval below a millisecond", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = { concurrency_update_interval = "500us" } }`}},
		key: "upstream[0].quota.concurrency_limit_params.concurrency_update_interval", at: "envoy_adaptive_concurrency", want: []string{"whole milliseconds"}},
	{name: "percentile over 100", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", sample_aggregate_percentile = 150, concurrency_limit_params = { concurrency_update_interval = "100ms" } }`}},
		key: "upstream[0].quota.sample_aggregate_percentile", at: "envoy_adaptive_concurrency", want: []string{"percent from 0 to 100"}},
	{name: "min_concurrency of zero", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = { concurrency_update_interval = "100ms" }, min_rtt_calc_params = { min_concurrency = 0 } }`}},
		key: "upstream[0].quota.min_rtt_calc_params.min_concurrency", at: "envoy_adaptive_concurrency", want: []string{"at least 1"}},
	{name: "misspelt nested key", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = { concurrency_update_interval = "100ms" }, min_rtt_calc_params = { bufer = 10 } }`}},
		key: "upstream[0].quota.min_rtt_calc_params.bufer", at: "envoy_adaptive_concurrency", want: []string{"did you mean buffer?"}},
	{name: "params not a table", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = "100ms" }`}},
		key: "upstream[0].quota.concurrency_limit_params", at: "envoy_adaptive_concurrency", want: []string{"must be a table"}},
	{name: "refused_counts all", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_adaptive_concurrency", concurrency_limit_params = { concurrency_update_interval = "100ms" } }` + "\nrefused_counts = \"all\""}},
		key: "upstream[0].refused_counts", at: "refused_counts", want: []string{"never does"}},
}

func TestParseAdaptiveConcurrencyBadInputs(t *testing.T) {
	for _, c := range adaptiveBadCases {
		t.Run(c.name, func(t *testing.T) {
			src := applyEdits(t, minimalScenario, c.edits)
			line := lineContaining(t, src, c.at)
			_, err := Parse(badFile, []byte(src))
			if fails := checkProblem(t, err, c.key, line, c.want, c.notWant); len(fails) > 0 {
				t.Errorf("%s\nscenario:\n%s", strings.Join(fails, "\n"), src)
			}
		})
	}
}

// The filter's keys decode with Envoy's defaults where left out, and a
// resolved scenario writes every one back as it loads.
func TestAdaptiveConcurrencyDecodes(t *testing.T) {
	defaults := upstream.DefaultMinRTTCalc()
	tuned := upstream.MinRTTCalcParams{Interval: 30 * time.Second, RequestCount: 20, Jitter: 0, MinConcurrency: 5, Buffer: 10}
	for _, c := range []struct {
		quota string
		want  upstream.Quota
	}{
		{`{ kind = "envoy_adaptive_concurrency", concurrency_limit_params = { concurrency_update_interval = "100ms" } }`,
			upstream.Quota{Kind: kindname.QuotaEnvoyAdaptiveConcurrency, SampleAggregatePercentile: 50,
				ConcurrencyUpdateInterval: 100 * time.Millisecond, MaxConcurrencyLimit: 1000, MinRTTCalc: defaults}},
		{`{ kind = "envoy_adaptive_concurrency", sample_aggregate_percentile = 90, status = 429, ` +
			`concurrency_limit_params = { concurrency_update_interval = "1s", max_concurrency_limit = 64 }, ` +
			`min_rtt_calc_params = { interval = "30s", request_count = 20, jitter = 0, min_concurrency = 5, buffer = 10 } }`,
			upstream.Quota{Kind: kindname.QuotaEnvoyAdaptiveConcurrency, SampleAggregatePercentile: 90, Status: 429,
				ConcurrencyUpdateInterval: time.Second, MaxConcurrencyLimit: 64, MinRTTCalc: tuned}},
	} {
		sc, err := Parse("t.toml", []byte(applyEdits(t, minimalScenario, []textEdit{{tokenQuota, "quota = " + c.quota}})))
		if err != nil {
			t.Fatalf("%s: %v", c.quota, err)
		}
		got := upstream.Quota(sc.Upstreams[0].Quota[0])
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s decodes as %+v, want %+v", c.quota, got, c.want)
		}
		text, err := Quota(got).MarshalTOML()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("t.toml", []byte(applyEdits(t, minimalScenario, []textEdit{{tokenQuota, "quota = " + string(text)}})))
		if err != nil || !reflect.DeepEqual(upstream.Quota(again.Upstreams[0].Quota[0]), got) {
			t.Errorf("%s written as %s loads as %+v (%v)", c.quota, text, again.Upstreams[0].Quota[0], err)
		}
	}
}

// End to end, the bundled scenario: the filter holds about
// 20 × 1.25 + √25 = 30 requests at the 20-worker server (its refusals
// keep the server's queue short), goodput stays near the server's 400/s,
// and without the filter the queue grows and goodput collapses. At 20/s,
// evenly spaced, one request is in flight at a time, below the 3 the
// minimum-RTT measurements pin (at 0 s and 60 to 69 s): none is refused.
func TestAdaptiveConcurrencyExample(t *testing.T) {
	out := runExample(t, "envoy-adaptive-concurrency")
	r := out.Results
	checkAccounting(t, r)
	// 20 workers of 50 ms serve at most 400/s: a refusal that freed a
	// worker it never took would serve more.
	if r.InFlight.Mean < 25 || r.InFlight.Mean > 40 || r.Throughput.GoodputRPS < 380 || r.Throughput.GoodputRPS > 401 || r.Requests.Failed == 0 {
		t.Fatalf("in flight %.1f, goodput %.1f/s, %d failed; want about 30 in flight, 380 to 400/s, the excess refused",
			r.InFlight.Mean, r.Throughput.GoodputRPS, r.Requests.Failed)
	}
	bare := runExample(t, "envoy-adaptive-concurrency", Override{Key: "upstream.*.quota", Value: nil}).Results
	if bare.Throughput.GoodputRPS > r.Throughput.GoodputRPS/2 {
		t.Fatalf("without the filter goodput %.1f/s, with it %.1f/s: the unbounded queue should cost most of it",
			bare.Throughput.GoodputRPS, r.Throughput.GoodputRPS)
	}
	low := runExample(t, "envoy-adaptive-concurrency", Override{Key: "workload.arrival", Value: "constant"}, Override{Key: "workload.rate", Value: 20.0}).Results
	if low.Requests.Failed != 0 {
		t.Fatalf("at 20/s, one request in flight at a time, %d refused", low.Requests.Failed)
	}
}
