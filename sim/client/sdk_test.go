package client

import (
	"testing"

	"github.com/limitsim/limitsim/upstream"
)

// sdkRefusing is 200 requests, one every 100 ms, against an upstream whose
// quota admits the first 5 in the hour and answers every later attempt
// with a 429 in 5 ms; the client makes up to 3 attempts, retrying at once,
// under the SDK policy sdk.
func sdkRefusing(sdk SDK) *Config {
	c := dd1(200)
	c.Limiters = nil
	c.On429 = On429{Pause: PauseNone}
	c.Retry = Retry{Attempts: 3, SDK: sdk, ThrottleTokens: 10, ThrottleRatio: 0.1}
	c.Upstreams[0].Latency = upstream.Constant{Value: 50 * ms}
	c.Upstreams[0].RejectLatency = 5 * ms
	c.Upstreams[0].Quotas = []upstream.Quota{{Kind: "fixed_window", Limit: 5, Window: 3600e9}}
	return c
}

// TestSDKRetryLimitsCountedExactly runs sdkRefusing under each SDK
// policy. AWS: each failing request makes 2 retries at 5 tokens, so the
// 500-token quota (full: the 5 successes add nothing to a full quota)
// pays for exactly 100 retries, those of the first 50 failing requests,
// and each of the other 145 is refused its first retry. gRPC (10 tokens,
// retries above 5): the first failing request fails 3 times (10 → 7, 2
// retries), the second twice (→ 5, 1 retry, then refused), and every
// later one is refused at once: 3 retries, 194 refused. Without an SDK
// every failing request retries twice: 390 retries. Under aws-adaptive
// the quota still pays for exactly 100.
func TestSDKRetryLimitsCountedExactly(t *testing.T) {
	cases := []struct {
		name             string
		sdk              SDK
		retries, refused int64
	}{
		{"none", NoSDK, 390, 0},
		{"aws-standard", AWSStandard, 100, 145},
		// Paced sends interleave the requests' attempts: the same 100
		// retries may spread over more requests, each refused once: at
		// least 145 refused (−1), at most the 195 that fail.
		{"aws-adaptive", AWSAdaptive, 100, -1},
		{"grpc", GRPC, 3, 194},
	}
	for _, c := range cases {
		out, err := Run(sdkRefusing(c.sdk), Options{})
		if err != nil {
			t.Fatal(err)
		}
		q := out.Results.Requests
		refusedOK := q.RetriesDenied == c.refused || c.refused < 0 && q.RetriesDenied >= 145 && q.RetriesDenied <= 195
		if q.Succeeded != 5 || q.Retries != c.retries || !refusedOK {
			t.Errorf("%s: %d succeeded, %d retries, %d refused; want 5, %d, %d", c.name, q.Succeeded, q.Retries, q.RetriesDenied, c.retries, c.refused)
		}
	}
}
