package arrivalfit

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// SpreadTies moves the instants of each epoch-aligned window uniformly
// within it, in order, and leaves every instant in its own window.
func TestSpreadTies(t *testing.T) {
	origin := int64(1_790_000_000) * int64(time.Second)
	times := []time.Duration{0, 0, 0, time.Second, 3 * time.Second, 3 * time.Second}
	SpreadTies(times, origin, time.Second, rand.New(rand.NewPCG(1, 2)))
	if !slices.IsSorted(times) {
		t.Fatalf("%v: out of order", times)
	}
	for i, want := range []time.Duration{0, 0, 0, time.Second, 3 * time.Second, 3 * time.Second} {
		if times[i] < want || times[i] >= want+time.Second {
			t.Errorf("instant %d at %v, want within [%v, %v)", i, times[i], want, want+time.Second)
		}
	}
	if times[0] == times[1] && times[1] == times[2] {
		t.Errorf("the second's ties were not spread: %v", times)
	}
}
