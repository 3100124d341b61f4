package retry

// The AWS SDKs' retry quota defaults, as the standard and adaptive retry
// modes ship them (aws-sdk-go-v2 aws/retry/standard.go: DefaultRetryRateTokens,
// DefaultRetryCost, DefaultRetryTimeoutCost, DefaultNoRetryIncrement; botocore
// retries/standard.py: RetryQuotaChecker).
const (
	// AWSQuotaTokens is the retry quota's capacity, and its content at start.
	AWSQuotaTokens = 500
	// AWSRetryCost is what a retry after an error takes from the quota.
	AWSRetryCost = 5
	// AWSTimeoutRetryCost is what a retry after a timeout takes.
	AWSTimeoutRetryCost = 10
	// AWSNoRetryIncrement is what a request that succeeds at its first
	// attempt gives to the quota.
	AWSNoRetryIncrement = 1
)

// Quota is the AWS SDKs' retry quota: a bucket of tokens, full at start,
// that every retry draws on and successes fill again. A retry the quota
// cannot pay for is not made: the error is returned. It has no clock: the
// quota refills only with successes.
//
// The zero Quota is empty and refuses every retry; use NewQuota. A Quota is
// not safe for concurrent use.
type Quota struct {
	// Capacity is the most the quota holds.
	Capacity int64
	// RetryCost and TimeoutCost are what a retry takes after an error and
	// after a timeout.
	RetryCost, TimeoutCost int64
	// NoRetryIncrement is what a first-attempt success gives back.
	NoRetryIncrement int64
	tokens           int64
}

// NewQuota returns a full quota with the AWS SDKs' defaults: 500 tokens, 5
// a retry, 10 a retry after a timeout, 1 back for a first-attempt success.
func NewQuota() *Quota {
	return &Quota{Capacity: AWSQuotaTokens, RetryCost: AWSRetryCost, TimeoutCost: AWSTimeoutRetryCost,
		NoRetryIncrement: AWSNoRetryIncrement, tokens: AWSQuotaTokens}
}

// Tokens returns what the quota holds.
func (q *Quota) Tokens() int64 { return q.tokens }

// Fill sets the quota to hold n tokens, at most its capacity.
func (q *Quota) Fill(n int64) { q.tokens = max(0, min(n, q.Capacity)) }

// Acquire takes what a retry costs (TimeoutCost after a timeout, RetryCost
// otherwise) and returns it, or returns ok false and takes nothing when
// the quota holds less: the retry is not made. 500 tokens pay for exactly
// 100 retries at 5 and refuse the 101st.
func (q *Quota) Acquire(timeout bool) (cost int64, ok bool) {
	cost = q.RetryCost
	if timeout {
		cost = q.TimeoutCost
	}
	if cost > q.tokens {
		return 0, false
	}
	q.tokens -= cost
	return cost, true
}

// Succeeded gives back, for a request that succeeded, what its last retry
// took (retryCost), or NoRetryIncrement when it was never retried
// (retryCost 0), up to the capacity. A request that fails gives nothing.
func (q *Quota) Succeeded(retryCost int64) {
	if retryCost <= 0 {
		retryCost = q.NoRetryIncrement
	}
	q.tokens = min(q.Capacity, q.tokens+retryCost)
}
