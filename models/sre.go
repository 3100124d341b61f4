package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// sreSlots is how many slots a SRE throttle's window is kept in.
const sreSlots = 60

// SREThrottle is the client-side adaptive throttling of Google's SRE book
// ("Handling Overload"): over a sliding window it counts the requests the
// client made and the ones the backend accepted (answered other than
// 429), and refuses a new request locally with probability
// max(0, (requests − K × accepts) ÷ (requests + 1)). While the backend
// accepts everything it never refuses; when the backend rejects, the
// client sheds the excess itself, before it costs a round trip. It never
// makes a caller wait.
type SREThrottle struct {
	k    float64
	slot time.Duration // window ÷ sreSlots
	reqs [sreSlots]float64
	accs [sreSlots]float64
	at   [sreSlots]int64 // the slot number each entry counts for
	rng  *rand.Rand
}

var _ Adaptive = (*SREThrottle)(nil)

// NewSREThrottle returns a throttle with multiplier k (2 in the book: the
// client sends up to twice what the backend accepts) over window; rng
// draws the refusals.
func NewSREThrottle(k float64, window time.Duration, rng *rand.Rand) (*SREThrottle, error) {
	if !(k >= 1) || math.IsInf(k, 0) {
		return nil, fmt.Errorf("%w: sre_throttle k %v must be at least 1", ErrConfig, k)
	}
	if window < sreSlots {
		return nil, fmt.Errorf("%w: sre_throttle window %v is too short", ErrConfig, window)
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: sre_throttle needs a random stream", ErrConfig)
	}
	return &SREThrottle{k: k, slot: window / sreSlots, rng: rng}, nil
}

// counts returns the requests and accepts in the window ending at now.
func (s *SREThrottle) counts(now time.Duration) (reqs, accs float64) {
	cur := int64(now / s.slot)
	for i := range sreSlots {
		if cur-s.at[i] < sreSlots {
			reqs += s.reqs[i]
			accs += s.accs[i]
		}
	}
	return reqs, accs
}

// add counts a request (and an accept) in now's slot.
func (s *SREThrottle) add(now time.Duration, req, acc float64) {
	cur := int64(now / s.slot)
	i := cur % sreSlots
	if s.at[i] != cur {
		s.at[i], s.reqs[i], s.accs[i] = cur, 0, 0
	}
	s.reqs[i] += req
	s.accs[i] += acc
}

// Reject returns the probability of refusing a request at now.
func (s *SREThrottle) Reject(now time.Duration) float64 {
	reqs, accs := s.counts(now)
	return math.Max(0, (reqs-s.k*accs)/(reqs+1))
}

// Acquire counts the request and refuses it (Shed) with the rejection
// probability; otherwise it is granted at once.
func (s *SREThrottle) Acquire(now time.Duration, n int64, _ time.Duration, _ clock.Handler, _ uint64) (Ticket, Status) {
	p := s.Reject(now)
	s.add(now, 1, 0)
	if p > 0 && s.rng.Float64() < p {
		return 0, Shed
	}
	return 0, Granted
}

// Cancel has nothing to withdraw: the throttle never parks.
func (s *SREThrottle) Cancel(time.Duration, Ticket) bool { return false }

// Waiting is always 0.
func (s *SREThrottle) Waiting() int { return 0 }

// Usage is the rejection probability at now.
func (s *SREThrottle) Usage(now time.Duration) float64 { return s.Reject(now) }

// Observe counts an accepted request (any answer but a 429).
func (s *SREThrottle) Observe(now time.Duration, throttled bool, _ time.Duration) {
	if !throttled {
		s.add(now, 0, 1)
	}
}

// Limit is the rate the throttle lets through, in accepts per second over
// the window times k: what the client may send.
func (s *SREThrottle) Limit(now time.Duration) float64 {
	_, accs := s.counts(now)
	return s.k * accs / (s.slot * sreSlots).Seconds()
}
