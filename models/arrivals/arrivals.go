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

// ExpDriven is a process that draws exactly one standard exponential an
// arrival (r.ExpFloat64) and nothing else: Next(prev, r) is
// NextGiven(prev, r.ExpFloat64()). Its draws can be made ahead of the
// arrivals that use them.
type ExpDriven interface {
	Process
	// NextGiven is Next with the arrival's exponential already drawn.
	NextGiven(prev time.Duration, e float64) (at time.Duration, ok bool)
}

// expGap is the gap of a Poisson process at rate per second, given its
// standard exponential draw e.
func expGap(rate, e float64) time.Duration {
	return gap(e / rate * 1e9)
}

// gap converts a gap in nanoseconds to a duration, saturating: a gap past
// the last instant a duration holds becomes that instant, which after
// adds the gap to an arrival without overflowing.
func gap(ns float64) time.Duration {
	if !(ns < math.MaxInt64) { // also NaN
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// after returns prev + d, or ok = false when that is past the last
// instant a duration holds: an arrival that never comes.
func after(prev, d time.Duration) (time.Duration, bool) {
	if d > math.MaxInt64-prev {
		return 0, false
	}
	return prev + d, true
}

// Poisson arrivals at rate per second.
type Poisson struct{ Rate float64 }

// Next draws an exponential gap.
func (p *Poisson) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	return p.NextGiven(prev, r.ExpFloat64())
}

// NextGiven is Next given the draw.
func (p *Poisson) NextGiven(prev time.Duration, e float64) (time.Duration, bool) {
	return after(prev, expGap(p.Rate, e))
}

// Constant arrivals, evenly spaced at rate per second (the first at 1/rate).
type Constant struct{ Rate float64 }

// Next adds the fixed gap.
func (c Constant) Next(prev time.Duration, _ *rand.Rand) (time.Duration, bool) {
	return after(prev, gap(math.Round(1e9/c.Rate)))
}

// OnOff is Poisson at Rate during On, silent during Off, repeating from 0.
type OnOff struct {
	Rate    float64
	On, Off time.Duration
}

// Next draws in "on" time and skips the "off" periods.
func (o OnOff) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	return o.NextGiven(prev, r.ExpFloat64())
}

// NextGiven is Next given the draw.
func (o OnOff) NextGiven(prev time.Duration, e float64) (time.Duration, bool) {
	period := o.On + o.Off
	// Map prev to accumulated on-time, add an exponential amount of on-time.
	k, phase := prev/period, prev%period
	onTime, ok := after(k*o.On+min(phase, o.On), expGap(o.Rate, e))
	if !ok {
		return 0, false
	}
	k2, rem := onTime/o.On, onTime%o.On
	if k2 > (math.MaxInt64-rem)/period {
		return 0, false
	}
	return k2*period + rem, true
}

// Ramp is a Poisson process whose rate moves linearly from From to To over
// Over, then stays at To (a non-homogeneous Poisson process).
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

// Next draws the next arrival by inversion: the number of arrivals the
// rate gives between prev and the next one (its integral) is an
// exponential draw. On the ramp the integral is quadratic in the gap and
// solved in closed form; past it the process is Poisson at To. Exact
// whatever the ratio of the rates (thinning at the peak rate needs ever
// more candidates as it grows).
func (p Ramp) Next(prev time.Duration, r *rand.Rand) (time.Duration, bool) {
	return p.NextGiven(prev, r.ExpFloat64())
}

// NextGiven is Next given the draw.
func (p Ramp) NextGiven(prev time.Duration, e float64) (time.Duration, bool) {
	if prev < p.Over {
		rs := p.rate(prev)
		left := (p.Over - prev).Seconds()
		// The arrivals the rest of the ramp gives: a trapezoid.
		mass := (rs + p.To) / 2 * left
		if e < mass {
			// rs·x + b·x²/2 = e, with b the rate's slope per second:
			// x = 2e / (rs + √(rs² + 2be)), which does not cancel; the
			// root is real, since e is below the ramp's mass.
			b := (p.To - p.From) / p.Over.Seconds()
			x := 0.0 // e = 0: the same instant
			if d := rs + math.Sqrt(max(rs*rs+2*b*e, 0)); d > 0 {
				x = 2 * e / d
			}
			return after(prev, min(gap(x*1e9), p.Over-prev))
		}
		e -= mass
		prev = p.Over
	}
	if p.To <= 0 {
		return 0, false
	}
	return after(prev, gap(e/p.To*1e9))
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

// TraceSource is a recorded trace read as a run goes, rather than held
// in memory: its instants in ascending order, from a file.
type TraceSource interface {
	// Open starts a fresh reading of the trace, for one run.
	Open() (TraceReader, error)
}

// TraceReader reads a trace's instants one at a time.
type TraceReader interface {
	// Next returns the next instant, or ok = false at the end of the
	// trace or on an error, which Close then returns.
	Next() (at time.Duration, ok bool)
	// Close releases what the reading holds (a file) and returns the
	// first error reading the trace.
	Close() error
}

// Stream replays a trace read as the run goes: memory does not grow with
// its length. It opens its source at the first arrival, and ends early
// if the source fails; Close reports why. Stream is stateful: use one per
// run.
type Stream struct {
	Source TraceSource
	r      TraceReader
	err    error
	done   bool
}

// Next returns the trace's next instant.
func (s *Stream) Next(time.Duration, *rand.Rand) (time.Duration, bool) {
	if s.done {
		return 0, false
	}
	if s.r == nil {
		if s.r, s.err = s.Source.Open(); s.err != nil {
			s.r, s.done = nil, true
			return 0, false
		}
	}
	at, ok := s.r.Next()
	s.done = !ok
	return at, ok
}

// Close ends the replay, releasing its source, and returns the first
// error opening or reading it.
func (s *Stream) Close() error {
	s.done = true
	if s.r != nil {
		if err := s.r.Close(); s.err == nil {
			s.err = err
		}
		s.r = nil
	}
	return s.err
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
// (held in memory) or Source (read as the run goes) for a recorded trace.
// New builds a fresh process for each run.
type Spec struct {
	Kind    Kind
	Rate    float64
	RateTo  float64
	Ramp    time.Duration
	On, Off time.Duration
	Times   []time.Duration
	Source  TraceSource
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
		if s.Source != nil {
			return &Stream{Source: s.Source}
		}
		return &Trace{Times: s.Times}
	}
	return &Poisson{Rate: s.Rate}
}

var (
	_ ExpDriven = (*Poisson)(nil)
	_ ExpDriven = OnOff{}
	_ ExpDriven = Ramp{}
)
