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
	// Quotas are the server-side limits, all enforced: a request passes
	// only if every one admits it, and one refused by any takes from none.
	Quotas        []Quota
	RetryAfter    RetryAfter
	RejectLatency time.Duration
	// Workers bounds the requests the server works on at once; the rest
	// queue inside the server (0: unbounded).
	Workers int
	// Headers fills each Answer's rate-limit headers (Remaining, Reset);
	// off, they are left zero and cost nothing, for clients that never
	// read them.
	Headers bool
}

// Server is a modeled upstream. One Server is shared by every client
// instance, so all of them draw on the same quota.
type Server struct {
	cfg    Config
	lat    Latency
	rng    *rand.Rand
	quotas []serverQuota
	lsteps []latencyStep // latency changes still to apply, in order
}

// serverQuota is one enforced quota.
type serverQuota struct {
	name     string
	core     models.Core
	permits  *models.Semaphore // a concurrency quota, released on completion
	steps    []RateStep        // rate changes still to apply, in order
	rejected int64             // 429s it refused
}

// admits reports whether the quota admits one request at now.
func (q *serverQuota) admits(now time.Duration) bool {
	if q.permits != nil {
		return q.permits.InUse() < q.permits.Max()
	}
	at, ok := q.core.ReadyAt(now, 1)
	return ok && at <= now
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
	for i, q := range cfg.Quotas {
		key := "quota" // as the scenario names it: quota, or quota[i] of several
		if len(cfg.Quotas) > 1 {
			key = fmt.Sprintf("quota[%d]", i)
		}
		k, err := LookupQuota(q.Kind)
		var core models.Core
		if err == nil {
			core, err = k.core(q)
		}
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %s: %w", cfg.Host, key, err)
		}
		sq := serverQuota{name: q.Name(), core: core}
		if sem, ok := core.(*models.Semaphore); ok && k.Concurrency {
			sq.permits = sem
		}
		if len(q.Schedule) > 0 {
			if _, ok := core.(*models.TokenBucket); !ok {
				return nil, fmt.Errorf("upstream %s: %s: a schedule needs a token_bucket quota, not %s", cfg.Host, key, q.Kind)
			}
			sq.steps = slices.Clone(q.Schedule)
		}
		s.quotas = append(s.quotas, sq)
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
	// Remaining and Reset are the rate-limit headers (X-RateLimit-Remaining
	// and -Reset), filled when Config.Headers is set: how many more
	// requests the quotas admit now (the least over them; -1 without a
	// quota); when Remaining is 0, how long until they admit again; and
	// otherwise how long until the quota that leaves the fewest is whole
	// again (a window's end, a bucket full), 0 for a quota that cannot say
	// (a sliding window, a concurrency limit).
	Remaining int64
	Reset     time.Duration
}

// headers fills a's rate-limit headers at now.
func (s *Server) headers(now time.Duration, a *Answer) {
	a.Remaining = -1
	least := -1
	for i := range s.quotas {
		q := &s.quotas[i]
		left := int64(math.Floor(float64(q.core.Max())*(1-q.core.Usage(now)) + 1e-9))
		if a.Remaining < 0 || left < a.Remaining {
			a.Remaining, least = left, i
		}
	}
	if a.Remaining > 0 {
		if r, ok := s.quotas[least].core.(models.Resetter); ok {
			a.Reset = r.ResetAt(now) - now
		}
		return
	}
	if a.Remaining < 0 {
		return
	}
	for i := range s.quotas {
		if q := &s.quotas[i]; q.permits == nil && !q.admits(now) {
			if at, ok := q.core.ReadyAt(now, 1); ok {
				a.Reset = max(a.Reset, at-now)
			}
		}
	}
}

// Start checks the quotas for a request starting at now and draws its
// latency. A request is admitted only if every quota admits it, and then
// takes from each; one refused takes from none. A request answered OK
// under a concurrency quota holds a permit until Finish.
func (s *Server) Start(now time.Duration) Answer {
	s.follow(now)
	admitted := true
	for i := range s.quotas {
		if q := &s.quotas[i]; !q.admits(now) {
			q.rejected++
			admitted = false
		}
	}
	if admitted {
		for i := range s.quotas {
			s.quotas[i].core.TakeAt(now, 1)
		}
		a := Answer{OK: true, After: s.lat.Sample(s.rng)}
		if s.cfg.Headers {
			s.headers(now, &a)
		}
		return a
	}
	a := Answer{After: s.cfg.RejectLatency}
	if s.cfg.Headers {
		s.headers(now, &a)
	}
	switch ra := s.cfg.RetryAfter; {
	case ra.None:
	case ra.Reset:
		// The latest of the refusing rate quotas' next admissions.
		var at time.Duration
		for i := range s.quotas {
			if q := &s.quotas[i]; q.permits == nil && !q.admits(now) {
				if t, ok := q.core.ReadyAt(now, 1); ok {
					at = max(at, t)
				}
			}
		}
		if at > now {
			secs := math.Ceil(float64(at-now) / float64(time.Second))
			a.RetryAfter, a.HasRetryAfter = time.Duration(max(1, secs))*time.Second, true
		}
	default:
		a.RetryAfter, a.HasRetryAfter = ra.Fixed, true
	}
	return a
}

// Finish ends a request the server answered OK.
func (s *Server) Finish(now time.Duration) {
	for i := range s.quotas {
		if p := s.quotas[i].permits; p != nil {
			p.ReleaseAt(now, 1)
		}
	}
}

// Rejections returns, for each quota in order, its name and the 429s it
// refused (a request refused by several counts for each).
func (s *Server) Rejections() (names []string, counts []int64) {
	for _, q := range s.quotas {
		names, counts = append(names, q.name), append(counts, q.rejected)
	}
	return names, counts
}

// follow applies the latency and quota rate changes due by now, each at
// its instant.
func (s *Server) follow(now time.Duration) {
	for len(s.lsteps) > 0 && s.lsteps[0].at <= now {
		s.lat = s.lsteps[0].lat
		s.lsteps = s.lsteps[1:]
	}
	for i := range s.quotas {
		q := &s.quotas[i]
		for len(q.steps) > 0 && q.steps[0].At <= now {
			q.core.(*models.TokenBucket).SetRateAt(q.steps[0].At, q.steps[0].Rate)
			q.steps = q.steps[1:]
		}
	}
}

// Usage returns the usage of the most used quota at now (0 without one).
func (s *Server) Usage(now time.Duration) float64 {
	s.follow(now)
	var u float64
	for _, q := range s.quotas {
		u = max(u, q.core.Usage(now))
	}
	return u
}
