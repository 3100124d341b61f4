package scenarios

import (
	"strings"
	"testing"
	"time"
)

// sdkStorm is a client at 100/s against a 40/s quota: most first attempts
// get a 429. %s is the [client.retry] table's body.
const sdkStorm = `name = "storm"
[run]
seed = 3
duration = "60s"
warmup = "5s"
[workload]
arrival = "poisson"
rate = 100.0
[client]
request_timeout = "60s"
[client.on_429]
pause = "none"
honor_retry_after = false
[client.retry]
%s
[[upstream]]
host = "*"
latency = { dist = "constant", value = "50ms" }
quota = { kind = "token_bucket", rate = 40.0, burst = 40 }
`

// TestSDKPoliciesStopTheRetryStorm runs one throttling upstream with the
// generic policy (three attempts, full-jitter back-off from 1 s to 20 s)
// and with each SDK policy. Without one every 429 is retried; the AWS
// quota pays for 100 retries and then only for what successes give back
// (a retry for five first-attempt successes, or one retried success), so
// retries ≤ 100 + successes, refusals counted; gRPC's throttle (10 tokens,
// 0.1 back a success) refuses nearly every retry under 60% 429s; the AWS
// adaptive limiter paces the sends to what the quota lets through, so few
// 429s come back at all.
func TestSDKPoliciesStopTheRetryStorm(t *testing.T) {
	run := func(body string) (retries, denied, succeeded, attempts int64, rate429 float64) {
		src := strings.Replace(sdkStorm, "%s", body, 1)
		r := runSource(t, src).Results
		return r.Requests.Retries, r.Requests.RetriesDenied, r.Requests.Succeeded, r.Requests.Attempts, r.Rate429
	}
	genRetries, genDenied, _, _, _ := run("attempts = 3\nbase = \"1s\"\ncap = \"20s\"")
	awsRetries, awsDenied, awsOK, _, _ := run(`sdk = "aws-standard"`)
	grpcRetries, grpcDenied, _, _, _ := run(`sdk = "grpc"`)
	_, _, adOK, adAttempts, ad429 := run(`sdk = "aws-adaptive"`)
	t.Logf("retries (denied): generic %d (%d), aws-standard %d (%d), grpc %d (%d); adaptive: %d attempts, %d ok, 429 rate %.3f",
		genRetries, genDenied, awsRetries, awsDenied, grpcRetries, grpcDenied, adAttempts, adOK, ad429)
	if genDenied != 0 || genRetries < 2000 {
		t.Fatalf("generic policy: %d retries, %d denied; want a storm of retries, none refused", genRetries, genDenied)
	}
	if awsDenied == 0 || awsRetries > 100+awsOK || awsRetries*5 > genRetries {
		t.Errorf("aws-standard: %d retries (%d denied, %d succeeded); want at most 100 + successes and a fifth of %d", awsRetries, awsDenied, awsOK, genRetries)
	}
	if grpcDenied == 0 || grpcRetries*20 > genRetries {
		t.Errorf("grpc: %d retries (%d denied); want a twentieth of %d", grpcRetries, grpcDenied, genRetries)
	}
	if ad429 > 0.05 {
		t.Errorf("aws-adaptive: 429 rate %.3f; want the sends paced below the quota", ad429)
	}
}

// TestSDKDefaultsAndOverrides checks what each sdk sets when its keys are
// left out (AWS: 3 attempts, 1 s doubling to 20 s, the AWS back-off; gRPC:
// gRFC A6's example, 4 attempts, 0.1 s to 1 s, 10 tokens and 0.1 back;
// both: no host pause, no Retry-After), that written keys override them,
// and that gRPC's cap of 5 attempts applies with a warning.
func TestSDKDefaultsAndOverrides(t *testing.T) {
	parse := func(body string) *Scenario {
		t.Helper()
		src := strings.Replace(sdkStorm, "[client.on_429]\npause = \"none\"\nhonor_retry_after = false\n", "", 1)
		sc, err := Parse("s.toml", []byte(strings.Replace(src, "%s", body, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	cases := []struct {
		body           string
		attempts       int
		base, cap      string
		tokens, ratio  float64
		pause          string
		honor, warning bool
	}{
		{`sdk = "aws-standard"`, 3, "1s", "20s", 0, 0, "none", false, false},
		{"sdk = \"aws-adaptive\"\nattempts = 5\ncap = \"8s\"", 5, "1s", "8s", 0, 0, "none", false, false},
		{`sdk = "grpc"`, 4, "100ms", "1s", 10, 0.1, "none", false, false},
		{"sdk = \"grpc\"\nattempts = 7\ntokens = 100\ntoken_ratio = 0.5", 5, "100ms", "1s", 100, 0.5, "none", false, true},
		{"attempts = 3", 3, "1s", "30s", 0, 0, "host", true, false},
	}
	for _, c := range cases {
		sc := parse(c.body)
		r, o := sc.Client.Retry, sc.Client.On429
		if r.Attempts != c.attempts || time.Duration(r.Base).String() != c.base || time.Duration(r.Cap).String() != c.cap || r.Tokens != c.tokens || r.TokenRatio != c.ratio {
			t.Errorf("%q: attempts %d, base %v, cap %v, tokens %v, ratio %v; want %d, %s, %s, %v, %v",
				c.body, r.Attempts, r.Base, r.Cap, r.Tokens, r.TokenRatio, c.attempts, c.base, c.cap, c.tokens, c.ratio)
		}
		if o.Pause != c.pause || o.HonorRetryAfter != c.honor {
			t.Errorf("%q: on_429 pause %q, honor_retry_after %v; want %q, %v", c.body, o.Pause, o.HonorRetryAfter, c.pause, c.honor)
		}
		warned := false
		for _, w := range sc.Warnings {
			warned = warned || strings.Contains(w.Text, "caps maxAttempts at 5")
		}
		if warned != c.warning {
			t.Errorf("%q: warned of the gRPC cap: %v, want %v (%v)", c.body, warned, c.warning, sc.Warnings)
		}
	}
}
