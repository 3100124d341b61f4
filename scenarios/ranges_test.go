package scenarios

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/upstream"
)

// rangeScenario leaves five numbers uncertain: the workload's rate (a
// triangular range of floats), a limiter's rate (a uniform range of
// integers), a semaphore's permits (an integer key), a latency's sigma
// and a quota's burst.
const rangeScenario = `name = "ranges"
[run]
duration = "10s"

[workload]
arrival = "poisson"
rate = { low = 60.0, mid = 80.0, high = 120.0 }

[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = { low = 50, high = 91 }

[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = { low = 4, mid = 8, high = 16 }

[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "50ms", sigma = { low = 0.2, mid = 0.5, high = 0.9 } }
quota = { kind = "token_bucket", rate = 100.0, burst = { low = 5, mid = 10, high = 40 } }
`

func TestRangesReadAsTheirMid(t *testing.T) {
	sc, err := Parse("ranges.toml", []byte(rangeScenario))
	if err != nil {
		t.Fatal(err)
	}
	ln, isLogNormal := sc.Upstreams[0].Latency.Dist.(upstream.LogNormal)
	if sc.Workload.Rate != 80 || sc.Client.Limiters[0].Params.Rate != 71 || sc.Upstreams[0].Quota[0].Burst != 10 ||
		!isLogNormal || ln.Sigma != 0.5 {
		t.Errorf("the ranges do not read as their mids: rate %v, limiter rate %v, burst %v, latency %+v", sc.Workload.Rate,
			sc.Client.Limiters[0].Params.Rate, sc.Upstreams[0].Quota[0].Burst, sc.Upstreams[0].Latency.Dist)
	}
	want := []Range{
		{Key: "workload.rate", Low: 60, Mid: 80, High: 120},
		{Key: "client.limiter.bucket.rate", Low: 50, Mid: 71, High: 91, Uniform: true, Whole: true},
		{Key: "client.limiter.conns.permits", Low: 4, Mid: 8, High: 16, Whole: true},
		{Key: "upstream.*.latency.sigma", Low: 0.2, Mid: 0.5, High: 0.9},
		{Key: "upstream.*.quota.burst", Low: 5, Mid: 10, High: 40, Whole: true},
	}
	if len(sc.Ranges) != len(want) {
		t.Fatalf("ranges %+v, want %+v", sc.Ranges, want)
	}
	for _, w := range want {
		found := false
		for _, r := range sc.Ranges {
			found = found || r == w
		}
		if !found {
			t.Errorf("no range %+v among %+v", w, sc.Ranges)
		}
	}
	// Each key is named as --set names it: setting it replaces the range.
	var sets []Override
	for _, r := range sc.Ranges {
		sets = append(sets, Override{Key: r.Key, Value: r.Value(0)})
	}
	low, err := ParseWith("ranges.toml", []byte(rangeScenario), sets)
	if err != nil {
		t.Fatal(err)
	}
	if len(low.Ranges) != 0 || low.Workload.Rate != 60 || low.Client.Limiters[0].Params.Rate != 50 || low.Upstreams[0].Quota[0].Burst != 5 {
		t.Errorf("set at their lows: ranges %v, rate %v, limiter rate %v, burst %v", low.Ranges, low.Workload.Rate,
			low.Client.Limiters[0].Params.Rate, low.Upstreams[0].Quota[0].Burst)
	}
}

func TestRangeQuantile(t *testing.T) {
	tri := Range{Low: 60, Mid: 80, High: 120}
	// The triangle's distribution function at its mode is (mid−low)/(high−low).
	if got := tri.Quantile(1.0 / 3); math.Abs(got-80) > 1e-9 {
		t.Errorf("quantile at F(mode) = %v, want 80", got)
	}
	if tri.Quantile(0) != 60 || math.Abs(tri.Quantile(1)-120) > 1e-9 {
		t.Errorf("quantiles at 0 and 1: %v, %v", tri.Quantile(0), tri.Quantile(1))
	}
	// F(x) = (x−low)² / ((high−low)(mid−low)) below the mode.
	if got, want := tri.Quantile(0.1), 60+math.Sqrt(0.1*60*20); math.Abs(got-want) > 1e-9 {
		t.Errorf("quantile at 0.1 = %v, want %v", got, want)
	}
	uni := Range{Low: 50, Mid: 70.5, High: 91, Uniform: true}
	if got := uni.Quantile(0.25); got != 60.25 {
		t.Errorf("uniform quantile at 0.25 = %v, want 60.25", got)
	}
	whole := Range{Low: 5, Mid: 10, High: 40, Whole: true}
	if v, ok := whole.Value(0.5).(int64); !ok || float64(v) != math.Round(whole.Quantile(0.5)) {
		t.Errorf("a whole range's value %v (%T) is not its rounded quantile", whole.Value(0.5), whole.Value(0.5))
	}
}

func TestRangeProblemsNameFileKeyAndLine(t *testing.T) {
	cases := []struct {
		name, from, to string
		at, key, want  string // the problem is at the line of text at
	}{
		{"out of order", "high = 120.0", "high = 70.0", "high = 70.0", "workload.rate", "low ≤ mid ≤ high"},
		{"an end below the key's bound", "low = 50,", "low = 0,", "low = 0,", "client.limiter[0].rate.low", "must be greater than 0"},
		{"a float at an integer key", "low = 4,", "low = 4.5,", "low = 4.5,", "client.limiter[1].permits.low", "must be an integer"},
		{"no high", "low = 60.0, mid = 80.0, high = 120.0", "low = 60.0, mid = 80.0", "mid = 80.0", "workload.rate", "a range needs high"},
		{"an unknown key", "mid = 80.0", "mode = 80.0", "mode = 80.0", "workload.rate.mode", "unknown key in a range"},
		{"a range at a key that takes none", `duration = "10s"`, `duration = "10s"` + "\nseed = { low = 1, high = 3 }", "seed =", "run.seed", "takes no range"},
		{"a range at a string key", `arrival = "poisson"`, `arrival = { low = 1, high = 2 }`, "arrival =", "workload.arrival", "not a range"},
		// A number that names a choice rather than measures a quantity:
		// a quota's status is a code, and a cost that varies is a
		// distribution, which a range would be mistaken for.
		{"a range at a status", "burst = { low = 5, mid = 10, high = 40 } }", "burst = 10, status = { low = 429, high = 503 } }",
			"status =", "upstream[0].quota.status", "takes no range: a status is a code"},
		{"a range at a cost", `arrival = "poisson"`, `arrival = "poisson"` + "\ncost = { low = 1, high = 3 }", "cost =", "workload.cost",
			"takes no range: a cost that varies from request to request is a distribution"},
		// The limiter's own check between keys holds at each end: a
		// bucket's initial fill is a share of its burst.
		{"an end failing a check between keys", "rate = { low = 50, high = 91 }", "rate = { low = 50, high = 91 }\ninitial_fill = { low = 0.5, high = 1.5 }",
			"initial_fill", "client.limiter[0].initial_fill", "at the high end of its range, 1.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(rangeScenario, c.from) {
				t.Fatalf("the scenario has no %q", c.from)
			}
			text := strings.Replace(rangeScenario, c.from, c.to, 1)
			line := 1 + strings.Count(text[:strings.Index(text, c.at)], "\n")
			_, err := Parse("ranges.toml", []byte(text))
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("want problems, got %v", err)
			}
			for _, p := range ps {
				if p.File == "ranges.toml" && p.Line == line && p.Key == c.key && strings.Contains(p.Msg, c.want) {
					return
				}
			}
			t.Errorf("no problem at ranges.toml:%d: %s: …%s…; got:\n%v", line, c.key, c.want, err)
		})
	}
}

func TestRangeSetOnTheCommandLine(t *testing.T) {
	o, err := ParseOverride("workload.rate={ low = 10.0, mid = 20.0, high = 40.0 }")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseWith("ranges.toml", []byte(rangeScenario), []Override{o})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Workload.Rate != 20 || sc.Ranges[0] != (Range{Key: "workload.rate", Low: 10, Mid: 20, High: 40}) {
		t.Errorf("a range set by --set: rate %v, ranges %+v", sc.Workload.Rate, sc.Ranges)
	}
	bad, _ := ParseOverride("workload.rate={ low = 30.0, mid = 20.0, high = 40.0 }")
	_, err = ParseWith("ranges.toml", []byte(rangeScenario), []Override{bad})
	if err == nil || !strings.Contains(err.Error(), "--set: workload.rate: a range needs low ≤ mid ≤ high") {
		t.Errorf("a bad range set by --set: %v", err)
	}
}

// A range in a quota several upstreams share is named as --set names the
// quota, by its name, and setting that key replaces the range.
func TestRangeInASharedQuota(t *testing.T) {
	text := rangeScenario + `
[[quota]]
name = "hourly"
kind = "token_bucket"
rate = { low = 60.0, mid = 70.0, high = 90.0 }
burst = 5
`
	sc, err := Parse("ranges.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := Range{Key: "quota.hourly.rate", Low: 60, Mid: 70, High: 90}
	found := false
	for _, r := range sc.Ranges {
		found = found || r == want
	}
	if !found || len(sc.Quotas) != 1 || sc.Quotas[0].Quota.Rate != 70 {
		t.Fatalf("ranges %+v, shared quotas %+v: want %+v, read as 70", sc.Ranges, sc.Quotas, want)
	}
	set, err := ParseWith("ranges.toml", []byte(text), []Override{{Key: want.Key, Value: want.Value(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if set.Quotas[0].Quota.Rate != 60 || len(set.Ranges) != len(sc.Ranges)-1 {
		t.Errorf("%s set to its low: rate %v, ranges %+v", want.Key, set.Quotas[0].Quota.Rate, set.Ranges)
	}
}
