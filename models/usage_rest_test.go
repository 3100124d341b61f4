package models_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// opFunc adapts a function to a clock.Handler.
type opFunc func(now time.Duration, arg uint64)

func (f opFunc) Fire(now time.Duration, arg uint64) { f(now, arg) }

// Every kind keeps Usage's promise that samplers rely on: once a limiter
// reads 0 with nobody waiting, it reads 0 until its next Acquire, however
// much time passes. A kind whose usage came back on its own (a window
// that re-counts old starts, a bucket that drains by itself) would be
// skipped while in use and under-report saturation.
func TestUsageAtRestStaysAtRestUntilAcquire(t *testing.T) {
	for _, k := range models.Kinds() {
		if k.Adaptive {
			continue // exempt by the promise: their usage moves with their feedback window
		}
		t.Run(k.Name, func(t *testing.T) {
			e := sim.New(1)
			p := models.Params{Rate: 20, Burst: 3, InitialFill: new(0.3), Limit: 3, Window: 200 * ms, Permits: 2,
				Initial: 20, Min: 1, Max: 40, Increase: 2, Decrease: 0.5, Interval: 100 * ms}
			lim, err := k.New(p, models.Env{Sched: e, Stream: func() *rand.Rand { return rand.New(rand.NewPCG(5, 6)) }})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			rel, releases := lim.(models.Releaser)
			held := 0
			granted := opFunc(func(time.Duration, uint64) { held++ })
			restSince := time.Duration(-1) // instant usage was first seen at rest since the last acquire
			rests, probes := 0, 0
			var op opFunc
			op = func(now time.Duration, _ uint64) {
				if releases && held > 0 && r.IntN(2) == 0 {
					rel.Release(now, 1)
					held--
				}
				switch u := lim.Usage(now); {
				case r.IntN(3) == 0:
					if _, st := lim.Acquire(now, 1, clock.Never, granted, 0); st == models.Granted {
						held++
					}
					restSince = -1
				case u == 0 && lim.Waiting() == 0 && (!releases || held == 0):
					if restSince < 0 {
						restSince = now
						rests++
					}
					probes++
				case restSince >= 0:
					t.Fatalf("usage %v at %v after reading 0 at rest at %v with no acquisition since", u, now, restSince)
				}
				if now < 60*time.Second {
					e.After(time.Duration(r.Int64N(int64(400*ms))), op, 0)
				}
			}
			e.At(0, op, 0)
			if err := e.RunUntil(61 * time.Second); err != nil {
				t.Fatal(err)
			}
			if rests < 20 || probes < 40 {
				t.Fatalf("only %d rest episodes and %d probes at rest: the test did not exercise the promise", rests, probes)
			}
		})
	}
}
