package sim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/sim"
)

// rescheduler keeps a fixed population of pending events: each event fired
// schedules one more at a random future instant (the classic hold model).
type rescheduler struct {
	e      *sim.Engine
	delays []time.Duration
	i      int
}

func (r *rescheduler) Fire(now time.Duration, _ uint64) {
	r.e.At(now+r.delays[r.i&(len(r.delays)-1)], r, 0)
	r.i++
}

// BenchmarkScheduleAndPop measures one schedule plus one pop (the hold
// model) with 1,000 events pending, and with 64 (a small model's queue).
func BenchmarkScheduleAndPop(b *testing.B) {
	for _, pending := range []int{64, 1000} {
		b.Run(fmt.Sprint(pending), func(b *testing.B) { holdModel(b, pending) })
	}
}

func holdModel(b *testing.B, pending int) {
	e := sim.New(1)
	rng := rand.New(rand.NewPCG(1, 1))
	r := &rescheduler{e: e, delays: make([]time.Duration, 1<<16)}
	for i := range r.delays {
		r.delays[i] = time.Duration(rng.ExpFloat64() * float64(time.Second))
	}
	for range pending {
		e.At(time.Duration(rng.Int64N(int64(time.Second))), r, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkScheduleCancel measures scheduling a timeout and cancelling it,
// the fate of most acquisition and request deadlines.
func BenchmarkScheduleCancel(b *testing.B) {
	e := sim.New(1)
	r := &rescheduler{e: e, delays: []time.Duration{time.Second}}
	for range 1000 {
		e.After(time.Hour, r, 0)
	}
	b.ReportAllocs()
	for i := range b.N {
		t := e.After(time.Duration(i%1000)*time.Millisecond, r, 0)
		e.Cancel(t)
	}
}
