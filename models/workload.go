package models

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is an arrival process: a pure function of the previous arrival
// instant and a random stream, like a load generator's pacer.
type Arrivals interface {
	// Next returns the instant of the arrival after the one at prev, or
	// ok = false when the process has no more arrivals.
	Next(prev time.Duration, r *rand.Rand) (at time.Duration, ok bool)
}

func expGap(rate float64, r *rand.Rand) time.Duration {
	return time.Duration(r.ExpFloat64() / rate * 1e9)
}

// Poisson arrivals at rate per second.
type Poisson struct{ Rate float64 }

// Next draws an exponential gap.
func (p Poisson) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	return prev + expGap(p.Rate, r), true
}

// Constant arrivals, evenly spaced at rate per second (the first at 1/rate).
type Constant struct{ Rate float64 }

// Next adds the fixed gap.
func (c Constant) Next(prev time.Duration, _ *rand.Rand) (time.Duration, bool) {
	return prev + time.Duration(math.Round(1e9/c.Rate)), true
}

// OnOff is Poisson at Rate during On, silent during Off, repeating from 0.
type OnOff struct {
	Rate    float64
	On, Off time.Duration
}

// Next draws in "on" time and skips the "off" periods.
func (o OnOff) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	period := o.On + o.Off
	// Map prev to accumulated on-time, add an exponential amount of on-time.
	k, phase := prev/period, prev%period
	onTime := k*o.On + min(phase, o.On)
	onTime += expGap(o.Rate, r)
	k2, rem := onTime/o.On, onTime%o.On
	return k2*period + rem, true
}

// Ramp is a Poisson process whose rate moves linearly from From to To over
// Over, then stays at To (non-homogeneous Poisson by thinning).
type Ramp struct {
	From, To float64
	Over     time.Duration
}

func (p Ramp) rate(t time.Duration) float64 {
	if t >= p.Over {
		return p.To
	}
	f := float64(t) / float64(p.Over)
	return p.From + f*(p.To-p.From)
}

// Next thins a Poisson process at the peak rate.
func (p Ramp) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	peak := max(p.From, p.To)
	if peak <= 0 {
		return 0, false
	}
	t := prev
	for range 1 << 20 {
		t += expGap(peak, r)
		if r.Float64()*peak <= p.rate(t) {
			return t, true
		}
		if t >= p.Over && p.To <= 0 {
			return 0, false
		}
	}
	return 0, false
}

// Trace replays recorded arrival offsets in order.
type Trace struct {
	Times []time.Duration
	i     int
}

// Next returns the next recorded instant. Trace is stateful: use one per run.
func (t *Trace) Next(time.Duration, *rand.Rand) (time.Duration, bool) {
	if t.i >= len(t.Times) {
		return 0, false
	}
	t.i++
	return t.Times[t.i-1], true
}

// Backoff computes retry delays: none, constant, or exponential from Base
// doubling to Cap, with jitter none, full (uniform 0..d), equal (d/2 plus
// uniform 0..d/2) or decorrelated (uniform Base..3×previous, capped).
type Backoff struct {
	Kind   string
	Base   time.Duration
	Cap    time.Duration
	Jitter string
}

// Delay returns the wait before retry number attempt (1 for the first
// retry); prev is the previous delay (for decorrelated jitter).
func (b Backoff) Delay(attempt int, prev time.Duration, r *rand.Rand) time.Duration {
	var d time.Duration
	switch b.Kind {
	case "none":
		return 0
	case "constant":
		d = b.Base
	default:
		d = b.Base
		for i := 1; i < attempt && d < b.Cap; i++ {
			d *= 2
		}
		d = min(d, b.Cap)
	}
	switch b.Jitter {
	case "full":
		return uniform(r, 0, d)
	case "equal":
		return d/2 + uniform(r, 0, d-d/2)
	case "decorrelated":
		hi := min(b.Cap, max(b.Base, 3*prev))
		return uniform(r, b.Base, hi)
	}
	return d
}

// ArrivalKind selects an arrival process.
type ArrivalKind uint8

// Arrival processes.
const (
	PoissonArrivals ArrivalKind = iota
	ConstantArrivals
	OnOffArrivals
	RampArrivals
	TraceArrivals
)

// ArrivalSpec describes an arrival process: Rate per second (the start
// rate of a ramp), RateTo and Ramp for a ramp, On and Off for bursts, Times
// for a recorded trace. New builds a fresh process for each run.
type ArrivalSpec struct {
	Kind    ArrivalKind
	Rate    float64
	RateTo  float64
	Ramp    time.Duration
	On, Off time.Duration
	Times   []time.Duration
}

// New returns the process the spec describes.
func (s ArrivalSpec) New() Arrivals {
	switch s.Kind {
	case ConstantArrivals:
		return Constant{Rate: s.Rate}
	case OnOffArrivals:
		return OnOff{Rate: s.Rate, On: s.On, Off: s.Off}
	case RampArrivals:
		return Ramp{From: s.Rate, To: s.RateTo, Over: s.Ramp}
	case TraceArrivals:
		return &Trace{Times: s.Times}
	}
	return Poisson{Rate: s.Rate}
}
