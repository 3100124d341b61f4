package report_test

import (
	"strings"
	"testing"
)

// Requests refused at once are named where they were refused: shed load
// (a warning) when the limits admit most of what they can, critical when
// next to nothing gets through, and the limiter that refuses, far from
// its limit, reads as over its quota, not "not binding". The reference
// model sheds 41% at its client bound; a bucket of 1e-9/s that never
// waits refuses everything; the token bucket as bundled refuses nothing.
func TestRefusalsAreDiagnosed(t *testing.T) {
	const ref, bucket = "../scenarios/examples/reference-model.toml", "../scenarios/examples/token-bucket.toml"
	shed := analyzeFile(t, ref, "run.requests=20000")
	d := diagnosis(shed, "refusals")
	if d == nil || d.Severity != "warning" || !strings.Contains(d.Evidence, "by the client's bound on waiting requests (client.max_waiting)") {
		t.Fatalf("reference model: refusals %+v", d)
	}
	none := analyzeFile(t, bucket, "client.limiter.quota.max_waiting=0", "client.limiter.quota.initial_fill=0",
		"client.limiter.quota.rate=1e-9", "client.limiter.quota.burst=1")
	d = diagnosis(none, "refusals")
	if d == nil || d.Severity != "critical" || !strings.Contains(d.Evidence, "by quota's full waiting line") {
		t.Fatalf("a bucket that admits nothing: refusals %+v", d)
	}
	for _, v := range none.Verdicts {
		if v.Limiter == "quota" && (v.Verdict != "demand exceeds quota" || !strings.Contains(v.Why, "refused")) {
			t.Errorf("the refusing bucket reads %q: %s", v.Verdict, v.Why)
		}
	}
	if d := diagnosis(analyzeFile(t, bucket), "refusals"); d != nil {
		t.Errorf("the bundled token bucket refuses nothing, yet: %s", d.Evidence)
	}
}
