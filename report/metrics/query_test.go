package metrics

import (
	"strings"
	"testing"
)

// Paths select list entries by name (names may hold dots), shortcuts
// expand, and a wrong path says what exists.
func TestLookupAndAssertions(t *testing.T) {
	r := &Results{Rate429: 0.02, Throughput: Throughput{GoodputRPS: 88},
		Limiters: []LimiterStats{{Name: "bucket", WaitS: Dist{P99: 0.25}}},
		Upstreams: []UpstreamStats{{Host: "api.example.com", Rate429: 0.5, RejectedBy: []QuotaRejections{
			{Quota: "token_bucket 8.33/s", Unit: "requests", Count: 3}, {Quota: "token_bucket 2000/s cost", Unit: "cost", Count: 7}}}}}
	for path, want := range map[string]float64{
		"rate_429": 0.02, "goodput_rps": 88, "limiters[bucket].wait_s.p99": 0.25, "upstreams[api.example.com].rate_429": 0.5,
		// Which quota refused: by the quota's name, or by its position.
		"upstreams[api.example.com].rejected_by[token_bucket 2000/s cost].count": 7,
		"upstreams[api.example.com].rejected_by[0].count":                        3,
		"upstreams[0].rejected_by[1].count":                                      7,
	} {
		got, err := Lookup(r, path)
		if err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", path, got, err, want)
		}
	}
	for path, want := range map[string]string{
		"limiters[nosuch].wait_s.p99": `no entry "nosuch" (entries: bucket; or a position from 0 to 0)`,
		"limiters[1].wait_s.p99":      `no entry "1"`,
		"limiters[-0].wait_s.p99":     `no entry "-0"`,
		"limiters[bucket].wait":       `no field "wait" in limiters[bucket]`,
		"scenario":                    "is not a number",
	} {
		if _, err := Lookup(r, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := Lookup(&Results{Limiters: []LimiterStats{}}, "limiters[0].wait_s.p99"); err == nil || !strings.Contains(err.Error(), `no entry "0": the list is empty`) {
		t.Errorf("an empty list: %v", err)
	}
	for expr, holds := range map[string]bool{
		"rate_429<0.01": false, "rate_429 <= 0.02": true, "goodput_rps>=80": true,
		"limiters[bucket].wait_s.p99 < 200ms": false, "limiters[bucket].wait_s.p99<300ms": true,
	} {
		a, err := ParseAssertion(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		ok, _, err := a.Check(r)
		if err != nil || ok != holds {
			t.Errorf("%s: holds %v (%v), want %v", expr, ok, err, holds)
		}
	}
	for _, bad := range []string{"rate_429", "<0.1", "rate_429<fast", "limiters[x.y<1", "rate_429<NaN", "rate_429 > nan"} {
		if _, err := ParseAssertion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// CheckPath catches what Lookup would only find after a run: a misspelt
// field, brackets on what is not a list, a path ending on an object or a
// string. Named entries are left to Lookup.
func TestCheckPath(t *testing.T) {
	for _, ok := range []string{
		"rate_429", "goodput_rps", "limiters[bucket].wait_s.p99", "limiters[0].utilisation",
		"upstreams[api.example.com].rejected_by[token_bucket 2000/s cost].count", "requests.succeeded",
		"tenants[nosuch].wait_s.p99", "little[limiter bucket].rel_error", "in_flight.mean",
	} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for path, want := range map[string]string{
		"nope":                         `no field "nope" in the results`,
		"limiters[qouta].wait_s.p999":  `no field "p999" in limiters[qouta].wait_s`,
		"limiters.wait_s.p99":          "is not an object",
		"requests[1].succeeded":        "requests is not a list",
		"limiters[bucket].wait_s":      "is not a number",
		"scenario":                     "is not a number",
		"limiters[bucket].name":        "is not a number",
		"throughput.goodput_rps.value": "throughput.goodput_rps is not an object",
	} {
		if err := CheckPath(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
		if _, err := ParseAssertion(path + " < 1"); err == nil {
			t.Errorf("--assert '%s < 1' accepted", path)
		}
	}
}
