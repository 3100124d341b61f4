package sim_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/sim"
)

// mm1 is an M/M/1 queue on the engine alone: Poisson arrivals, one server
// with exponential service times, an unbounded FIFO queue. Its events are
// an arrival and a departure per customer, the model of the published
// event rates of simulation kernels. Only the number in the system is
// kept, with its time integral for the mean.
type mm1 struct {
	e            *sim.Engine
	rng          *rand.Rand
	arrivalMean  float64 // mean gap between arrivals (ns)
	serviceMean  float64 // mean service time (ns)
	arrivalsLeft int
	inSystem     int
	area         float64 // ∫ inSystem dt (customer·ns)
	last         time.Duration
}

type (
	mm1Arrival   mm1
	mm1Departure mm1
)

// newMM1 returns the queue at utilisation rho (service mean 1 ms) with
// customers arrivals to come, seeded.
func newMM1(rho float64, customers int, seed uint64) *mm1 {
	e := sim.New(seed)
	m := &mm1{e: e, rng: e.Stream("mm1"), serviceMean: 1e6, arrivalMean: 1e6 / rho, arrivalsLeft: customers}
	e.At(m.gap(m.arrivalMean), (*mm1Arrival)(m), 0)
	return m
}

func (m *mm1) gap(mean float64) time.Duration { return time.Duration(m.rng.ExpFloat64() * mean) }

// count moves the number in the system by d at now.
func (m *mm1) count(now time.Duration, d int) {
	m.area += float64(m.inSystem) * float64(now-m.last)
	m.last = now
	m.inSystem += d
}

func (a *mm1Arrival) Fire(now time.Duration, _ uint64) {
	m := (*mm1)(a)
	m.count(now, 1)
	if m.inSystem == 1 { // the server was idle
		m.e.Post(now+m.gap(m.serviceMean), (*mm1Departure)(m), 0)
	}
	if m.arrivalsLeft--; m.arrivalsLeft > 0 {
		m.e.Post(now+m.gap(m.arrivalMean), a, 0)
	}
}

func (d *mm1Departure) Fire(now time.Duration, _ uint64) {
	m := (*mm1)(d)
	m.count(now, -1)
	if m.inSystem > 0 {
		m.e.Post(now+m.gap(m.serviceMean), d, 0)
	}
}

// TestMM1MeanInSystem holds the benchmark's model to queueing theory: the
// mean number in an M/M/1 system is ρ/(1−ρ), 1 at ρ = 0.5 (within 5% over
// 400,000 customers).
func TestMM1MeanInSystem(t *testing.T) {
	m := newMM1(0.5, 400_000, 1)
	if err := m.e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := m.e.Events(); got != 800_000 {
		t.Fatalf("events %d, want an arrival and a departure for each of 400,000 customers", got)
	}
	if mean := m.area / float64(m.last); math.Abs(mean-1) > 0.05 {
		t.Fatalf("mean number in system %.4f, want ρ/(1−ρ) = 1 ± 0.05", mean)
	}
}

// cimbaEventsPerSecond is the published speed of Cimba, a discrete-event
// simulation kernel in C and assembly, on an M/M/1 queue on one core:
// about 42 million events a second (https://github.com/ambonvik/cimba,
// its M/M/1 speed test). It anchors BenchmarkMM1 to what a compiled
// kernel reaches on the same model.
const cimbaEventsPerSecond = 42e6

// BenchmarkMM1 runs an M/M/1 queue at ρ = 0.9 on the engine alone, b.N
// events (an arrival and a departure per customer, each drawing one
// exponential variate), and reports events per second on the one core it
// runs on, the figure simulation kernels publish for this model, and its
// ratio to Cimba's (cimbaEventsPerSecond), like for like.
func BenchmarkMM1(b *testing.B) {
	m := newMM1(0.9, max(1, b.N/2), 1)
	b.ReportAllocs()
	b.ResetTimer()
	if err := m.e.Run(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	perSecond := float64(m.e.Events()) / b.Elapsed().Seconds()
	b.ReportMetric(perSecond, "events/s/core")
	b.ReportMetric(perSecond/cimbaEventsPerSecond, "xCimba")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(m.e.Events()), "ns/event")
}
