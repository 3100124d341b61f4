package metrics

import (
	"math"
	"time"
)

// integral is ∫ n dt of a count n that moves at instants, kept exactly
// in integer count·ns: with offset = −Σ delta·t over the moves, the area
// from instant 0 to any t at or after the last move is offset + n·t. A
// move is then one integer addition, with no multiplication and no
// reading of when the count last moved. offset wraps around in long runs,
// but the area between two instants, a difference, stays exact while it fits in a
// uint64 (areas are never negative). No count reaches 2²⁸ (each unit is a
// live request or holds a pending event, and the event queue holds fewer),
// so the area of a span of at most foldSpan stays under 2⁶⁴: the recorder
// closes the integer area at least that often (at each Tick, and with
// Fold within an interval longer than foldSpan) and sums the pieces in
// floating point.
type integral struct {
	n      int64
	offset int64
	mark   int64         // the area up to the last close
	closed time.Duration // the instant of the last close
	part   float64       // the area from the last tick to the last close
}

// foldSpan is the longest span whose area is kept in integers.
const foldSpan = time.Duration(1) << 36 // about 69 s

// upTo is the area from instant 0 to t (modulo 2⁶⁴).
func (a *integral) upTo(t time.Duration) int64 { return a.offset + a.n*int64(t) }

// close returns the area since the last close, up to t. A t before the
// last close (a run's end, its last completion, before the tick that
// rounded up to the interval's boundary) adds nothing: the area up to that
// tick is kept.
func (a *integral) close(t time.Duration) float64 {
	if t < a.closed {
		return 0
	}
	v := a.upTo(t)
	d := uint64(v - a.mark)
	a.mark, a.closed = v, t
	return float64(d)
}

// refold closes the integer area at t, within an interval.
func (a *integral) refold(t time.Duration) { a.part += a.close(t) }

// fold returns the area since the last tick, up to t (a tick).
func (a *integral) fold(t time.Duration) float64 {
	d := a.part + a.close(t)
	a.part = 0
	return d
}

// never is an instant no run reaches.
const never = time.Duration(math.MaxInt64)

// steadyIntegral is an integral that also keeps its area over the steady
// state, from the end of the warm-up. The area up to the warm-up's end is
// taken at the first move after it, or the first close after it, when the
// count has not moved since. init must set the warm-up.
type steadyIntegral struct {
	integral
	warmupAt    time.Duration // the warm-up's end until warmupArea is taken; then never
	warmupArea  int64         // the area up to the warm-up's end, once taken
	warmupCount int64         // the count when the steady state started (after the moves at the warm-up's end)
	area        float64       // the steady state's area up to the last close
}

func (a *steadyIntegral) init(warmup time.Duration) { a.warmupAt = warmup }

// move changes the count by delta at now.
func (a *steadyIntegral) move(now, warmup time.Duration, delta int64) {
	if now > a.warmupAt {
		a.takeWarmup(warmup)
	}
	a.offset -= delta * int64(now)
	a.n += delta
}

func (a *steadyIntegral) takeWarmup(warmup time.Duration) {
	a.warmupArea, a.warmupCount, a.warmupAt = a.upTo(warmup), a.n, never
}

// close returns the area since the last close, up to t, and adds what of
// it lies in the steady state to area.
func (a *steadyIntegral) close(t, warmup time.Duration) float64 {
	if t < a.closed { // as integral.close
		return 0
	}
	v := a.upTo(t)
	d := float64(uint64(v - a.mark))
	if t > warmup {
		if a.warmupAt != never {
			a.takeWarmup(warmup)
		}
		if a.closed >= warmup {
			a.area += d
		} else {
			a.area += float64(uint64(v - a.warmupArea))
		}
	}
	a.mark, a.closed = v, t
	return d
}

// refold closes the integer area at t, within an interval.
func (a *steadyIntegral) refold(t, warmup time.Duration) { a.part += a.close(t, warmup) }

// fold returns the area since the last tick, up to t (a tick).
func (a *steadyIntegral) fold(t, warmup time.Duration) float64 {
	d := a.part + a.close(t, warmup)
	a.part = 0
	return d
}

// level is a time-weighted count: how many are in some stage, with its
// steady-state mean and maximum, its intervals' areas and the whole run's
// figures of Little's law. Its moves are small enough to be inlined
// where they are called.
type level struct {
	steadyIntegral
	max            int64
	areaAll        float64 // ∫ n dt over the whole run, up to the last tick
	entries        int64   // entries over the whole run that have left
	recentSojourns int64   // ns spent in the stage by the entries that left since the last tick
	sojourns       float64 // … and by those before it
}

// enter and leave move the level; leave records the sojourn of the entry,
// which came in at since.
func (l *level) enter(now, warmup time.Duration) {
	l.move(now, warmup, 1)
	if now >= warmup { // the steady state
		l.max = max(l.max, l.n)
	}
}

func (l *level) leave(now, since, warmup time.Duration) {
	l.move(now, warmup, -1)
	l.entries++
	l.recentSojourns += int64(now - since)
}

// peak is the level's steady-state maximum, once folded at its end: the
// most it reached after the warm-up, or what it was when the steady state
// started.
func (l *level) peak() int64 { return max(l.max, l.warmupCount) }

// fold closes the level's areas up to t (a tick) and returns the
// interval's.
func (l *level) fold(t, warmup time.Duration) float64 {
	d := l.steadyIntegral.fold(t, warmup)
	l.areaAll += d
	l.sojourns += float64(l.recentSojourns)
	l.recentSojourns = 0
	return d
}

// stage is a level of which only the intervals' areas and Little's law
// are read (the requests in the system): it keeps no steady-state figures.
type stage struct {
	integral
	areaAll        float64 // ∫ n dt over the whole run, up to the last tick
	entries        int64   // entries over the whole run that have left
	recentSojourns int64   // ns spent in the stage by the entries that left since the last tick
	sojourns       float64 // … and by those before it
}

func (l *stage) enter(now time.Duration) {
	l.offset -= int64(now)
	l.n++
}

func (l *stage) leave(now, since time.Duration) {
	l.offset += int64(now)
	l.n--
	l.entries++
	l.recentSojourns += int64(now - since)
}

// fold closes the stage's areas up to t (a tick) and returns the
// interval's.
func (l *stage) fold(t time.Duration) float64 {
	d := l.integral.fold(t)
	l.areaAll += d
	l.sojourns += float64(l.recentSojourns)
	l.recentSojourns = 0
	return d
}

// gauge is a count of which only the steady state's and the intervals'
// areas are read, for utilisation: permits held, attempts in service.
type gauge = steadyIntegral

// scopeGauge is a gauge of one scope of a limiter: of thousands of them,
// none is folded at the ticks, so each keeps its steady-state area in
// floating point as it goes.
type scopeGauge struct {
	n    int64
	last time.Duration
	area float64 // ∫ n dt over the steady state, in count·ns
}

// at accrues area up to now.
func (g *scopeGauge) at(now, warmup time.Duration) {
	if now > g.last {
		if g.n != 0 && now > warmup {
			g.area += float64(g.n) * float64(now-max(g.last, warmup))
		}
		g.last = now
	}
}

// add moves the count by delta at now.
func (g *scopeGauge) add(now, warmup time.Duration, delta int64) {
	g.at(now, warmup)
	g.n += delta
}
