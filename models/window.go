package models

import (
	"fmt"
	"math/bits"
	"time"
)

func checkWindow(kind string, limit int64, window time.Duration) error {
	if limit < 1 {
		return fmt.Errorf("%w: %s limit %d must be at least 1", ErrConfig, kind, limit)
	}
	if window <= 0 {
		return fmt.Errorf("%w: %s window %v must be positive", ErrConfig, kind, window)
	}
	return nil
}

// SlidingLog is the exact sliding window of the article: it remembers
// the instant of every start in the last window and admits n more only if
// at most limit − n starts happened in the window ending now. No window of
// length window, wherever it is placed, ever holds more than limit starts.
// Memory is O(limit).
type SlidingLog struct {
	limit  int64
	window time.Duration
	log    ring[time.Duration] // start instants, oldest first
}

var _ Core = (*SlidingLog)(nil)

// NewSlidingLog returns an exact sliding window of limit starts per window.
func NewSlidingLog(limit int64, window time.Duration) (*SlidingLog, error) {
	if err := checkWindow("sliding window", limit, window); err != nil {
		return nil, err
	}
	if limit > MaxExactLog {
		return nil, fmt.Errorf("%w: sliding window limit %d is too large for an exact log (use sliding_window_counter)", ErrConfig, limit)
	}
	return &SlidingLog{limit: limit, window: window}, nil
}

// expire drops starts that have left the window ending at now. The article's
// rule: a start at e is gone once now − e ≥ window.
func (s *SlidingLog) expire(now time.Duration) {
	for s.log.len() > 0 && now-*s.log.at(0) >= s.window {
		s.log.drop()
	}
}

// countAt returns how many starts are in the window ending at now.
func (s *SlidingLog) countAt(now time.Duration) int64 {
	c := s.log.len()
	for i := 0; i < s.log.len() && now-*s.log.at(i) >= s.window; i++ {
		c--
	}
	return int64(c)
}

// TakeAt records n starts at now if the window has room.
func (s *SlidingLog) TakeAt(now time.Duration, n int64) bool {
	s.expire(now)
	if int64(s.log.len())+n > s.limit {
		return false
	}
	for range n {
		s.log.push(now)
	}
	return true
}

// ReadyAt returns when enough old starts will have left the window.
func (s *SlidingLog) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if n > s.limit {
		return 0, false
	}
	s.expire(now)
	excess := int64(s.log.len()) + n - s.limit
	if excess <= 0 {
		return now, true
	}
	return *s.log.at(int(excess - 1)) + s.window, true
}

// Max returns the limit.
func (s *SlidingLog) Max() int64 { return s.limit }

// Usage returns starts in the window ending at now ÷ limit.
func (s *SlidingLog) Usage(now time.Duration) float64 {
	return float64(s.countAt(now)) / float64(s.limit)
}

// FixedWindow counts starts in consecutive windows aligned to instant 0 and
// resets the count at each boundary: simple, O(1), and able to pass up to
// twice the limit across a boundary.
type FixedWindow struct {
	limit  int64
	window time.Duration
	start  time.Duration // start of the current window
	count  int64
}

var _ Charger = (*FixedWindow)(nil)

// NewFixedWindow returns a fixed window of limit starts per window.
func NewFixedWindow(limit int64, window time.Duration) (*FixedWindow, error) {
	if err := checkWindow("fixed window", limit, window); err != nil {
		return nil, err
	}
	return &FixedWindow{limit: limit, window: window}, nil
}

func (f *FixedWindow) roll(now time.Duration) {
	if now >= f.start+f.window {
		f.start = now - now%f.window
		f.count = 0
	}
}

// TakeAt counts n starts at now if the window has room.
func (f *FixedWindow) TakeAt(now time.Duration, n int64) bool {
	f.roll(now)
	if f.count+n > f.limit {
		return false
	}
	f.count += n
	return true
}

// ReadyAt returns now, or the next window boundary.
func (f *FixedWindow) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if n > f.limit {
		return 0, false
	}
	f.roll(now)
	if f.count+n <= f.limit {
		return now, true
	}
	return f.start + f.window, true
}

// Max returns the limit.
func (f *FixedWindow) Max() int64 { return f.limit }

// ChargeAt counts n more units in the current window whatever its room.
func (f *FixedWindow) ChargeAt(now time.Duration, n int64) {
	f.roll(now)
	f.count = max(0, f.count+n)
}

// SettleAt counts real units in the current window in place of the took
// units taken at since: if since is in an earlier window, those units
// left with it and only real is counted.
func (f *FixedWindow) SettleAt(now, since time.Duration, took, real int64) {
	f.roll(now)
	if since < f.start {
		took = 0
	}
	f.count = max(0, f.count+real-took)
}

// ResetAt returns the end of the window holding now.
func (f *FixedWindow) ResetAt(now time.Duration) time.Duration {
	if now >= f.start+f.window {
		return now - now%f.window + f.window
	}
	return f.start + f.window
}

// Usage returns starts in the current window ÷ limit.
func (f *FixedWindow) Usage(now time.Duration) float64 {
	if now >= f.start+f.window {
		return 0
	}
	return min(1, float64(f.count)/float64(f.limit))
}

// SlidingCounter is the approximate sliding window: two fixed-window counts,
// the previous one weighted by how much of it still overlaps the sliding
// window. O(1) memory; it assumes starts in the previous window were spread
// evenly, so it can pass somewhat more than the limit in a true sliding
// window. Arithmetic is exact integer arithmetic in 128 bits.
type SlidingCounter struct {
	limit      int64
	window     time.Duration
	start      time.Duration
	prev, curr int64
}

var _ Charger = (*SlidingCounter)(nil)

// NewSlidingCounter returns an approximate sliding window of limit per window.
func NewSlidingCounter(limit int64, window time.Duration) (*SlidingCounter, error) {
	if err := checkWindow("sliding window counter", limit, window); err != nil {
		return nil, err
	}
	return &SlidingCounter{limit: limit, window: window}, nil
}

func (c *SlidingCounter) roll(now time.Duration) {
	if now < c.start+c.window {
		return
	}
	if now < c.start+2*c.window {
		c.prev, c.curr = c.curr, 0
	} else {
		c.prev, c.curr = 0, 0
	}
	c.start = now - now%c.window
}

// earliest returns the first instant ≥ from in the window [start, start+W)
// with counts (prev, curr) at which n more fit, or ok=false if none does.
// n fit at elapsed e when prev·(W−e) + (curr+n)·W ≤ limit·W.
func (c *SlidingCounter) earliest(from, start time.Duration, prev, curr, n int64) (time.Duration, bool) {
	room := c.limit - curr - n
	if room < 0 {
		return 0, false
	}
	w := uint64(c.window)
	e := time.Duration(0)
	if prev > 0 {
		hi, lo := bits.Mul64(uint64(room), w)
		var q uint64
		if hi >= uint64(prev) {
			q = w // room·W/prev ≥ W: no wait needed
		} else {
			q, _ = bits.Div64(hi, lo, uint64(prev))
		}
		if q < w {
			e = time.Duration(w - q)
		}
	}
	at := max(from, start+e)
	if at >= start+c.window {
		return 0, false
	}
	return at, true
}

// ReadyAt returns the first instant at which n more starts fit.
func (c *SlidingCounter) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if n > c.limit {
		return 0, false
	}
	c.roll(now)
	if at, ok := c.earliest(now, c.start, c.prev, c.curr, n); ok {
		return at, true
	}
	next := c.start + c.window
	if at, ok := c.earliest(next, next, c.curr, 0, n); ok {
		return at, true
	}
	return next + c.window, true
}

// TakeAt counts n starts at now if they fit.
func (c *SlidingCounter) TakeAt(now time.Duration, n int64) bool {
	at, ok := c.ReadyAt(now, n)
	if !ok || at > now {
		return false
	}
	c.curr += n
	return true
}

// Max returns the limit.
func (c *SlidingCounter) Max() int64 { return c.limit }

// ChargeAt counts n more units in the current window whatever its room.
func (c *SlidingCounter) ChargeAt(now time.Duration, n int64) {
	c.roll(now)
	c.curr = max(0, c.curr+n)
}

// SettleAt counts real units in the current window in place of the took
// units taken at since, which are taken off the window that holds them:
// the current one, the previous one (still weighed), or none.
func (c *SlidingCounter) SettleAt(now, since time.Duration, took, real int64) {
	c.roll(now)
	switch {
	case since >= c.start:
		c.curr = max(0, c.curr+real-took)
		return
	case since >= c.start-c.window:
		c.prev = max(0, c.prev-took)
	}
	c.curr += real
}

// Usage returns the weighted estimate ÷ limit.
func (c *SlidingCounter) Usage(now time.Duration) float64 {
	prev, curr, start := c.prev, c.curr, c.start
	switch {
	case now >= start+2*c.window:
		return 0
	case now >= start+c.window:
		prev, curr, start = curr, 0, start+c.window
	}
	e := float64(now - start)
	w := float64(c.window)
	return min(1, (float64(prev)*(w-e)/w+float64(curr))/float64(c.limit))
}
