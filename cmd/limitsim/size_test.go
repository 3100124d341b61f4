package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/scenarios"
)

// The sizing table: rate = quota × 0.9 ÷ instances, a second of burst,
// concurrency = quota × mean latency (lognormal fitted to p50 and p99),
// semaphore = memory ÷ p99 response, window limit = limit − in-flight
// allowance. Each figure is checked against its arithmetic done here.
func TestSizeArithmetic(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "6000/min", "--instances", "2", "--latency-p50", "200ms", "--latency-p99", "1s",
		"--memory-budget", "512MiB", "--response-p99", "2MiB", "--window-limit", "5000", "--window", "1h", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s scenarios.Sizing
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	sigma := math.Log(1.0/0.2) / 2.3263478740408408
	mean := 0.2 * math.Exp(sigma*sigma/2)
	p, tot := s.PerInstance, s.Total
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"quota", s.Inputs.QuotaRPS, 100},
		{"mean latency", s.LatencyMean, mean},
		{"rate per instance", p.Rate, 45},
		{"burst per instance", p.Burst, 45},
		{"total rate", tot.Rate, 90},
		{"total concurrency", tot.Concurrency, 100 * mean},
		{"concurrency per instance", p.Concurrency, math.Ceil(100 * mean / 2)},
		{"memory semaphore", float64(p.MemorySemaphore), 256},
		{"window limit", float64(tot.WindowLimit), 5000 - math.Ceil(5000.0/3600*mean)},
		{"window limit per instance", float64(p.WindowLimit), math.Floor((5000 - math.Ceil(5000.0/3600*mean)) / 2)},
	} {
		if math.Abs(c.got-c.want) > 1e-6*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// --verify simulates the sized configuration: two instances sized for a
// 100/s quota stay under 1% of 429s.
func TestSizeVerify(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "100/s", "--instances", "2", "--latency-p50", "200ms", "--latency-p99", "800ms", "--verify")
	if code != exitOK || !strings.Contains(out, "verify (simulated, 2 instance(s) offered the full quota): holds") {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, bad := range [][]string{{"size"}, {"size", "--quota", "100", "--latency-p50", "1ms", "--latency-p99", "2ms"},
		{"size", "--quota", "100/s", "--latency-p50", "2ms", "--latency-p99", "1ms"},
		// A lognormal with no finite mean, and a quota below one request in
		// eleven days: the table printed a negative mean, and --verify blamed
		// the concurrency.
		{"size", "--quota", "100/s", "--latency-p50", "1ns", "--latency-p99", "2562047h"},
		{"size", "--quota", "1e-300/s", "--latency-p50", "100ms", "--latency-p99", "1s", "--verify"}} {
		if code, _, _ := cli(bad...); code != exitInvalid {
			t.Errorf("%v: exit %d, want %d", bad, code, exitInvalid)
		}
	}
}
