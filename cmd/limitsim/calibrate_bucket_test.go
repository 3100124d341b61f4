package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/internal/kindname"
)

// A log of Poisson arrivals at 15/s behind a token bucket of 10/s with a
// burst of 1 (nginx's limit_req without a burst) is calibrated as that
// bucket, and the scenario written, run on a fresh seed, serves what the
// log served. Read from the admissions between refusals alone the bucket
// had been 6.3/s with a burst of 2: a plan on it sized a client at 60% of
// what the server allows.
func TestCalibratedBucketServesWhatTheLogServed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("time,status,request_time\n")
	const start, span, rate, offered = 1_772_366_400.0, 300.0, 10.0, 15.0
	tokens, last := 1.0, 0.0
	for at := rng.ExpFloat64() / offered; at < span; at += rng.ExpFloat64() / offered {
		tokens, last = math.Min(1, tokens+(at-last)*rate), at
		status, latency := 429, 0.001
		if tokens >= 1 {
			tokens--
			status, latency = 200, 0.05*math.Exp(0.3*rng.NormFloat64())
		}
		fmt.Fprintf(&b, "%.6f,%d,%.6f\n", start+at, status, latency)
	}
	path := filepath.Join(t.TempDir(), "bucket.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, c, dir := calibrateJSON(t, path)
	q := c.Hosts[0].Quota
	if q.Kind != kindname.QuotaTokenBucket || math.Abs(q.Rate-rate) > 0.01*rate || q.Burst != 1 {
		t.Fatalf("inferred %s %g/s burst %g, want a token bucket of 10/s, burst 1", q.Kind, q.Rate, q.Burst)
	}
	if w := c.Workload; code != exitOK || !c.Trusted || !w.Reproduces {
		t.Fatalf("exit %d, trusted %v, workload check %+v: %s", code, c.Trusted, w, c.Verdict)
	}
	res := runJSON(t, filepath.Join(dir, calibratedScenarioFile), "--no-verify", "--set", "run.seed=7")
	if got := res.Throughput.GoodputRPS; math.Abs(got-c.Workload.LogGoodputRPS) > 0.05*c.Workload.LogGoodputRPS {
		t.Errorf("the scenario written serves %.4g/s on a fresh seed, the log %.4g/s", got, c.Workload.LogGoodputRPS)
	}
}
