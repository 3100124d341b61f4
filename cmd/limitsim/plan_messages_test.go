package main

import (
	"strings"
	"testing"
)

// An objective on a scenario key that is not swept says to sweep it,
// rather than that the results have no field "client".
func TestObjectiveOnAnUnsweptKeySaysToSweepIt(t *testing.T) {
	code, _, errOut := cli("plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--objective", "max:client.limiter.conns.permits")
	if code != exitUsage || !strings.Contains(errOut, "a scenario key is an objective only when it is swept: add --sweep client.limiter.conns.permits=") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = cli("plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--objective", "max:goodput")
	if code != exitUsage || !strings.Contains(errOut, `no field "goodput"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// The --set and --constraint flags read back as written, which is how a
// resumed plan's changed flags are named (not as Go structs).
func TestFlagValuesReadBackAsWritten(t *testing.T) {
	var a assertions
	for _, s := range []string{"rate_429<0.01", "success_ratio>=0.99"} {
		if err := a.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.String(); got != "rate_429<0.01, success_ratio>=0.99" {
		t.Errorf("constraints read %q", got)
	}
	o := overrides{{Key: "run.duration", Value: "5s"}, {Key: "client.limiter.bucket.rate", Value: int64(90)},
		{Key: "client.limiter.bucket"}, {Key: "client.path.all.limiters", Value: []any{"a", "b"}}}
	if got := o.String(); got != `run.duration=5s client.limiter.bucket.rate=90 client.limiter.bucket= client.path.all.limiters=["a", "b"]` {
		t.Errorf("overrides read %q", got)
	}
}
