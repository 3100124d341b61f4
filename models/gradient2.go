package models

import (
	"fmt"
	"math"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// Gradient2 is a concurrency limit from the ratio of long-term to
// short-term latency, in the style of Netflix concurrency-limits'
// Gradient2Limit: it compares the average round trip of each window of
// answers (short) with a long exponential average of them (about 600
// windows), and moves the limit towards limit × gradient + 4, where
// gradient = clamp(1.5 × long ÷ short, 0.5, 1), smoothed by 0.2. While
// latency stays within 1.5× its long average the limit grows by 0.8 per
// window, so under sustained overload it creeps up as the long average
// follows the latency it lets grow (the library's known trade-off: it
// tolerates 50% latency inflation); a sudden rise shrinks it. It does not
// grow while under half its limit is in use, lets the long average decay
// when it sits far above the short one (after a recovery), and takes a 429
// as a gradient of 0.5. Waiters queue FIFO for permits.
type Gradient2 struct {
	*Line
	sem   *Semaphore
	c     VegasConfig
	limit float64
	long  float64 // ns: the long average of window averages
	win   answerWindow
}

// A Gradient2 window closes after at least gradient2Window and 10 answers,
// as Netflix's WindowedLimit feeds its samples (one a second by default).
const gradient2Window = time.Second

var _ Adaptive = (*Gradient2)(nil)

// NewGradient2 returns a Gradient2 limit starting at Initial permits.
func NewGradient2(c VegasConfig, sched clock.Scheduler) (*Gradient2, error) {
	if c.Min < 1 || c.Max < c.Min || c.Initial < c.Min || c.Initial > c.Max {
		return nil, fmt.Errorf("%w: gradient2 needs 1 ≤ min ≤ initial ≤ max, got %d, %d, %d", ErrConfig, c.Min, c.Initial, c.Max)
	}
	sem, err := NewSemaphore(c.Initial)
	if err != nil {
		return nil, err
	}
	return &Gradient2{Line: NewLine(sem, sched, c.MaxWaiting), sem: sem, c: c, limit: float64(c.Initial)}, nil
}

// Observe moves the limit once per window (a second and at least 10
// answers, the samples Netflix's WindowedLimit feeds it; a 429 closes a
// window at once): the window's average is the short latency, and the
// long one averages about 600 windows.
func (g *Gradient2) Observe(now time.Duration, throttled bool, rtt time.Duration) {
	g.win.add(throttled, rtt)
	if !g.win.drop && (g.win.n < 10 || now-g.win.start < gradient2Window) {
		return // a 429 closes the window at once
	}
	short, drop := g.win.take(now)
	gradient := 0.5 // a 429: back off as hard as the latency rule allows
	if !drop {
		if g.long == 0 {
			g.long = short
		}
		g.long += (short - g.long) * 2 / 601
		if g.long/short > 2 { // latency fell for good: let the long average follow
			g.long *= 0.95
		}
		if float64(g.sem.InUse())*2 < g.limit {
			return // the client holds itself back: nothing to learn
		}
		gradient = math.Max(0.5, math.Min(1, 1.5*g.long/short))
	}
	target := g.limit*gradient + 4 // queueSize: Netflix's default of 4
	g.limit = math.Min(float64(g.c.Max), math.Max(float64(g.c.Min), g.limit*0.8+target*0.2))
	if n := int64(g.limit); n != g.sem.Max() {
		g.sem.SetPermits(n)
		g.Retune(now)
	}
}

// Limit returns the concurrency limit in force.
func (g *Gradient2) Limit(time.Duration) float64 { return math.Floor(g.limit) }
