package retry_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/retry"
)

// wlRand returns a fixed-seed random stream.
func wlRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// wlWithin fails unless |got − want| ≤ tol.
func wlWithin(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g", name, got, want, tol)
	}
}

// Backoff tests. wlBase and wlCap are the policy used unless a case says
// otherwise: 100 ms doubling to 1 s.
const (
	wlBase = 100 * time.Millisecond
	wlCap  = time.Second
)

// wlNominal is the un-jittered exponential delay: base·2^(attempt−1), capped.
func wlNominal(kind string, base, cap time.Duration, attempt int) time.Duration {
	switch kind {
	case "none":
		return 0
	case "constant":
		return base
	}
	d := base
	for range attempt - 1 {
		if d >= cap {
			break
		}
		d *= 2
	}
	return min(d, cap)
}

// TestBackoffNoJitter checks exact delays without jitter: none is always 0,
// constant always Base, exponential Base·2^(attempt−1) up to Cap and Cap ever
// after — attempts far beyond the cap included, where uncapped doubling would
// overflow int64 and wrap to zero or a negative delay. It catches the cap
// dropped (1.6 s at attempt 5), the doubling loop unbounded (overflow at
// attempt 64 and beyond), and a first retry already doubled.
func TestBackoffNoJitter(t *testing.T) {
	cases := []struct {
		kind      string
		base, cap time.Duration
		attempt   int
		want      time.Duration
	}{
		{"none", wlBase, wlCap, 1, 0},
		{"none", wlBase, wlCap, 7, 0},
		{"constant", wlBase, wlCap, 1, wlBase},
		{"constant", wlBase, wlCap, 2, wlBase},
		{"constant", wlBase, wlCap, 40, wlBase},
		{"exponential", wlBase, wlCap, 1, 100 * time.Millisecond},
		{"exponential", wlBase, wlCap, 2, 200 * time.Millisecond},
		{"exponential", wlBase, wlCap, 3, 400 * time.Millisecond},
		{"exponential", wlBase, wlCap, 4, 800 * time.Millisecond},
		{"exponential", wlBase, wlCap, 5, wlCap}, // 1.6 s uncapped
		{"exponential", wlBase, wlCap, 6, wlCap},
		{"exponential", wlBase, wlCap, 40, wlCap}, // 100ms·2³⁹ overflows int64
		{"exponential", wlBase, wlCap, 64, wlCap}, // 100ms·2⁶³ wraps to 0
		{"exponential", wlBase, wlCap, 100, wlCap},
		{"exponential", wlBase, wlCap, 1000, wlCap},
		{"exponential", 250 * time.Millisecond, wlCap, 3, wlCap}, // reaches the cap exactly
		{"exponential", 250 * time.Millisecond, wlCap, 4, wlCap},
		{"exponential", 0, wlCap, 5, 0},
		{"exponential", wlCap, wlCap, 3, wlCap},
	}
	for _, c := range cases {
		b := retry.Backoff{Kind: kindOf(c.kind), Base: c.base, Cap: c.cap, Jitter: retry.NoJitter}
		if got := b.Delay(c.attempt, 0, wlRand(8)); got != c.want {
			t.Errorf("%s base %v cap %v attempt %d: %v, want %v", c.kind, c.base, c.cap, c.attempt, got, c.want)
		}
		if got := wlNominal(c.kind, c.base, c.cap, c.attempt); got != c.want {
			t.Fatalf("test table: nominal %v for %+v", got, c)
		}
	}
}

// TestBackoffKindNoneIgnoresJitter checks that no back-off means no wait
// whatever the jitter. It catches jitter applied to a zero delay of kind
// "none" in a way that makes it non-zero (decorrelated draws from Base).
func TestBackoffKindNoneIgnoresJitter(t *testing.T) {
	r := wlRand(9)
	for _, j := range []string{"none", "full", "equal", "decorrelated"} {
		b := retry.Backoff{Kind: retry.None, Base: wlBase, Cap: wlCap, Jitter: jitterOf(j)}
		for attempt := 1; attempt <= 5; attempt++ {
			if got := b.Delay(attempt, wlCap, r); got != 0 {
				t.Fatalf("kind none, jitter %s, attempt %d: %v, want 0", j, attempt, got)
			}
		}
	}
}

// TestBackoffFullAndEqualJitter checks, for constant and exponential
// back-off and attempts 1–8, that full jitter stays in [0, d] with mean d/2
// and equal jitter in [d/2, d] with mean 3d/4, d being the capped nominal
// delay, and that no draw ever exceeds Cap. It catches jitter applied to the
// uncapped delay (draws up to 12.8 s with a 1 s cap), and a wrong jitter
// range or offset.
func TestBackoffFullAndEqualJitter(t *testing.T) {
	const draws = 4000
	r := wlRand(10)
	for _, kind := range []string{"constant", "exponential"} {
		for _, jitter := range []string{"full", "equal"} {
			b := retry.Backoff{Kind: kindOf(kind), Base: wlBase, Cap: wlCap, Jitter: jitterOf(jitter)}
			for attempt := 1; attempt <= 8; attempt++ {
				d := wlNominal(kind, wlBase, wlCap, attempt)
				lo := time.Duration(0)
				if jitter == "equal" {
					lo = d / 2
				}
				var sum float64
				for range draws {
					x := b.Delay(attempt, 0, r)
					if x < lo || x > d || x > wlCap {
						t.Fatalf("%s/%s attempt %d: %v outside [%v, %v]", kind, jitter, attempt, x, lo, d)
					}
					sum += float64(x)
				}
				// Uniform on [lo, d]: SD = (d−lo)/√12; SE of the mean over
				// 4,000 draws ≈ 0.46% of (d−lo); tolerance 5 SE.
				width := float64(d - lo)
				wlWithin(t, kind+"/"+jitter+" mean delay", sum/draws, float64(lo)+width/2, 5*width/math.Sqrt(12*draws))
			}
		}
	}
}

// wlSupport draws n delays and returns the set of values seen, sorted.
func wlSupport(b retry.Backoff, attempt int, prev time.Duration, n int) []time.Duration {
	r := wlRand(11)
	seen := map[time.Duration]bool{}
	for range n {
		seen[b.Delay(attempt, prev, r)] = true
	}
	var out []time.Duration
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// TestBackoffJitterSupport checks on nanosecond-sized delays that every
// jitter draws from the whole closed range and nothing else: full from
// {0…d}, equal from {⌊d/2⌋…d}, decorrelated from {Base…min(Cap, 3·prev)}.
// It catches a uniform draw that excludes its upper bound and equal jitter
// that loses the top value for an odd d (⌊d/2⌋ + uniform(0, ⌊d/2⌋)).
func TestBackoffJitterSupport(t *testing.T) {
	ns := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v)
		}
		return out
	}
	cases := []struct {
		name string
		b    retry.Backoff
		prev time.Duration
		want []time.Duration
	}{
		{"full d=2", retry.Backoff{Kind: retry.Constant, Base: 2, Cap: 2, Jitter: retry.FullJitter}, 0, ns(0, 1, 2)},
		{"equal d=3", retry.Backoff{Kind: retry.Constant, Base: 3, Cap: 3, Jitter: retry.EqualJitter}, 0, ns(1, 2, 3)},
		{"equal d=4", retry.Backoff{Kind: retry.Constant, Base: 4, Cap: 4, Jitter: retry.EqualJitter}, 0, ns(2, 3, 4)},
		{"decorrelated prev=2", retry.Backoff{Kind: retry.Exponential, Base: 2, Cap: 10, Jitter: retry.DecorrelatedJitter}, 2, ns(2, 3, 4, 5, 6)},
		{"decorrelated capped", retry.Backoff{Kind: retry.Exponential, Base: 2, Cap: 7, Jitter: retry.DecorrelatedJitter}, 4, ns(2, 3, 4, 5, 6, 7)},
	}
	for _, c := range cases {
		// 600 draws: the chance of missing one of ≤ 6 values is below 10⁻⁴⁰.
		if got := wlSupport(c.b, 1, c.prev, 600); !slices.Equal(got, c.want) {
			t.Errorf("%s: drew %v, want exactly %v", c.name, got, c.want)
		}
	}
}

// TestBackoffDecorrelated checks decorrelated jitter (base 10 ms, cap 1 s):
// from a fixed previous delay of 100 ms draws are uniform on [10 ms, 300 ms]
// (mean 155 ms, the top reached); near the cap they never pass it; and a
// chain of delays, each fed back as prev, stays in [Base, min(Cap, 3·prev)]
// and climbs to the cap. It catches the cap ignored (3 × 900 ms = 2.7 s) and
// a multiplier other than 3.
func TestBackoffDecorrelated(t *testing.T) {
	const base = 10 * time.Millisecond
	for _, kind := range []string{"constant", "exponential"} {
		b := retry.Backoff{Kind: kindOf(kind), Base: base, Cap: wlCap, Jitter: retry.DecorrelatedJitter}
		r := wlRand(12)

		const draws = 4000
		prev := 100 * time.Millisecond
		var sum float64
		var top time.Duration
		for range draws {
			x := b.Delay(2, prev, r)
			if x < base || x > 3*prev {
				t.Fatalf("%s: prev %v drew %v, outside [%v, %v]", kind, prev, x, base, 3*prev)
			}
			sum += float64(x)
			top = max(top, x)
		}
		width := float64(3*prev - base)
		// Uniform on [10 ms, 300 ms]; tolerance 5 SE of the mean.
		wlWithin(t, kind+" decorrelated mean from prev 100ms", sum/draws, float64(base)+width/2, 5*width/math.Sqrt(12*draws))
		if top < 3*prev-3*time.Millisecond { // P(max < 297 ms) = (1−0.0103)^4000 ≈ 10⁻¹⁸
			t.Errorf("%s: largest draw from prev %v was %v, want close to %v", kind, prev, top, 3*prev)
		}

		prev = 900 * time.Millisecond
		top = 0
		for range draws {
			x := b.Delay(2, prev, r)
			if x < base || x > wlCap {
				t.Fatalf("%s: prev %v drew %v, outside [%v, cap %v]", kind, prev, x, base, wlCap)
			}
			top = max(top, x)
		}
		if top < wlCap-5*time.Millisecond {
			t.Errorf("%s: largest draw near the cap was %v, want close to %v", kind, top, wlCap)
		}

		prev, top = base, 0
		for i := range draws {
			x := b.Delay(i+2, prev, r)
			if hi := min(wlCap, 3*prev); x < base || x > hi {
				t.Fatalf("%s: chain step %d from prev %v drew %v, outside [%v, %v]", kind, i, prev, x, base, hi)
			}
			top = max(top, x)
			prev = x
		}
		if top < wlCap*9/10 {
			t.Errorf("%s: a chain of %d delays peaked at %v, never near the cap %v", kind, draws, top, wlCap)
		}
	}
}

// TestBackoffDecorrelatedFirstRetryJitters checks the first retry (no
// previous delay, prev = 0, as the client pipeline passes it) under
// decorrelated jitter: it must be jittered like the rest, uniform on
// [Base, 3·Base] as in the usual formula sleep = min(cap, uniform(base,
// 3·sleep)) with sleep starting at base. Delay computes the range as
// [Base, max(Base, 3·0)] = [Base, Base], so every caller's first retry waits
// exactly Base: clients throttled together retry together.
func TestBackoffDecorrelatedFirstRetryJitters(t *testing.T) {
	b := retry.Backoff{Kind: retry.Exponential, Base: wlBase, Cap: wlCap, Jitter: retry.DecorrelatedJitter}
	r := wlRand(13)
	lo, hi := wlCap, time.Duration(0)
	for range 1000 {
		x := b.Delay(1, 0, r)
		if x < wlBase || x > 3*wlBase {
			t.Fatalf("first retry drew %v, outside [%v, %v]", x, wlBase, 3*wlBase)
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi-lo < wlBase {
		t.Fatalf("1000 first retries all fell in [%v, %v]: not jittered over [%v, %v]", lo, hi, wlBase, 3*wlBase)
	}
}

// kindOf and jitterOf read the names the tables use.
func kindOf(s string) retry.Kind {
	return map[string]retry.Kind{"none": retry.None, "constant": retry.Constant, "exponential": retry.Exponential}[s]
}

func jitterOf(s string) retry.Jitter {
	return map[string]retry.Jitter{"none": retry.NoJitter, "full": retry.FullJitter, "equal": retry.EqualJitter,
		"decorrelated": retry.DecorrelatedJitter}[s]
}
