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
// order), and the same scopes must leave the active set. A prefetch index
// off by one, or a loop that stops readAhead short, changes one or both.
func TestFarReadingsReadWhatNearOnesRead(t *testing.T) {
	eng := sim.New(1)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	lims := make([]models.Limiter, n)
	for i := range lims {
		// A full bucket reads 0 and leaves the set; the others read
		// their level.
		fill := 1.0
		if i%3 != 0 {
			fill = rng.Float64()
		}
		b, err := models.NewTokenBucket(models.TokenBucketConfig{Rate: 1, Burst: 10, InitialFill: fill})
		if err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 { // not a Line: read without a prefetch of its object
			lims[i] = models.NewPollingBucket(b, eng, nil)
			continue
		}
		lims[i] = models.NewLine(b, eng, models.Unbounded)
	}
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
