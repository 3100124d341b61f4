package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
)

// With no queue space, a blocked producer hands its item straight to the
// worker that frees up, and nobody barges past it.
func TestQueueZeroCapacityAdmitsBlockedProducer(t *testing.T) {
	e := modelEngine(1, 10)
	q := must[*models.Queue](t)(models.NewQueue(e, models.AtMost(0), 1))
	var log []string
	item := clock.HandlerFunc(func(now time.Duration, arg uint64) { log = append(log, "item"+string(rune('0'+arg))) })
	prod := clock.HandlerFunc(func(now time.Duration, arg uint64) { log = append(log, "put"+string(rune('0'+arg))) })
	if _, st := q.Put(0, item, 1); st != models.Granted {
		t.Fatalf("first put: %v", st)
	}
	if _, st := q.PutWait(0, item, 2, prod, 2); st != models.Blocked {
		t.Fatalf("second put: %v, want blocked", st)
	}
	q.Done(time.Second)
	if _, st := q.Put(time.Second, item, 3); st != models.Full {
		t.Fatalf("a put barged past the blocked producer: %v", st)
	}
	mustRun(t, e.Run())
	if !slices.Equal(log, []string{"put2", "item2"}) || q.BlockedProducers() != 0 || q.Busy() != 1 {
		t.Fatalf("log %v blocked %d busy %d", log, q.BlockedProducers(), q.Busy())
	}
}

// A wait beyond the representable range means "never", not a wrap-around.
func TestTokenBucketReadyAtSaturates(t *testing.T) {
	b := must[*models.TokenBucket](t)(models.NewTokenBucket(models.TokenBucketConfig{Rate: 1e-10, Burst: 1, InitialFill: 0}))
	at, ok := b.ReadyAt(0, 1)
	if !ok || at != clock.Never {
		t.Fatalf("ReadyAt = %v, %v; want clock.Never", at, ok)
	}
}
