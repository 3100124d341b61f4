package upstream

import (
	"math"
	"time"

	"github.com/limitsim/limitsim/models"
)

// follow applies the latency and quota rate changes due by now, each at
// its instant.
func (s *Server) follow(now time.Duration) {
	if now < s.next {
		return
	}
	for len(s.lsteps) > 0 && s.lsteps[0].at <= now {
		s.lat = s.lsteps[0].lat
		s.lsteps = s.lsteps[1:]
	}
	for i := range s.quotas {
		q := s.quotas[i]
		for len(q.steps) > 0 && q.steps[0].At <= now {
			q.core.(*models.TokenBucket).SetRateAt(q.steps[0].At, q.steps[0].Rate)
			q.steps = q.steps[1:]
		}
	}
	s.due()
}

// due sets next to the first change still to apply.
func (s *Server) due() {
	s.next = time.Duration(math.MaxInt64)
	if len(s.lsteps) > 0 {
		s.next = s.lsteps[0].at
	}
	for i := range s.quotas {
		if q := s.quotas[i]; len(q.steps) > 0 {
			s.next = min(s.next, q.steps[0].At)
		}
	}
}
