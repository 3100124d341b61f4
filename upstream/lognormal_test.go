package upstream

import (
	"testing"
	"time"
)

var _ = example(LogNormal{Median: 200 * ms, Sigma: 0.5}, LogNormal{P50: 100 * ms, P99: 2 * time.Second})

// A lognormal takes one pair of parameters, not both.
func TestLogNormalOnePair(t *testing.T) {
	if err := (LogNormal{Median: ms, Sigma: 1, P50: ms, P99: 2 * ms}).Validate(); err == nil {
		t.Fatal("median, sigma, p50 and p99 accepted together")
	}
}
