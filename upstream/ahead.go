package upstream

import (
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
)

// DrawAhead has d draw the server's latencies, ahead of the requests that
// take them, and reports whether it does: only a server whose latency
// never changes in the run (no latency_schedule), so that each draw is
// the same function of its stream whenever it is made. The server's
// latency stream is then read on d's goroutine alone; the latencies, and
// every result, are the same. A server already drawn ahead is left as it
// is (false): two drawers would read its one stream.
func (s *Server) DrawAhead(d *ahead.Drawer) bool {
	if len(s.lsteps) > 0 || s.rng == nil || s.latAhead != nil {
		return false
	}
	lat, rng := s.lat, s.rng
	st, err := d.Stream(func() uint64 { return uint64(lat.Sample(rng)) })
	if err != nil {
		return false // the drawer is full: drawn here, as without it
	}
	s.latAhead = st
	return true
}

// latency draws an OK answer's latency: from the stream drawn ahead, if
// any.
func (s *Server) latency() time.Duration {
	if s.latAhead != nil {
		return time.Duration(s.latAhead.Next())
	}
	return s.lat.Sample(s.rng)
}
