package main

import (
	"slices"
	"strings"
	"testing"
)

// A run in which no request arrived says so, with or without a warm-up,
// and offers no fix: it used to read "the last request arrived at 0s …
// the backlog drains over 10s" and print a "verified" fix, run.warmup =
// "0s", that took goodput from 0/s to 0/s.
func TestARunWithoutArrivalsSaysSo(t *testing.T) {
	for _, warmup := range []string{"10s", "0s"} {
		r := runJSON(t, "token-bucket", "--set", "workload.rate=0.0001", "--set", "run.duration=20s", "--set", "run.warmup="+warmup)
		var codes []string
		for _, d := range r.Diagnoses {
			codes = append(codes, d.Code)
		}
		if !slices.Equal(codes, []string{"no_arrivals"}) || r.Fix != nil {
			t.Errorf("warm-up %s: diagnoses %v, fix %+v", warmup, codes, r.Fix)
		}
		_, out, _ := cli("run", "token-bucket", "--set", "workload.rate=0.0001", "--set", "run.duration=20s", "--set", "run.warmup="+warmup)
		if !strings.Contains(out, "no arrivals: no request arrived in the run's 20s\n") || strings.Contains(out, "backlog drains") || strings.Contains(out, "Verified fix") {
			t.Errorf("warm-up %s:\n%s", warmup, out)
		}
	}
}
