package retry

import "math"

// The retry throttling of gRPC's example service config (gRFC A6, "Retry
// Throttling": maxTokens 10, tokenRatio 0.1). gRPC itself has no default:
// without retryThrottling in the service config retries are not throttled.
const (
	GRPCMaxTokens  = 10
	GRPCTokenRatio = 0.1
)

// milli is the token unit of a Throttle: gRFC A6 reads tokenRatio to three
// decimal places, so counting in thousandths of a token is exact.
const milli = 1000

// Throttle is gRPC's retry throttling (gRFC A6): a token count that starts
// at maxTokens; every failed attempt takes one token (never below zero),
// every success gives back tokenRatio (never above maxTokens), and retries
// are made only while more than maxTokens/2 remain. Counts are kept in
// thousandths of a token, exactly.
//
// The zero Throttle allows nothing; use NewThrottle. A Throttle is not safe
// for concurrent use.
type Throttle struct {
	max, ratio, tokens int64 // thousandths of a token
}

// NewThrottle returns a full throttle of maxTokens tokens, each success
// giving back ratio of one (read to three decimal places, as gRPC reads
// it). With maxTokens 10 and ratio 0.1, five failures in a row stop the
// retries (5 ≤ 10/2) and eleven successes start them again.
func NewThrottle(maxTokens, ratio float64) *Throttle {
	m := int64(math.Floor(maxTokens*milli + 1e-9))
	return &Throttle{max: m, ratio: int64(math.Floor(ratio*milli + 1e-9)), tokens: m}
}

// Failed takes one token for a failed attempt.
func (t *Throttle) Failed() { t.tokens = max(0, t.tokens-milli) }

// Succeeded gives back tokenRatio of a token for a success.
func (t *Throttle) Succeeded() { t.tokens = min(t.max, t.tokens+t.ratio) }

// Allow reports whether a retry may be made: more than maxTokens/2 remain.
func (t *Throttle) Allow() bool { return 2*t.tokens > t.max }

// Tokens returns the token count.
func (t *Throttle) Tokens() float64 { return float64(t.tokens) / milli }
