package scenarios

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// stormShare runs fail-retry-storm over ten seeds with sets applied and
// returns the share of them in a metastable failure, and the first seed's
// results.
func stormShare(t *testing.T, sets ...Override) (float64, *metrics.Results) {
	t.Helper()
	sets = append(sets, Override{Key: "run.replications", Value: int64(10)})
	r := runExample(t, "fail-retry-storm", sets...).Results
	if r.Replications == nil || r.Replications.N != 10 || r.Replications.StormShare == nil {
		t.Fatalf("replications %+v: want ten with a storm share", r.Replications)
	}
	return *r.Replications.StormShare, r
}

// The retry storm (a 1 s attempt timeout against a 2 s slowdown, four
// attempts without a budget) outlives its trigger in most seeds, and is
// named with the retry settings that sustain it and the retry budget as
// its fix; with the budget it never does.
func TestRetryStormDetected(t *testing.T) {
	share, r := stormShare(t)
	if share < 0.8 {
		t.Fatalf("storm in %.0f%% of the seeds, want at least 80%%", 100*share)
	}
	d := diagnosisOf(r, "retry_storm")
	if d == nil || d.Severity != "critical" || d.Fix.Set["client.retry.budget"] != 0.1 {
		t.Fatalf("diagnoses %+v: want retry_storm, critical, setting client.retry.budget", r.Diagnoses)
	}
	for _, setting := range []string{"client.retry.budget unset", "client.retry.attempt_timeout", "attempt timeout of 1s"} {
		if !strings.Contains(d.Cause, setting) {
			t.Errorf("cause %q does not name %q", d.Cause, setting)
		}
	}
	for _, symptom := range []string{"request_timeouts", "memory_growth"} {
		if diagnosisOf(r, symptom) != nil {
			t.Errorf("%s reported beside the storm that causes it", symptom)
		}
	}
	st := r.Storm
	if st.GoodputAfter >= metrics.StormGoodputFraction*st.GoodputBefore || st.RetryShareAfter < metrics.StormRetryShare {
		t.Fatalf("storm %+v: goodput not collapsed or retries not elevated", st)
	}
	if share, r := stormShare(t, Override{Key: "client.retry.budget", Value: 0.1}); share != 0 || diagnosisOf(r, "retry_storm") != nil {
		t.Fatalf("with a retry budget: storm in %.0f%% of the seeds, diagnoses %+v", 100*share, r.Diagnoses)
	}
}

// Without retries the same slowdown leaves no storm: goodput recovers
// once the latency does (the trigger is read, the failure is not there).
func TestRetryStormNotAfterRecovery(t *testing.T) {
	share, r := stormShare(t, Override{Key: "client.retry.attempts", Value: int64(1)})
	if share != 0 || r.Storm.GoodputAfter < 0.9*r.Storm.GoodputBefore {
		t.Fatalf("without retries: storm in %.0f%% of the seeds, %+v", 100*share, r.Storm)
	}
}

// diagnosisOf returns r's diagnosis with code, or nil.
func diagnosisOf(r *metrics.Results, code string) *metrics.Diagnosis {
	for i := range r.Diagnoses {
		if r.Diagnoses[i].Code == code {
			return &r.Diagnoses[i]
		}
	}
	return nil
}

// A slow recovery is not a storm. With two attempts against a server of
// 22 workers (220/s for 200 attempts a second at most) the queue the
// slowdown left drains at a few requests a second: goodput stays near
// zero for some 50 s after the trigger ends and the retries elevated,
// so the after window's goodput is collapsed on average, but it is back
// in the window's second half. Seed 1, exactly.
func TestRetryStormNotOnASlowRecovery(t *testing.T) {
	r := runExample(t, "fail-retry-storm", Override{Key: "client.retry.attempts", Value: int64(2)},
		Override{Key: "upstream.*.workers", Value: int64(22)}, Override{Key: "run.duration", Value: "160s"}).Results
	st, limit := r.Storm, metrics.StormGoodputFraction*r.Storm.GoodputBefore
	if st.GoodputAfter >= limit || st.RetryShareAfter < metrics.StormRetryShare {
		t.Fatalf("storm %+v: want goodput collapsed over the after window and retries elevated (a slow recovery)", st)
	}
	if st.Detected || st.GoodputLate < limit || diagnosisOf(r, "retry_storm") != nil {
		t.Fatalf("storm %+v: goodput recovered in the window's second half, want no storm", st)
	}
}

// A shared [[quota]] whose schedule cuts its rate is a trigger: the run
// reads a storm from its cut to its restoration.
func TestSharedQuotaCutIsATrigger(t *testing.T) {
	r := runSource(t, `name = "shared-cut"
[run]
seed = 1
duration = "60s"
warmup = "5s"
[workload]
rate = 20.0
hosts = [{ name = "a" }, { name = "b" }]
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
[[quota]]
name = "both"
kind = "token_bucket"
rate = 50.0
burst = 50
schedule = [{ at = "20s", rate = 5.0 }, { at = "30s", rate = 50.0 }]
`).Results
	st := r.Storm
	if st == nil || st.TriggerStartS != 20 || st.TriggerEndS != 30 || st.TriggerLatencyS != 0 || st.Detected {
		t.Fatalf("storm %+v: want a trigger from 20 s to 30 s, a quota cut, and no storm (nothing retries)", st)
	}
}
