package scenarios

import (
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

// The retry storm (a 2 s timeout against a 3 s slowdown, ten attempts
// without a budget) outlives its trigger in most seeds, and is named with
// the retry budget as its fix; with the budget it never does.
func TestRetryStormDetected(t *testing.T) {
	share, r := stormShare(t)
	if share < 0.8 {
		t.Fatalf("storm in %.0f%% of the seeds, want at least 80%%", 100*share)
	}
	d := diagnosisOf(r, "retry_storm")
	if d == nil || d.Severity != "critical" || d.Fix.Set["client.retry.budget"] != 0.1 {
		t.Fatalf("diagnoses %+v: want retry_storm, critical, setting client.retry.budget", r.Diagnoses)
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
