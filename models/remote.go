package models

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/slab"
)

// StoreConfig is the shared store a cluster-wide limiter lives in (Redis,
// as go-redis/redis_rate uses it).
type StoreConfig struct {
	// RTT is the round trip of one call to the store.
	RTT Jitter
	// Errors is the probability that a call fails.
	Errors float64
	// FailOpen admits the request when a call fails (fail open); otherwise
	// the call counts as a refusal and is retried (fail closed).
	FailOpen bool
	// ErrorBackoff is how long a caller waits before calling again after a
	// failed call that did not admit it.
	ErrorBackoff time.Duration
	// SyncInterval, when positive, gives each instance a local copy of the
	// stored limit that admits without a call and settles with the store
	// once per interval (see Cached). Zero makes every acquisition a call
	// (see Remote).
	SyncInterval time.Duration
}

// Store is a limit kept in a store shared by every client instance: one
// GCRA, reached through calls that take a round trip and may fail. Each
// instance reaches it through its own Remote or Cached.
type Store struct {
	gcra           *GCRA
	sched          clock.Scheduler
	rng            *rand.Rand
	c              StoreConfig
	calls0, errors int64 // calls made and calls failed, for the record
}

// NewStore keeps g in a store with the given round trip and failures.
func NewStore(g *GCRA, sched clock.Scheduler, rng *rand.Rand, c StoreConfig) (*Store, error) {
	if !(c.Errors >= 0 && c.Errors <= 1) {
		return nil, fmt.Errorf("%w: store_errors %v must be a probability", ErrConfig, c.Errors)
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: a store needs a random stream", ErrConfig)
	}
	if c.SyncInterval < 0 {
		return nil, fmt.Errorf("%w: sync_interval %v must not be negative", ErrConfig, c.SyncInterval)
	}
	if c.ErrorBackoff <= 0 {
		c.ErrorBackoff = 100 * time.Millisecond
	}
	return &Store{gcra: g, sched: sched, rng: rng, c: c}, nil
}

// Front returns one instance's way to the store: a Cached copy when the
// store has a sync interval, a Remote otherwise.
func (s *Store) Front(maxWaiting Bound) Limiter {
	if s.c.SyncInterval > 0 {
		return newCached(s, maxWaiting)
	}
	return &Remote{s: s}
}

// Calls returns the store calls made and how many failed.
func (s *Store) Calls() (calls, failed int64) { return s.calls0, s.errors }

// rtt draws one call's round trip.
func (s *Store) rtt() time.Duration { return s.c.RTT.Sample(s.rng) }

// failed counts one call answered and reports whether it failed.
func (s *Store) failed() bool {
	s.calls0++
	if s.c.Errors > 0 && s.rng.Float64() < s.c.Errors {
		s.errors++
		return true
	}
	return false
}

// Remote is one instance's front on a Store without a local copy, the way
// go-redis/redis_rate keeps a GCRA in Redis: each acquisition is a call
// that takes a round trip; the store admits the request or answers how
// long until it would (RetryAfter), and the caller waits that long and
// calls again. A failed call admits the request (fail open) or counts as a
// refusal (fail closed). Callers are not queued: whoever calls when the
// limit allows wins.
type Remote struct {
	s     *Store
	calls slab.Slab[remoteCall]
}

type remoteCall struct {
	n   int64
	h   clock.Handler
	arg uint64
	tmr clock.Timer
}

var _ Limiter = (*Remote)(nil)

// Acquire sends the first call; the grant, if any, comes back as an event
// after at least one round trip.
func (r *Remote) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	if n > r.s.gcra.Max() || n < 1 {
		return 0, TooLarge
	}
	i, c, hd := r.calls.Alloc()
	c.n, c.h, c.arg = n, h, arg
	r.call(now, i)
	return Ticket(hd), Parked
}

// call sends one call to the store for call i; its answer arrives a round
// trip later.
func (r *Remote) call(now time.Duration, i uint32) {
	c := r.calls.At(i)
	c.tmr = r.s.sched.At(clock.Add(now, r.s.rtt()), (*remoteAnswer)(r), uint64(r.calls.Handle(i)))
}

type remoteAnswer Remote

// Fire is the store's answer reaching the caller. The store decided at the
// midpoint of the round trip; the model decides at arrival, which is the
// same for the order of decisions.
func (h *remoteAnswer) Fire(now time.Duration, arg uint64) {
	r := (*Remote)(h)
	i, c, ok := r.calls.Lookup(slab.Handle(arg))
	if !ok {
		return
	}
	s := r.s
	if s.failed() {
		if s.c.FailOpen {
			r.grant(now, i)
			return
		}
		c.tmr = s.sched.At(clock.Add(now, s.c.ErrorBackoff), (*remoteRetry)(r), arg)
		return
	}
	if s.gcra.TakeAt(now, c.n) {
		r.grant(now, i)
		return
	}
	at, ok := s.gcra.ReadyAt(now, c.n)
	if !ok {
		at = clock.Add(now, s.c.ErrorBackoff)
	}
	c.tmr = s.sched.At(max(at, now+1), (*remoteRetry)(r), arg) // RetryAfter, then call again
}

type remoteRetry Remote

// Fire calls the store again after a RetryAfter (or an error's back-off).
func (h *remoteRetry) Fire(now time.Duration, arg uint64) {
	r := (*Remote)(h)
	if i, _, ok := r.calls.Lookup(slab.Handle(arg)); ok {
		r.call(now, i)
	}
}

func (r *Remote) grant(now time.Duration, i uint32) {
	c := r.calls.At(i)
	h, arg := c.h, c.arg
	r.calls.Release(i)
	h.Fire(now, arg)
}

// Cancel withdraws a caller between calls or with a call in flight.
func (r *Remote) Cancel(now time.Duration, t Ticket) bool {
	i, c, ok := r.calls.Lookup(slab.Handle(t))
	if !ok {
		return false
	}
	r.s.sched.Cancel(c.tmr)
	r.calls.Release(i)
	return true
}

// Waiting returns this instance's callers not yet admitted.
func (r *Remote) Waiting() int { return r.calls.Live() }

// Usage returns the stored limit's usage at now. Other instances move it:
// a sampler must not take a reading of 0 as rest.
func (r *Remote) Usage(now time.Duration) float64 { return r.s.gcra.Usage(now) }

// Cached is one instance's front on a Store with a local copy of the
// stored limit, the way gateways that sync counters on a timer work (Kong's
// rate-limiting sync_rate, Envoy-style local caches): an acquisition is
// decided against the local copy at once, without a round trip, and waits
// in a FIFO line when the copy refuses. Once per sync interval the
// instance makes one call: the store is charged what the instance admitted
// since the last sync (even past the limit, which then owes it back), and
// the local copy becomes the store's state. Between syncs an instance does
// not see what the others admit, so together they can admit up to one
// interval's worth per instance over the limit; the debt they leave in the
// store holds everyone back afterwards, so the long-run rate keeps to the
// limit.
//
// A failed sync leaves the local copy as it was (fail open: the instance
// keeps admitting on a stale view, and what it spends is charged at the
// next sync) or closes it until a sync succeeds (fail closed). An instance
// syncs only while it has something to settle or callers waiting; an idle
// instance's copy goes stale until its next acquisition restarts the
// timer.
type Cached struct {
	s       *Store
	local   cachedCore
	line    *Line
	every   time.Duration
	phase   time.Duration // this instance's sync instants are phase + k·every
	copied  time.Duration // when the local copy was last taken from the store
	syncing bool          // a sync call or its timer is scheduled
}

// cachedCore is the local copy: a GCRA that counts what it admits and can
// be closed by a failed sync.
type cachedCore struct {
	g      GCRA
	spent  int64
	closed bool
}

func (c *cachedCore) TakeAt(now time.Duration, n int64) bool {
	if c.closed || !c.g.TakeAt(now, n) {
		return false
	}
	c.spent += n
	return true
}

func (c *cachedCore) ReadyAt(now time.Duration, n int64) (time.Duration, bool) {
	if c.closed {
		return 0, false // until a sync succeeds
	}
	return c.g.ReadyAt(now, n)
}

func (c *cachedCore) Max() int64                      { return c.g.Max() }
func (c *cachedCore) Usage(now time.Duration) float64 { return c.g.Usage(now) }

var _ Limiter = (*Cached)(nil)

func newCached(s *Store, maxWaiting Bound) *Cached {
	c := &Cached{s: s, local: cachedCore{g: *s.gcra}, every: s.c.SyncInterval}
	c.phase = time.Duration(s.rng.Int64N(int64(c.every)))
	c.line = NewLine(&c.local, s.sched, maxWaiting)
	return c
}

// Acquire decides against the local copy and starts the sync timer if it
// was idle.
func (c *Cached) Acquire(now time.Duration, n int64, deadline time.Duration, h clock.Handler, arg uint64) (Ticket, Status) {
	t, st := c.line.Acquire(now, n, deadline, h, arg)
	// A copy closed by a failed sync refuses until a sync succeeds, so a
	// refusal then starts the syncs again too.
	if (st == Granted || st == Parked || c.local.closed) && !c.syncing {
		c.syncing = true
		c.s.sched.Post(c.nextSync(now), (*cachedSend)(c), 0)
	}
	return t, st
}

// nextSync returns this instance's first sync instant after now.
func (c *Cached) nextSync(now time.Duration) time.Duration {
	if now < c.phase {
		return c.phase
	}
	k := (now-c.phase)/c.every + 1
	return clock.Add(c.phase, k*c.every)
}

type cachedSend Cached

// Fire sends the sync call; its answer arrives a round trip later.
func (h *cachedSend) Fire(now time.Duration, _ uint64) {
	c := (*Cached)(h)
	c.s.sched.Post(clock.Add(now, c.s.rtt()), (*cachedAnswer)(c), uint64(now))
}

type cachedAnswer Cached

// Fire settles with the store: the store is charged what the copy
// admitted, and the copy takes the store's state. sent is when the call
// left, which keeps the sync instants on their grid.
func (h *cachedAnswer) Fire(now time.Duration, sent uint64) {
	c := (*Cached)(h)
	s := c.s
	failed := s.failed()
	if failed {
		c.local.closed = !s.c.FailOpen
	} else {
		s.gcra.charge(c.copied, c.local.spent)
		c.local.spent = 0
		c.local.g, c.copied = *s.gcra, now
		c.local.closed = false
	}
	c.line.Retune(now)
	if c.line.Waiting() == 0 && (c.local.spent == 0 || failed) {
		// Nothing to settle, or nobody waiting on a failed settlement:
		// idle until the next acquisition, which carries what is unsettled.
		c.syncing = false
		return
	}
	s.sched.Post(max(c.nextSync(time.Duration(sent)), now), (*cachedSend)(c), 0)
}

// Cancel withdraws a caller from the local line.
func (c *Cached) Cancel(now time.Duration, t Ticket) bool { return c.line.Cancel(now, t) }

// Waiting returns this instance's callers waiting on the local copy.
func (c *Cached) Waiting() int { return c.line.Waiting() }

// Usage returns the local copy's usage: what this instance believes of the
// shared limit. A sync moves it: a sampler must not take 0 as rest.
func (c *Cached) Usage(now time.Duration) float64 { return c.local.Usage(now) }
