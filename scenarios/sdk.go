package scenarios

import (
	"fmt"
	"time"

	"github.com/limitsim/limitsim/models/retry"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// sdkNames are the values of client.retry.sdk.
var sdkNames = []string{"aws-standard", "aws-adaptive", "grpc"}

// grpcMaxAttempts is gRPC's cap on a retry policy's maxAttempts (gRFC A6:
// larger values are treated as 5).
const grpcMaxAttempts = 5

// grpcMaxTokens is the most gRPC's retryThrottling maxTokens may be (gRFC
// A6: in (0, 1000]).
const grpcMaxTokens = 1000

// sdkDefaults returns the [client.retry] defaults under an SDK policy
// (sdk ""; the generic defaults). AWS: aws-sdk-go-v2 aws/retry/standard.go
// (DefaultMaxAttempts 3, DefaultMaxBackoff 20 s; the back-off doubles from
// 1 s). gRPC: the example service config of gRFC A6 (maxAttempts 4,
// initialBackoff 0.1 s, maxBackoff 1 s, backoffMultiplier 2, retryThrottling
// maxTokens 10, tokenRatio 0.1): gRPC itself requires them written.
func sdkDefaults(sdk string) Retry {
	switch sdk {
	case "aws-standard", "aws-adaptive":
		return Retry{Attempts: 3, Base: Duration(time.Second), Cap: Duration(20 * time.Second)}
	case "grpc":
		return Retry{Attempts: 4, Base: Duration(100 * time.Millisecond), Cap: Duration(time.Second),
			Tokens: retry.GRPCMaxTokens, TokenRatio: retry.GRPCTokenRatio}
	}
	return Retry{Attempts: 1, Base: Duration(time.Second), Cap: Duration(30 * time.Second)}
}

// writtenSDK returns the sdk a [client] table's retry table names, if it
// is one ("" otherwise: the decoder reports a bad one). It only peeks:
// the retry table is read, and its problems reported, by retry.
func writtenSDK(client *table) string {
	r, _ := client.m["retry"].(map[string]any)
	s, _ := r["sdk"].(string)
	for _, n := range sdkNames {
		if s == n {
			return s
		}
	}
	return ""
}

// retrySDK checks [client.retry]'s keys against its sdk: both SDKs back
// off exponentially with full jitter; AWS doubles and throttles with its
// retry quota, not gRPC's tokens; gRPC caps the attempts at 5.
func (d *decoder) retrySDK(c *Retry, r *table) {
	for _, k := range []struct{ key, got, want string }{{"backoff", c.Backoff, "exponential"}, {"jitter", c.Jitter, "full"}} {
		if r.has(k.key) && !r.bad[k.key] && k.got != k.want {
			d.problem(r.key(k.key), "must be %q with sdk = %q, whose back-off is exponential with full jitter (or leave it out)", k.want, c.SDK)
		}
	}
	if c.SDK == "grpc" {
		if c.Attempts > grpcMaxAttempts {
			d.idle = append(d.idle, metrics.Warning{Text: fmt.Sprintf("%s = %d: gRPC caps maxAttempts at %d, so %d attempts are made",
				r.key("attempts"), c.Attempts, grpcMaxAttempts, grpcMaxAttempts)})
			c.Attempts = grpcMaxAttempts
		}
		if c.Attempts == 1 && r.has("attempts") {
			d.problem(r.key("attempts"), "must be at least 2 with sdk = \"grpc\" (gRPC's maxAttempts must be greater than 1)")
		}
		if c.Tokens > grpcMaxTokens && !r.bad["tokens"] {
			d.problem(r.key("tokens"), "(%g) must be at most %d with sdk = \"grpc\" (gRPC's maxTokens)", c.Tokens, grpcMaxTokens)
		}
		if c.TokenRatio > grpcMaxTokens && !r.bad["token_ratio"] {
			d.problem(r.key("token_ratio"), "(%g) must be at most %d with sdk = \"grpc\"", c.TokenRatio, grpcMaxTokens)
		}
		if c.Tokens > 0 && c.TokenRatio == 0 {
			d.problem(r.key("token_ratio"), "must be greater than 0 with sdk = \"grpc\" (gRPC's tokenRatio)")
		}
		return
	}
	if r.has("multiplier") && !r.bad["multiplier"] && c.Multiplier != 2 {
		d.problem(r.key("multiplier"), "must be 2 with sdk = %q: the AWS SDKs' back-off doubles (or leave it out)", c.SDK)
	}
	for _, k := range []struct {
		key string
		v   float64
	}{{"tokens", c.Tokens}, {"token_ratio", c.TokenRatio}} {
		if r.has(k.key) && !r.bad[k.key] && k.v != 0 {
			d.problem(r.key(k.key), "applies only with sdk = \"grpc\" or no sdk: sdk = %q limits retries with the AWS retry quota", c.SDK)
		}
	}
}

// sdk is the client's SDK policy for r, and its attempts, back-off and
// throttling as the client reads them.
func (r Retry) sdk(out *client.Retry) {
	switch r.SDK {
	case "aws-standard", "aws-adaptive":
		out.SDK = client.AWSStandard
		if r.SDK == "aws-adaptive" {
			out.SDK = client.AWSAdaptive
		}
		out.Backoff = retry.Backoff{Kind: retry.AWS, Base: time.Duration(r.Base), Cap: time.Duration(r.Cap)}
	case "grpc":
		out.SDK = client.GRPC
		out.ThrottleTokens, out.ThrottleRatio = r.Tokens, r.TokenRatio
		out.Tokens, out.TokenRatio = 0, 0 // counted exactly by the SDK's throttle instead
	}
}
