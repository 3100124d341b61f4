package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
)

// When memory binds, size says what the semaphore serves at most (its
// permits ÷ the mean latency, Little's Law) apart from the rate it sizes
// for (0.9 of that): 32 permits at a mean of 1.003 s serve 31.9/s, and the
// text had said "at most 28.71/s" while the check measured 31.9/s of
// goodput. The check, offered twice the quota, measures goodput between
// the sized rate and that ceiling.
func TestSizeMemoryCeilingIsThePermitsRate(t *testing.T) {
	args := []string{"size", "--quota", "100/s", "--latency-p50", "1s", "--latency-p99", "1.2s", "--memory-budget", "64MiB", "--response-p99", "2MiB"}
	code, out, errOut := cli(append(args, "--json", "--verify")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s scenarios.Sizing
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	ceiling := float64(s.PerInstance.MemorySemaphore) / s.LatencyMean
	if s.PerInstance.MemorySemaphore != 32 || math.Abs(s.SizedRPS-0.9*ceiling) > 1e-9*ceiling {
		t.Fatalf("memory semaphore %d, sized %v/s: want 32 and 0.9 × %v", s.PerInstance.MemorySemaphore, s.SizedRPS, ceiling)
	}
	if v := s.Verify; !v.Holds || v.GoodputRPS < 0.9*s.SizedRPS || v.GoodputRPS > 1.02*ceiling {
		t.Fatalf("check: holds %v, goodput %.4g/s against sized %.4g/s and ceiling %.4g/s", v.Holds, v.GoodputRPS, s.SizedRPS, ceiling)
	}
	_, text, _ := cli(args...)
	want := fmt.Sprintf("serve at most %s requests/s in all (Little's Law), under the quota's; sized at 0.9 of that, %s/s",
		report.Number(ceiling, 4), report.Number(s.SizedRPS, 4))
	if !strings.Contains(text, want) || !strings.Contains(text, "the limiters are sized for "+report.Number(s.SizedRPS, 4)) {
		t.Fatalf("the text does not give the ceiling %q:\n%s", want, text)
	}
}
