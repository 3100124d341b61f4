package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// VegasConfig configures a Vegas concurrency limit.
type VegasConfig struct {
	Initial, Min, Max int64
	MaxWaiting        Bound
	// Probe makes Vegas forget its least latency every Probe × limit
	// windows (times a random factor in [0.5, 1)), taking the current
	// window's as the new one, as Netflix's probeMultiplier does: without
	// it a Vegas limit takes a lasting rise in the server's own latency
	// (a degraded upstream) for queueing and shrinks for as long as it
	// lasts. 0 never probes. Gradient2 ignores it.
	Probe float64
	// Rand draws the probe's random factor; required when Probe > 0.
	Rand *rand.Rand
}

// Vegas is a concurrency limit set from latency, in the style of TCP
// Vegas as Netflix's concurrency-limits adapts it: answers are averaged
// over windows of vegasWindow of them (one latency is noise, not
// queueing); it keeps the least window average seen (the latency without
// queueing) and, from each window, estimates how many requests queue at
// the server, L × (1 − rtt_min ÷ rtt). With almost no queue (≤ log10 L) the limit grows by 6·log10 L
// (slow start), with a small one (< 3·log10 L) by log10 L; with a long one
// (> 6·log10 L) it shrinks by log10 L; a 429 also shrinks it. It does not
// grow while under half its limit is in use (the client, not the server,
// is what holds it back). Waiters queue FIFO for permits.
type Vegas struct {
	*Line
	sem     *Semaphore
	c       VegasConfig
	limit   float64
	rttMin  float64 // least window average, ns
	win     answerWindow
	probeN  int     // answers since the last probe
	probeAt float64 // answers at which the next probe falls
}

// answerWindow gathers the answers a latency-driven limit adjusts on: the
// mean round trip of those answered, and whether any was a 429.
type answerWindow struct {
	sum   float64 // ns
	n     int     // answers with a round trip (not 429s)
	drop  bool    // a 429 in the window
	start time.Duration
}

func (w *answerWindow) add(throttled bool, rtt time.Duration) {
	w.drop = w.drop || throttled
	if !throttled && rtt > 0 {
		w.sum += float64(rtt)
		w.n++
	}
}

// take closes the window at now: its mean round trip (0 with none) and
// whether it held a 429.
func (w *answerWindow) take(now time.Duration) (mean float64, drop bool) {
	mean, drop = w.sum/float64(max(1, w.n)), w.drop
	*w = answerWindow{start: now}
	return mean, drop
}

// vegasWindow is how many answers a Vegas limit averages per adjustment.
const vegasWindow = 20

var _ Adaptive = (*Vegas)(nil)

// NewVegas returns a Vegas limit starting at Initial permits.
func NewVegas(c VegasConfig, sched clock.Scheduler) (*Vegas, error) {
	if c.Min < 1 || c.Max < c.Min || c.Initial < c.Min || c.Initial > c.Max {
		return nil, fmt.Errorf("%w: vegas needs 1 ≤ min ≤ initial ≤ max, got %d, %d, %d", ErrConfig, c.Min, c.Initial, c.Max)
	}
	sem, err := NewSemaphore(c.Initial)
	if err != nil {
		return nil, err
	}
	if c.Probe < 0 || (c.Probe > 0 && c.Rand == nil) {
		return nil, fmt.Errorf("%w: vegas probe %v needs a non-negative multiplier and a random stream", ErrConfig, c.Probe)
	}
	v := &Vegas{Line: NewLine(sem, sched, c.MaxWaiting), sem: sem, c: c, limit: float64(c.Initial)}
	v.nextProbe()
	return v, nil
}

// nextProbe draws when the next probe falls: Probe × limit windows from
// now, times a factor in [0.5, 1) so that instances do not probe together.
func (v *Vegas) nextProbe() {
	v.probeN = 0
	if v.c.Probe > 0 {
		v.probeAt = (0.5 + 0.5*v.c.Rand.Float64()) * v.c.Probe * v.limit
	}
}

// Observe adjusts the limit from one answer.
func (v *Vegas) Observe(now time.Duration, throttled bool, rtt time.Duration) {
	v.win.add(throttled, rtt)
	if v.win.n < vegasWindow && !v.win.drop {
		return // a 429 closes the window at once
	}
	avg, drop := v.win.take(now)
	v.probeN++
	if v.c.Probe > 0 && avg > 0 && float64(v.probeN) >= v.probeAt {
		v.rttMin = avg // forget the least latency: the server may have slowed for good
		v.nextProbe()
		return
	}
	if avg > 0 && (v.rttMin == 0 || avg < v.rttMin) {
		v.rttMin = avg
	}
	l := v.limit
	lg := math.Max(1, math.Log10(l))
	switch {
	case drop:
		l -= lg
	case avg <= 0 || v.rttMin == 0:
		return
	case float64(v.sem.InUse())*2 < l:
		return // the client holds itself back: nothing to learn
	default:
		queue := math.Ceil(l * (1 - v.rttMin/avg))
		switch {
		case queue <= lg:
			l += 6 * lg
		case queue < 3*lg:
			l += lg
		case queue > 6*lg:
			l -= lg
		}
	}
	v.limit = math.Min(float64(v.c.Max), math.Max(float64(v.c.Min), l))
	if n := int64(v.limit); n != v.sem.Max() {
		v.sem.SetPermits(n)
		v.Retune(now)
	}
}

// Limit returns the concurrency limit in force.
func (v *Vegas) Limit(time.Duration) float64 { return math.Floor(v.limit) }
