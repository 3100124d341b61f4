package upstream

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/limitsim/limitsim/models"
)

// limitReq is nginx's limit_req for one key of its zone, with nginx's own
// arithmetic (ngx_http_limit_req_module.c): time in whole milliseconds,
// the excess in thousandths of a request, the rate in thousandths of a
// request per second (rate × 1000 ÷ 60 for "r/m", rounded down).
//
// A request at now (ms elapsed since the last admission) makes the excess
// excess − rate × ms ÷ 1000 + 1000, at least 0; it is refused when that
// exceeds burst × 1000, and otherwise admitted with the new excess kept.
// The first request of a key finds it empty (excess 0). An admitted
// request whose excess is over delay × 1000 is held (excess − delay ×
// 1000) × 1000 ÷ rate ms before it is served: without nodelay, delay is
// 0; with nodelay, every request is served at once.
type limitReq struct {
	rate   int64 // thousandths of a request per second
	burst  int64 // burst × 1000
	delay  int64 // delay × 1000; nodelay: no bound
	excess int64 // thousandths of a request, as of last
	last   int64 // the last admission, in ms
	seen   bool  // a request came: the key's node exists
	held   time.Duration
}

var (
	_ models.Core     = (*limitReq)(nil)
	_ models.Resetter = (*limitReq)(nil)
	_ shaper          = (*limitReq)(nil)
)

// shaper is a quota that holds admitted requests before service (nginx's
// delay): Held is the hold of the request it admitted last.
type shaper interface {
	Held() time.Duration
}

// ErrQuota is a quota its server would not load (an nginx rate that is
// not a whole number, an Envoy bucket without tokens).
var ErrQuota = errors.New("upstream: invalid quota")

// newLimitReq builds q's limit_req: rate a whole number of requests per
// Per (a second or a minute), burst and delay whole requests.
func newLimitReq(q Quota) (*limitReq, error) {
	per := q.Per
	if per == 0 {
		per = time.Second
	}
	n := q.Rate * per.Seconds()
	switch {
	case n < 1 || n != math.Trunc(n) || n > 1e9:
		return nil, fmt.Errorf("%w: rate %v per %v: a whole number of requests from 1 to 10⁹", ErrQuota, n, per)
	case q.Burst < 0 || q.Burst != math.Trunc(q.Burst) || q.Burst > 1e9:
		return nil, fmt.Errorf("%w: burst %v: a whole number from 0 to 10⁹", ErrQuota, q.Burst)
	case q.Delay < 0 || q.Delay > 1e9:
		return nil, fmt.Errorf("%w: delay %d: from 0 to 10⁹", ErrQuota, q.Delay)
	}
	l := &limitReq{rate: int64(n) * 1000 / int64(per/time.Second), burst: int64(q.Burst) * 1000, delay: q.Delay * 1000}
	if l.rate < 1 {
		return nil, fmt.Errorf("%w: rate %v per %v is below nginx's resolution", ErrQuota, n, per)
	}
	if q.NoDelay {
		l.delay = math.MaxInt64 / 1000
	}
	return l, nil
}

// msOf is now in nginx's whole milliseconds.
func msOf(now time.Duration) int64 { return int64(now / time.Millisecond) }

// next is the excess n requests at nowMs would make (n = 0: the excess
// left). As nginx computes it, the drain since the last admission may
// exceed the excess: the clamp to 0 comes after the request is added, so
// requests spaced 1 ÷ rate apart each find excess 0, even with burst 0.
func (l *limitReq) next(nowMs, n int64) int64 {
	if !l.seen {
		return max(0, n-1) * 1000 // a new node: the first request finds excess 0
	}
	add := l.excess + n*1000
	elapsed := max(0, nowMs-l.last)
	if elapsed > add*1000/l.rate+1 { // drained past add: rate × ms would only overflow
		return 0
	}
	return max(0, add-l.rate*elapsed/1000)
}

// TakeAt admits n requests at now if the excess they make is within burst.
func (l *limitReq) TakeAt(now time.Duration, n int64) bool {
	nowMs := msOf(now)
	e := l.next(nowMs, n)
	if e > l.burst {
		return false
	}
	l.excess, l.last, l.seen = e, nowMs, true
	l.held = 0
	if e > l.delay {
		l.held = time.Duration((e-l.delay)*1000/l.rate) * time.Millisecond
	}
	return true
}

// ReadyAt returns the first millisecond at which n requests fit in burst:
// time alone always makes room.
func (l *limitReq) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	nowMs := msOf(now)
	if l.next(nowMs, n) <= l.burst {
		return now, true
	}
	// The drain rate × ms ÷ 1000 (rounded down) must reach need.
	need := l.excess + n*1000 - l.burst
	wait := (need*1000 + l.rate - 1) / l.rate
	return max(now, time.Duration(l.last+wait)*time.Millisecond), true
}

// Max is burst plus the request that finds the bucket empty.
func (l *limitReq) Max() int64 { return l.burst/1000 + 1 }

// Usage is the excess left at now over the most it may hold.
func (l *limitReq) Usage(now time.Duration) float64 {
	if !l.seen {
		return 0
	}
	return min(1, float64(l.next(msOf(now), 0))/float64(l.burst+1000))
}

// ResetAt is when the excess has drained to 0.
func (l *limitReq) ResetAt(now time.Duration) time.Duration {
	if !l.seen || l.next(msOf(now), 0) == 0 {
		return now
	}
	wait := (l.excess*1000 + l.rate - 1) / l.rate
	return max(now, time.Duration(l.last+wait)*time.Millisecond)
}

// Held is the hold of the request admitted last.
func (l *limitReq) Held() time.Duration { return l.held }
