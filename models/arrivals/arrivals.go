package arrivals

import (
	"math"
	"math/rand/v2"
	"time"
)

// Process is an arrival process: a pure function of the previous arrival
// instant and a random stream, like a load generator's pacer.
type Process interface {
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
func (p *Poisson) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
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
		if t >= p.Over {
			// Past the ramp the process is Poisson at To: draw from it
			// directly (however small To is, thinning at the peak rate
			// would need ever more candidates).
			if p.To <= 0 {
				return 0, false
			}
			return t + expGap(p.To, r), true
		}
		t += expGap(peak, r)
		if r.Float64()*peak <= p.rate(t) {
			return t, true
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

// Kind selects an arrival process.
type Kind uint8

// Arrival processes.
const (
	KindPoisson Kind = iota
	KindConstant
	KindOnOff
	KindRamp
	KindTrace
)

// String returns the kind's name in a scenario's arrival key.
func (k Kind) String() string {
	switch k {
	case KindConstant:
		return "constant"
	case KindOnOff:
		return "onoff"
	case KindRamp:
		return "ramp"
	case KindTrace:
		return "trace"
	}
	return "poisson"
}

// Spec describes an arrival process: Rate per second (the start
// rate of a ramp), RateTo and Ramp for a ramp, On and Off for bursts, Times
// for a recorded trace. New builds a fresh process for each run.
type Spec struct {
	Kind    Kind
	Rate    float64
	RateTo  float64
	Ramp    time.Duration
	On, Off time.Duration
	Times   []time.Duration
}

// New returns the process the spec describes.
func (s Spec) New() Process {
	switch s.Kind {
	case KindConstant:
		return Constant{Rate: s.Rate}
	case KindOnOff:
		return OnOff{Rate: s.Rate, On: s.On, Off: s.Off}
	case KindRamp:
		return Ramp{From: s.Rate, To: s.RateTo, Over: s.Ramp}
	case KindTrace:
		return &Trace{Times: s.Times}
	}
	return &Poisson{Rate: s.Rate}
}
