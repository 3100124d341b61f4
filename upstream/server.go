package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/limitsim/limitsim/models"
)

// RetryAfter says what a 429 carries in its Retry-After header.
type RetryAfter struct {
	// None: no header. Reset: the time until the quota would admit the
	// request, rounded up to whole seconds as the HTTP header is. Otherwise
	// Fixed is sent.
	None, Reset bool
	Fixed       time.Duration
}

// Config is one modeled upstream host.
type Config struct {
	Host    string
	Latency Spec
	// LatencySchedule switches the latency distribution during the run (a
	// degraded upstream), in ascending At.
	LatencySchedule []LatencyStep
	Quota           *Quota
	RetryAfter      RetryAfter
	RejectLatency   time.Duration
	// Workers bounds the requests the server works on at once; the rest
	// queue inside the server (0: unbounded).
	Workers int
}

// Server is a modeled upstream. One Server is shared by every client
// instance, so all of them draw on the same quota.
type Server struct {
	cfg     Config
	lat     Latency
	rng     *rand.Rand
	quota   models.Core
	permits *models.Semaphore // concurrency quota, released on completion
	steps   []RateStep        // quota rate changes still to apply, in order
	lsteps  []latencyStep     // latency changes still to apply, in order
}

// LatencyStep switches an upstream's latency distribution from At on.
type LatencyStep struct {
	At      time.Duration
	Latency Spec
}

type latencyStep struct {
	at  time.Duration
	lat Latency
}

// NewServer builds the server cfg describes; rng is its latency stream.
func NewServer(cfg Config, rng *rand.Rand) (*Server, error) {
	lat, err := NewLatency(cfg.Latency)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: latency: %w", cfg.Host, err)
	}
	s := &Server{cfg: cfg, lat: lat, rng: rng}
	for i, st := range cfg.LatencySchedule {
		l, err := NewLatency(st.Latency)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: latency_schedule[%d]: %w", cfg.Host, i, err)
		}
		s.lsteps = append(s.lsteps, latencyStep{at: st.At, lat: l})
	}
	if q := cfg.Quota; q != nil {
		k, err := LookupQuota(q.Kind)
		var core models.Core
		if err == nil {
			core, err = k.core(*q)
		}
		if err != nil {
			return nil, fmt.Errorf("upstream %s: quota: %w", cfg.Host, err)
		}
		if sem, ok := core.(*models.Semaphore); ok && k.Concurrency {
			s.permits = sem
		} else {
			s.quota = core
		}
		if len(q.Schedule) > 0 {
			if _, ok := core.(*models.TokenBucket); !ok {
				return nil, fmt.Errorf("upstream %s: quota: a schedule needs a token_bucket quota, not %s", cfg.Host, q.Kind)
			}
			s.steps = slices.Clone(q.Schedule)
		}
	}
	return s, nil
}

// Answer is the server's reply to a request that reached it.
type Answer struct {
	OK bool
	// After is when the response arrives, counted from the start.
	After time.Duration
	// RetryAfter is the header of a 429; HasRetryAfter is false when none
	// is sent.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Start checks the quota for a request starting at now and draws its
// latency. A request answered OK under a concurrency quota holds a permit
// until Finish.
func (s *Server) Start(now time.Duration) Answer {
	s.follow(now)
	admitted := true
	switch {
	case s.permits != nil:
		admitted = s.permits.TakeAt(now, 1)
	case s.quota != nil:
		admitted = s.quota.TakeAt(now, 1)
	}
	if admitted {
		return Answer{OK: true, After: s.lat.Sample(s.rng)}
	}
	a := Answer{After: s.cfg.RejectLatency}
	switch ra := s.cfg.RetryAfter; {
	case ra.None:
	case ra.Reset:
		if s.quota != nil {
			if at, ok := s.quota.ReadyAt(now, 1); ok {
				secs := math.Ceil(float64(at-now) / float64(time.Second))
				a.RetryAfter, a.HasRetryAfter = time.Duration(max(1, secs))*time.Second, true
			}
		}
	default:
		a.RetryAfter, a.HasRetryAfter = ra.Fixed, true
	}
	return a
}

// Finish ends a request the server answered OK.
func (s *Server) Finish(now time.Duration) {
	if s.permits != nil {
		s.permits.ReleaseAt(now, 1)
	}
}

// follow applies the quota rate changes due by now, each at its instant.
func (s *Server) follow(now time.Duration) {
	for len(s.lsteps) > 0 && s.lsteps[0].at <= now {
		s.lat = s.lsteps[0].lat
		s.lsteps = s.lsteps[1:]
	}
	for len(s.steps) > 0 && s.steps[0].At <= now {
		s.quota.(*models.TokenBucket).SetRateAt(s.steps[0].At, s.steps[0].Rate)
		s.steps = s.steps[1:]
	}
}

// Usage returns the quota's usage at now (0 without a quota).
func (s *Server) Usage(now time.Duration) float64 {
	s.follow(now)
	switch {
	case s.permits != nil:
		return s.permits.Usage(now)
	case s.quota != nil:
		return s.quota.Usage(now)
	}
	return 0
}
