package planning

import (
	"math"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
)

// tokenBucketCandidate fits a token bucket counting requests or (byCost)
// their costs: a first rate from the admissions between refusals close
// together (the bucket empty at both), a burst from the most admitted
// from a quiet spell to the next refusal, then (search) the rate about
// the first that predicts the refusals best (refineBucket).
func tokenBucketCandidate(tr *quotaTrace, byCost, search bool) (QuotaCandidate, bool) {
	c := QuotaCandidate{QuotaShape: QuotaShape{Kind: kindname.QuotaTokenBucket, Unit: unitOf(byCost)}}
	rate := refillRate(tr, int64(time.Second), byCost)
	if rate <= 0 {
		return c, false
	}
	burst := drainBurst(tr, rate, byCost)
	if burst > 0 { // refine: gaps shorter than the time the bucket takes to fill
		if r := refillRate(tr, int64(burst/rate*1e9), byCost); r > 0 {
			rate, burst = r, drainBurst(tr, r, byCost)
		}
	}
	c.Rate, c.Burst = roundSignificant(rate, 4), max(burst, float64(tr.largestAdmitted(byCost)))
	refusals := countTrue(tr.refused)
	c.Predicted, c.Matched = scoreRefusals(tr, tokenBucketJudge(c.Rate, c.Burst), byCost)
	c.Score = jaccard(c.Predicted, c.Matched, refusals)
	if !search {
		return c, true
	}
	return refineBucket(tr, c, refusals, byCost), true
}

// refineBucket searches rates around candidate c's for the bucket that
// explains the refusals best, each with the burst drainBurst gives it: the
// refill rate read between refusals runs low when the bucket fills between
// them and wastes its refill (a burst of 1, nginx's limit_req without
// one, filled in a tenth of a second at 10/s: 10/s read as 6.3/s). A grid
// over 0.6–1.8× the estimate, then two finer ones around its best; a tie
// keeps the rounder rate, then the one nearer the estimate.
func refineBucket(tr *quotaTrace, c QuotaCandidate, refusals int64, byCost bool) QuotaCandidate {
	best, estimate := c, c.Rate
	try := func(rate float64) {
		rate = roundSignificant(rate, 4)
		burst := max(drainBurst(tr, rate, byCost), float64(tr.largestAdmitted(byCost)))
		predicted, matched := scoreRefusals(tr, tokenBucketJudge(rate, burst), byCost)
		score := jaccard(predicted, matched, refusals)
		rounder, same := significantDigits(rate), significantDigits(best.Rate)
		nearer := math.Abs(math.Log(rate/estimate)) < math.Abs(math.Log(best.Rate/estimate))
		if score > best.Score || score == best.Score && (rounder < same || rounder == same && nearer) {
			best.Rate, best.Burst, best.Predicted, best.Matched, best.Score = rate, burst, predicted, matched, score
		}
	}
	// Published quotas are round (10/s, 50/s, 600/min), and the score is
	// sharp about the true rate: each grid's best is tried rounded to two
	// and three significant digits, as is the estimate.
	round := func(r float64) {
		try(roundSignificant(r, 2))
		try(roundSignificant(r, 3))
	}
	round(estimate)
	const points = 24
	step := math.Log(1.8/0.6) / points
	for i := 0; i <= points; i++ {
		try(estimate * 0.6 * math.Exp(float64(i)*step))
	}
	for range 2 { // then finer grids, a tenth of the step each, about the best
		center := best.Rate
		round(center)
		for i := -10; i <= 10; i++ {
			try(center * math.Exp(float64(i)*step/10))
		}
		step /= 10
	}
	round(best.Rate)
	return best
}

// refillRate is the admissions between consecutive refusals at most
// within ns apart, over the time between them: a bucket's refill rate,
// empty at each refusal.
func refillRate(tr *quotaTrace, within int64, byCost bool) float64 {
	var admitted, span int64
	last, between := int64(-1), int64(0)
	for i, t := range tr.times {
		if !tr.refused[i] {
			between += tr.weight(i, byCost)
			continue
		}
		if last >= 0 && t-last <= within && t > last {
			admitted += between
			span += t - last
		}
		last, between = t, 0
	}
	if span == 0 {
		return 0
	}
	return float64(admitted) / (float64(span) / 1e9)
}

// drainBurst is, for a bucket of rate, the most admissions from any
// request to the next refusal beyond what the rate refilled meanwhile:
// the burst, rounded up (a bucket full at the stretch's start admits at
// most burst + rate·t before refusing).
func drainBurst(tr *quotaTrace, rate float64, byCost bool) float64 {
	perNs := rate / 1e9
	best := 0.0
	minSeen, n := math.Inf(1), 0.0 // n: admissions so far
	for i, t := range tr.times {
		if tr.refused[i] {
			if !math.IsInf(minSeen, 1) {
				best = max(best, n-perNs*float64(t)-minSeen)
			}
			minSeen = math.Inf(1)
			continue
		}
		minSeen = min(minSeen, n-perNs*float64(t))
		n += float64(tr.weight(i, byCost))
	}
	return math.Ceil(best - 1e-6)
}

func tokenBucketJudge(rate, burst float64) quotaJudge {
	tokens, last, started := burst, int64(0), false
	return func(t, units int64) bool {
		if started {
			tokens = min(burst, tokens+rate*float64(t-last)/1e9)
		}
		last, started = t, true
		if tokens >= float64(units)-1e-9 {
			tokens -= float64(units)
			return true
		}
		return false
	}
}

// significantDigits is how many significant digits (1 to 4) write r.
func significantDigits(r float64) int {
	for n := 1; n < 4; n++ {
		if roundSignificant(r, n) == r {
			return n
		}
	}
	return 4
}
