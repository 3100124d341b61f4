package client

import (
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/models/retry"
	"github.com/limitsim/limitsim/upstream"
)

// slowUpstream is one request to an upstream that answers in exactly 2 s,
// with a 500 ms attempt timeout and retries 100 ms apart.
func slowUpstream(attempts int, workers int) *Config {
	return &Config{
		Name: "slow",
		Run: RunSettings{Seed: 1, Requests: 1, Interval: time.Second, Replications: 1,
			MaxEvents: 1e6, MaxLiveRequests: 1e6, MaxEventsPerInstant: 1e6},
		Workload: Workload{Arrivals: arrivals.Spec{Kind: arrivals.KindConstant, Rate: 10}, Cost: 1,
			Hosts: []Share{{Name: "api", Weight: 1}}, Tenants: []Tenant{{Share: Share{Name: "default", Weight: 1}}}},
		Instances: 1,
		Retry: Retry{Attempts: attempts, AttemptTimeout: 500 * ms,
			Backoff: retry.Backoff{Kind: retry.Constant, Base: 100 * ms, Cap: 100 * ms}},
		Upstreams: []upstream.Config{{Host: "api", Latency: upstream.Constant{Value: 2 * time.Second}, Workers: workers}},
	}
}

// An attempt unanswered at its timeout is abandoned and retried; the
// server still works on each. One request arriving at 0.1 s is sent at
// 0.1, 0.7 and 1.3 s, abandoned at 0.6, 1.2 and 1.8 s, and ends timed
// out then; the server finishes the three attempts all the same (at 2.1,
// 2.7 and 3.3 s; with one worker, queued behind each other, at 2.1, 4.1
// and 6.1 s).
func TestAttemptTimeoutRetriesAndLeavesTheWork(t *testing.T) {
	for _, workers := range []int{0, 1} {
		out, err := Run(slowUpstream(3, workers), Options{})
		if err != nil {
			t.Fatal(err)
		}
		q := out.Results.Requests
		if q.Attempts != 3 || q.Retries != 2 || q.AttemptsTimedOut != 3 || q.TimedOut != 1 || q.Succeeded != 0 {
			t.Fatalf("workers %d: requests %+v: want 3 attempts, 2 retries, 3 timed out, the request timed out", workers, q)
		}
		if u := out.Results.Upstreams[0]; u.ServiceS.Count != 3 || u.OK != 0 {
			t.Fatalf("workers %d: the server served %d attempts (%d read OK): want 3 served, none read", workers, u.ServiceS.Count, u.OK)
		}
		if got := out.Results.ElapsedS; got != 1.8 {
			t.Errorf("workers %d: elapsed %v s, want the request's end at 1.8 s", workers, got)
		}
		if out.Results.AttemptTimeoutS != 0.5 {
			t.Errorf("attempt_timeout_s %v", out.Results.AttemptTimeoutS)
		}
	}
}

// An attempt answered within its timeout is not abandoned: its timer is
// cancelled with the answer.
func TestAttemptTimeoutAnsweredInTime(t *testing.T) {
	cfg := slowUpstream(3, 0)
	cfg.Upstreams[0].Latency = upstream.Constant{Value: 400 * ms}
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q := out.Results.Requests; q.Succeeded != 1 || q.Attempts != 1 || q.AttemptsTimedOut != 0 {
		t.Fatalf("requests %+v: want one attempt, answered", q)
	}
}

// A retry budget refuses the retry of a timed-out attempt as it refuses
// a 429's: the request ends timed out, the refusal counted.
func TestAttemptTimeoutWithinTheBudget(t *testing.T) {
	cfg := slowUpstream(3, 0)
	cfg.Retry.Budget, cfg.Retry.BudgetWindow = 0.5, 10*time.Second
	out, err := Run(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q := out.Results.Requests; q.Attempts != 1 || q.RetriesDenied != 1 || q.TimedOut != 1 {
		t.Fatalf("requests %+v: one request allows half a retry: want one attempt, its retry denied", q)
	}
}

// The storm's settling time is three times the longest a request lasts:
// its request timeout; without one, its back-offs and, with an attempt
// timeout, every attempt's wait for an answer; the longest duration when
// that overflows or nothing bounds the attempts.
func TestStormSettle(t *testing.T) {
	for _, c := range []struct {
		timeout, attemptTimeout time.Duration
		attempts                int
		want                    time.Duration
	}{
		{5 * time.Second, 500 * ms, 3, 15 * time.Second},
		{0, 0, 1, 0},
		{0, 0, 3, 600 * ms},         // two back-offs of 100 ms
		{0, 500 * ms, 3, 5100 * ms}, // and three attempts of 500 ms
		{0, time.Duration(1) << 62, 3, time.Duration(1<<63 - 1)},
	} {
		cfg := slowUpstream(c.attempts, 0)
		cfg.RequestTimeout, cfg.Retry.AttemptTimeout = c.timeout, c.attemptTimeout
		if got := stormSettle(cfg); got != c.want {
			t.Errorf("%+v: settle %v, want %v", c, got, c.want)
		}
	}
}
