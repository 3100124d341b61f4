package client

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// readFarScopes asks for scopes ahead of the one it reads; the sum must be
// the one readScopes takes, bit for bit (the same scopes, in the same
// order), and the same scopes must leave the active set. A read loop that
// skips, repeats or stops short of a scope changes one or both (what is
// asked for ahead changes only the timing).
func TestFarReadingsReadWhatNearOnesRead(t *testing.T) {
	eng := sim.New(1)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	lims := buckets(t, eng, rng, n, 7) // every 7th not a Line: read without a prefetch of its object
	now := 100 * time.Millisecond
	for _, size := range []int{0, 1, readAhead - 1, readAhead, 2 * readAhead, 2*readAhead + 1, 1000, n} {
		read := rng.Perm(n)[:size]
		slices.Sort(read)
		near, far := allScopes(n), allScopes(n)
		want := readScopes(0, lims, near, read, now, false)
		got := readFarScopes(0, lims, far, read, now, false)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%d scopes: far readings sum to %v, near ones to %v", size, got, want)
		}
		if !slices.Equal(near, far) {
			t.Errorf("%d scopes: far readings left a different active set", size)
		}
		if size == n && slices.Equal(near, allScopes(n)) {
			t.Errorf("no scope at rest left the set: the test reads no full bucket")
		}
	}
}

// buckets returns n token buckets, a third full (at rest: usage 0), the
// others at random levels; each behind a Line, but every plain-th (if
// plain > 0) a PollingBucket, a limiter of another type.
func buckets(t *testing.T, eng *sim.Engine, rng *rand.Rand, n, plain int) []models.Limiter {
	t.Helper()
	lims := make([]models.Limiter, n)
	for i := range lims {
		fill := 1.0
		if i%3 != 0 {
			fill = rng.Float64()
		}
		b, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: 1, Burst: 10, InitialFill: fill})
		if err != nil {
			t.Fatal(err)
		}
		if plain > 0 && i%plain == plain/2 {
			lims[i] = models.NewPollingBucket(b, eng, nil)
			continue
		}
		lims[i] = models.NewLine(b, eng, models.Unbounded)
	}
	return lims
}

// A limiter's reading over several instances, each with thousands of
// scopes read a share at a time, is the mean over the scopes that the
// reading's stride and phase take, of every instance, of their usage (0
// for a scope out of the active set), and a scope found at rest leaves
// the set. The rule is restated here plainly and compared with
// sampleLimiter over enough readings to come back to the first phase. A
// list of scopes carried from one instance to the next, a stride loop
// that runs one past the end or a count that misses a scope would each
// change the readings.
func TestReadingsOfManyScopesOverInstances(t *testing.T) {
	eng := sim.New(1)
	rng := rand.New(rand.NewPCG(3, 4))
	const n, stride = 5000, 5 // n > lookaheadAbove: the far readings
	p := &pipeline{cfg: &Config{Limiters: []LimiterConfig{{Scope: PerTenant}}},
		sampling: sampling{limStride: []int{stride}, limPhase: []int{0}, limUsage: []float64{0}, limSamples: []int{0}}}
	var want []float64
	var sets [][]uint64
	for k := range 3 {
		lims := buckets(t, eng, rng, n-k, 0) // instances of different sizes
		set := allScopes(len(lims))
		for s := 7; s < len(lims); s += 11 { // some scopes out of the set already
			set[s>>6] &^= 1 << (s & 63)
		}
		p.instances = append(p.instances, &instance{limiters: [][]models.Limiter{lims}, active: [][]uint64{set}})
		sets = append(sets, slices.Clone(set))
	}
	now := 50 * time.Millisecond
	for r := range stride + 1 {
		from := r % stride
		sum, count := 0.0, 0
		for k, in := range p.instances {
			lims, set := in.limiters[0], sets[k]
			for s := from; s < len(lims); s += stride {
				count++
				if set[s>>6]&(1<<(s&63)) == 0 {
					continue
				}
				u := lims[s].Usage(now)
				sum += u
				if u == 0 && lims[s].Waiting() == 0 {
					set[s>>6] &^= 1 << (s & 63)
				}
			}
		}
		want = append(want, sum/float64(count))
	}
	for r := range stride + 1 {
		p.limUsage[0] = 0
		p.sampleLimiter(0, now)
		if got := p.limUsage[0]; math.Float64bits(got) != math.Float64bits(want[r]) {
			t.Errorf("reading %d: mean usage %v, want %v", r, got, want[r])
		}
	}
	for k, in := range p.instances {
		if !slices.Equal(in.active[0], sets[k]) {
			t.Errorf("instance %d: the readings left a different active set", k)
		}
	}
	if p.limSamples[0] != stride+1 {
		t.Errorf("%d readings counted, want %d", p.limSamples[0], stride+1)
	}
}
