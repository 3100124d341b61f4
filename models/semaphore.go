package models

import (
	"fmt"
	"time"
)

// Semaphore is a counting semaphore core: permits units, taken and released.
// Time plays no part; a waiter is woken by a release. Wrapped in a Line it is
// asyncio.Semaphore: FIFO, and a release wakes exactly the waiters that fit.
type Semaphore struct {
	permits int64
	inUse   int64
}

var _ ReleaseCore = (*Semaphore)(nil)

// NewSemaphore returns a semaphore of the given number of permits.
func NewSemaphore(permits int64) (*Semaphore, error) {
	if permits < 1 {
		return nil, fmt.Errorf("%w: semaphore needs at least 1 permit, got %d", ErrConfig, permits)
	}
	return &Semaphore{permits: permits}, nil
}

// TakeAt takes n permits if they are free.
func (s *Semaphore) TakeAt(_ time.Duration, n int64) bool {
	if s.inUse+n > s.permits {
		return false
	}
	s.inUse += n
	return true
}

// ReadyAt returns now if n permits are free; otherwise only a release helps.
func (s *Semaphore) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if s.inUse+n <= s.permits {
		return now, true
	}
	return 0, false
}

// ReleaseAt returns n permits. Releasing more than are in use is a bug in
// the caller; the count is clamped so the state stays valid.
func (s *Semaphore) ReleaseAt(_ time.Duration, n int64) {
	s.inUse -= n
	if s.inUse < 0 {
		s.inUse = 0
	}
}

// InUse returns the permits currently held.
func (s *Semaphore) InUse() int64 { return s.inUse }

// SetPermits changes the number of permits (at least 1). Permits already
// held above a lower number stay held; new acquisitions wait until enough
// come back. A Line over the semaphore must be retuned (Line.Retune) for
// waiters to use a higher number.
func (s *Semaphore) SetPermits(n int64) { s.permits = max(1, n) }

// Max returns the number of permits.
func (s *Semaphore) Max() int64 { return s.permits }

// Usage returns permits in use ÷ permits.
func (s *Semaphore) Usage(time.Duration) float64 {
	return min(1, float64(s.inUse)/float64(s.permits))
}
