package planning

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bucketTrace is what a token bucket of rate and burst (starting full)
// does to Poisson arrivals offered at offered a second for span seconds:
// each arrival taking a token is admitted, the others refused.
func bucketTrace(rate, burst, offered, span float64, seed uint64) *quotaTrace {
	r := rand.New(rand.NewPCG(seed, 1))
	tr := &quotaTrace{remaining: -1}
	start := 1.7e18
	t, tokens, last := 0.0, burst, 0.0
	for t < span {
		t += r.ExpFloat64() / offered
		tokens = math.Min(burst, tokens+(t-last)*rate)
		last = t
		refused := tokens < 1
		if !refused {
			tokens--
		}
		tr.times = append(tr.times, int64(start+t*1e9))
		tr.refused = append(tr.refused, refused)
	}
	return tr
}

// The token bucket inferred from its refusals is the one that refused
// them: its rate within 1%, its burst exact, whether the burst is 1
// (nginx's limit_req without one: the bucket fills between refusals and
// wastes its refill, and the rate read between refusals alone had been
// 6.3/s for 10/s) or large, offered 1.5× or 3× the rate.
func TestTokenBucketInferredFromItsRefusals(t *testing.T) {
	for _, c := range []struct{ rate, burst, over float64 }{
		{10, 1, 1.5}, {10, 1, 3}, {10, 5, 1.5}, {10, 20, 1.5}, {50, 1, 1.5}, {50, 10, 3}, {2.5, 1, 1.5},
	} {
		tr := bucketTrace(c.rate, c.burst, c.over*c.rate, 600, uint64(c.rate*100+c.burst))
		got, ok := tokenBucketCandidate(tr, false, true)
		if !ok {
			t.Fatalf("%+v: no bucket candidate", c)
		}
		if math.Abs(got.Rate-c.rate) > 0.01*c.rate || got.Burst != c.burst {
			t.Errorf("%+v: inferred %g/s burst %g (agreement %.3f)", c, got.Rate, got.Burst, got.Score)
		}
	}
}
