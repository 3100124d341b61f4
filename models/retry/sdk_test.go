package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/retry"
)

// TestAWSQuotaHundredRetries checks the AWS retry quota against its
// documented numbers: 500 tokens at 5 a retry pay for exactly 100 retries
// and refuse the 101st; a timeout retry takes 10; a first-attempt success
// gives back 1, a retried success what its retry took, never above 500.
func TestAWSQuotaHundredRetries(t *testing.T) {
	q := retry.NewQuota()
	if q.Tokens() != 500 {
		t.Fatalf("a new quota holds %d tokens, want 500", q.Tokens())
	}
	for i := 1; i <= 100; i++ {
		cost, ok := q.Acquire(false)
		if !ok || cost != 5 {
			t.Fatalf("retry %d: cost %d, ok %v; want 5, true", i, cost, ok)
		}
		if want := int64(500 - 5*i); q.Tokens() != want {
			t.Fatalf("after retry %d the quota holds %d, want %d", i, q.Tokens(), want)
		}
	}
	if cost, ok := q.Acquire(false); ok || cost != 0 || q.Tokens() != 0 {
		t.Fatalf("retry 101 with the quota at zero: cost %d, ok %v, %d left; want refused, 0 left", cost, ok, q.Tokens())
	}
	q.Succeeded(0) // a first-attempt success
	if q.Tokens() != 1 {
		t.Fatalf("one first-attempt success refunds %d, want 1", q.Tokens())
	}
	for range 4 {
		q.Succeeded(0)
	}
	if _, ok := q.Acquire(false); !ok || q.Tokens() != 0 {
		t.Fatalf("five successes pay for one retry: ok %v, %d left", ok, q.Tokens())
	}
	q.Fill(25)
	if cost, ok := q.Acquire(true); !ok || cost != 10 || q.Tokens() != 15 {
		t.Fatalf("timeout retry: cost %d, ok %v, %d left; want 10, true, 15", cost, ok, q.Tokens())
	}
	q.Fill(9)
	if _, ok := q.Acquire(true); ok || q.Tokens() != 9 {
		t.Fatalf("timeout retry with 9 left: allowed or took tokens (%d left)", q.Tokens())
	}
	q.Succeeded(10) // a retried success gives back what its retry took
	if q.Tokens() != 19 {
		t.Fatalf("retried success: %d, want 19", q.Tokens())
	}
	q.Fill(499)
	q.Succeeded(5)
	if q.Tokens() != 500 {
		t.Fatalf("refunds pass the capacity: %d, want 500", q.Tokens())
	}
}

// TestAWSBackoff checks the AWS SDKs' back-off (base 1 s, cap 20 s) for
// retries 1–4 (uniform in [0, 2ⁿ s), mean 2ⁿ⁻¹ s) and from retry 5 on (the
// 20 s cap exactly, as aws-sdk-go-v2 returns it): no draw ever exceeds
// 20 s.
func TestAWSBackoff(t *testing.T) {
	b := retry.Backoff{Kind: retry.AWS, Base: time.Second, Cap: 20 * time.Second}
	r := wlRand(21)
	const draws = 20000
	for attempt := 1; attempt <= 8; attempt++ {
		top := time.Duration(1<<attempt) * time.Second
		var sum float64
		for range draws {
			d := b.Delay(attempt, 0, r)
			if d > 20*time.Second || d < 0 {
				t.Fatalf("attempt %d drew %v, outside [0, 20s]", attempt, d)
			}
			if attempt >= 5 && d != 20*time.Second {
				t.Fatalf("attempt %d drew %v; past ⌊log₂ 20⌋ = 4 doublings it is the cap", attempt, d)
			}
			if attempt < 5 && d >= top {
				t.Fatalf("attempt %d drew %v, want below %v", attempt, d, top)
			}
			sum += float64(d)
		}
		if attempt < 5 {
			// Uniform on [0, 2ⁿ s): 5 standard errors of the mean.
			wlWithin(t, "AWS back-off mean", sum/draws, float64(top)/2, 5*float64(top)/math.Sqrt(12*draws))
		}
	}
}

// TestGRPCBackoff checks gRFC A6's back-off, random(0, min(initialBackoff ×
// multiplier^(n−1), maxBackoff)), with multiplier 1.5: the draws stay under
// 0.1 s × 1.5ⁿ⁻¹ (capped at 1 s) with mean half that.
func TestGRPCBackoff(t *testing.T) {
	b := retry.Backoff{Kind: retry.Exponential, Base: 100 * time.Millisecond, Cap: time.Second, Jitter: retry.FullJitter, Multiplier: 1.5}
	r := wlRand(22)
	const draws = 20000
	for n := 1; n <= 9; n++ {
		top := min(0.1*math.Pow(1.5, float64(n-1)), 1) * float64(time.Second)
		var sum float64
		for range draws {
			d := b.Delay(n, 0, r)
			if float64(d) > top+1 {
				t.Fatalf("retry %d drew %v, over %v", n, d, time.Duration(top))
			}
			sum += float64(d)
		}
		wlWithin(t, "gRPC back-off mean", sum/draws, top/2, 5*top/math.Sqrt(12*draws))
	}
}

// TestGRPCThrottle counts gRFC A6's throttling with maxTokens 10 and
// tokenRatio 0.1: four failures leave 6 (retries allowed), the fifth
// leaves 5 (not above 10/2: refused); from 5, ten successes make 6, and a
// failure 5 again (refused); eleven make 6.1, and a failure 5.1 (allowed).
func TestGRPCThrottle(t *testing.T) {
	th := retry.NewThrottle(10, 0.1)
	for i := 1; i <= 4; i++ {
		th.Failed()
		if !th.Allow() {
			t.Fatalf("after %d failures (%.3g tokens) retries stopped; want them until 5", i, th.Tokens())
		}
	}
	th.Failed()
	if th.Allow() || th.Tokens() != 5 {
		t.Fatalf("after 5 failures: %.3g tokens, allow %v; want 5, refused", th.Tokens(), th.Allow())
	}
	for range 10 {
		th.Succeeded()
	}
	if th.Tokens() != 6 || !th.Allow() {
		t.Fatalf("ten successes from 5: %.4g tokens; want exactly 6", th.Tokens())
	}
	th.Failed()
	if th.Allow() {
		t.Fatalf("ten successes then a failure (%.4g tokens): retries allowed; want none at 5", th.Tokens())
	}
	for range 11 {
		th.Succeeded()
	}
	th.Failed()
	if !th.Allow() || th.Tokens() != 5.1 {
		t.Fatalf("eleven successes then a failure: %.4g tokens, allow %v; want 5.1, allowed", th.Tokens(), th.Allow())
	}
	for range 200 {
		th.Succeeded()
	}
	if th.Tokens() != 10 {
		t.Fatalf("successes fill past maxTokens: %.4g", th.Tokens())
	}
	for range 20 {
		th.Failed()
	}
	if th.Tokens() != 0 {
		t.Fatalf("failures take the count below zero: %.4g", th.Tokens())
	}
}

// adSteady feeds a answers at 100 a second (one every 10 ms) over (from,
// to], each a success, and returns the last instant.
func adSteady(a *retry.Adaptive, from, to time.Duration) {
	for now := from + 10*time.Millisecond; now <= to; now += 10 * time.Millisecond {
		a.Update(now, false)
	}
}

// TestAdaptiveCubic checks the AWS adaptive limiter against CUBIC with
// β = 0.7 and C = 0.4: after 20 s of 100 answers a second the measured rate
// is 100 (half-second buckets, smoothing 0.8) and sends are not paced; a
// throttle sets the fill rate to 0.7 × 100 = 70; the following successes
// raise it along 0.4·(t − K)³ + 100, K = ∛(100 × 0.3 / 0.4) = ∛75 s, at
// t = 1, 2, 3, 4 and 6 s after the throttle.
func TestAdaptiveCubic(t *testing.T) {
	a := retry.NewAdaptive(0)
	if _, ok := a.Acquire(0); !ok {
		t.Fatal("before any throttle a send waited")
	}
	adSteady(a, 0, 20*time.Second)
	if math.Abs(a.Measured()-100) > 1e-9 || a.Enabled() {
		t.Fatalf("after 20 s at 100/s: measured %.9g, paced %v; want 100, not paced", a.Measured(), a.Enabled())
	}
	t0 := 20*time.Second + 10*time.Millisecond
	a.Update(t0, true)
	if math.Abs(a.FillRate()-70) > 1e-9 || !a.Enabled() {
		t.Fatalf("after a throttle at 100/s: fill rate %.9g, want 0.7 × 100 = 70", a.FillRate())
	}
	k := math.Cbrt(75)
	prev := t0
	for _, s := range []float64{1, 2, 3, 4, 6} {
		at := t0 + time.Duration(s*float64(time.Second))
		adSteady(a, prev, at)
		prev = at
		want := 0.4*math.Pow(s-k, 3) + 100
		if math.Abs(a.FillRate()-want) > 1e-6 {
			t.Errorf("%v s after the throttle: fill rate %.6g, want 0.4·(%v − ∛75)³ + 100 = %.6g", s, a.FillRate(), s, want)
		}
	}
}

// TestAdaptivePaces checks that after a throttle with nothing measured the
// bucket refills at the floor of 0.5 tokens a second and holds one: a
// send waits 2 s for its token, and the next 2 s more.
func TestAdaptivePaces(t *testing.T) {
	a := retry.NewAdaptive(0)
	a.Update(0, true)
	if a.FillRate() != 0.5 {
		t.Fatalf("fill rate %v after a throttle with nothing measured; want the 0.5 floor", a.FillRate())
	}
	wait, ok := a.Acquire(0)
	if ok || wait != 2*time.Second {
		t.Fatalf("send at 0: wait %v, ok %v; want 2s", wait, ok)
	}
	if _, ok := a.Acquire(2 * time.Second); !ok {
		t.Fatal("send at 2s: no token after 2 s at 0.5/s")
	}
	if wait, ok := a.Acquire(2 * time.Second); ok || wait != 2*time.Second {
		t.Fatalf("second send at 2s: wait %v, ok %v; want 2s", wait, ok)
	}
}
