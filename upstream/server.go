package upstream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/limitsim/limitsim/internal/ahead"
	"github.com/limitsim/limitsim/internal/kindname"
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
	Latency Dist
	// LatencySchedule switches the latency distribution during the run (a
	// degraded upstream), in ascending At.
	LatencySchedule []LatencyStep
	// Quotas are the server-side limits, all enforced: a request passes
	// only if every one admits it; what one refused takes is Refused.
	Quotas []Quota
	// Refused is what a request refused by a quota still counts against.
	Refused       Refused
	RetryAfter    RetryAfter
	RejectLatency time.Duration
	// Workers bounds the requests the server works on at once; the rest
	// queue inside the server (0: unbounded).
	Workers int
	// Headers fills each Answer's rate-limit headers (Remaining, Reset);
	// off, they are left zero and cost nothing, for clients that never
	// read them.
	Headers bool
	// ResponseCost, if set, is the cost each answered request reveals when
	// it completes (a language model's output tokens): charged then to the
	// quotas that count cost, and told to the client.
	ResponseCost Dist
	// ResponseReserve is what the quotas that count cost take for the
	// response when a request starts (a provider counting max_tokens up
	// front), replaced by the response's real cost when it completes.
	ResponseReserve int64
	// Shared are the quotas this server counts together with other
	// servers (a top-level [[quota]]), checked after Quotas and enforced
	// as they are. A SharedQuota holds a run's state: build one per run
	// with NewSharedQuota and give it to every server that counts it.
	Shared []*SharedQuota
}

// Refused says what a refused request counts against.
type Refused uint8

// What a refused request counts against.
const (
	// RefusedNone: nothing; it takes from no quota.
	RefusedNone Refused = iota
	// RefusedOthers: the quotas that admitted it (a limit checked after
	// another has counted the request).
	RefusedOthers
	// RefusedAll: every rate or window quota, the refusing ones past their
	// limit: a counter incremented before it is compared, so a client that
	// keeps sending keeps itself locked out.
	RefusedAll
)

// Server is a modeled upstream. One Server is shared by every client
// instance, so all of them draw on the same quota.
type Server struct {
	cfg    Config
	lat    Latency
	rng    *rand.Rand
	cost   Count // the response's cost, if cfg.ResponseCost
	costR  *rand.Rand
	costly bool           // a quota counts cost
	shapes bool           // a quota holds what it admits
	quotas []*serverQuota // its own, then the shared ones
	// rejected counts, for each of quotas, the 429s it refused here.
	rejected []int64
	gate     *adaptiveConcurrency // the Gate quota, or nil
	gateAt   int                  // its place in quotas
	lsteps   []latencyStep        // latency changes still to apply, in order
	latAhead *ahead.Stream        // the latencies drawn ahead (DrawAhead), or nil
	next     time.Duration        // the first instant a latency or rate change is due
}

// serverQuota is one enforced quota.
type serverQuota struct {
	name    string
	core    models.Core
	cost    bool              // counts cost, not requests
	permits *models.Semaphore // a concurrency quota, released on completion
	steps   []RateStep        // rate changes still to apply, in order
	status  int               // the HTTP status it refuses with
	shaper  shaper            // a quota that holds what it admits, or nil
	gate    bool              // checked on arrival (Server.Arrive), not at the start of service
	// admitted and refused count the requests it took from and the 429s
	// it refused, over every server that counts it.
	admitted, refused int64
	taken             int64 // the units the admitted requests took
}

// units is what a request of cost takes from the quota.
func (q *serverQuota) units(cost int64) int64 {
	if q.cost {
		return cost
	}
	return 1
}

// admits reports whether the quota admits a request of cost at now.
func (q *serverQuota) admits(now time.Duration, cost int64) bool {
	if q.permits != nil {
		return q.permits.InUse() < q.permits.Max()
	}
	at, ok := q.core.ReadyAt(now, q.units(cost))
	return ok && at <= now
}

// LatencyStep switches an upstream's latency distribution from At on.
type LatencyStep struct {
	At      time.Duration
	Latency Dist
}

type latencyStep struct {
	at  time.Duration
	lat Latency
}

// Streams are a server's random streams: its latencies, its responses'
// costs (nil without Config.ResponseCost) and the jitter of its adaptive
// concurrency quota (nil without one, or with jitter 0).
type Streams struct {
	Latency, Cost, Jitter *rand.Rand
}

// NewServer builds the server cfg describes; rng is its latency stream
// and costR the stream of its responses' costs (nil without ResponseCost).
func NewServer(cfg Config, rng, costR *rand.Rand) (*Server, error) {
	return NewServerWith(cfg, Streams{Latency: rng, Cost: costR})
}

// NewServerWith builds the server cfg describes, drawing from streams.
func NewServerWith(cfg Config, streams Streams) (*Server, error) {
	lat, err := NewLatency(cfg.Latency)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: latency: %w", cfg.Host, err)
	}
	costR := streams.Cost
	s := &Server{cfg: cfg, lat: lat, rng: streams.Latency, costR: costR}
	if cfg.ResponseCost != nil {
		if s.cost, err = NewCount(cfg.ResponseCost, 0); err != nil {
			return nil, fmt.Errorf("upstream %s: response_cost: %w", cfg.Host, err)
		}
		if costR == nil {
			return nil, fmt.Errorf("upstream %s: response_cost needs a random stream", cfg.Host)
		}
	}
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
		sq, err := s.newQuota(q, cfg.Refused, streams)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %s: %w", cfg.Host, key, err)
		}
		s.quotas = append(s.quotas, sq)
	}
	for _, sh := range cfg.Shared {
		if cfg.Refused == RefusedAll && sh.q.permits == nil && !sh.q.charges() {
			return nil, fmt.Errorf("upstream %s: quota %s: a %s quota cannot count refused requests past its limit", cfg.Host, sh.q.name, sh.kind)
		}
		s.quotas = append(s.quotas, &sh.q)
	}
	s.rejected = make([]int64, len(s.quotas))
	for _, q := range s.quotas {
		s.shapes = s.shapes || q.shaper != nil
		s.costly = s.costly || q.cost
	}
	s.due()
	return s, nil
}

// newServerQuota builds the quota q, under the refused-request rule
// refused.
func newServerQuota(q Quota, refused Refused) (*serverQuota, error) {
	k, err := LookupQuota(q.Kind)
	var core models.Core
	switch {
	case err != nil:
	case k.Gate:
		err = fmt.Errorf("a %s quota is a filter in front of one server: it cannot be shared", q.Kind)
	default:
		core, err = k.core(q)
	}
	if err != nil {
		return nil, err
	}
	sq := &serverQuota{name: q.Name(), core: core, cost: q.CountsCost(), status: q.RefusalStatus()}
	if sh, ok := core.(shaper); ok {
		sq.shaper = sh
	}
	switch {
	case q.Unit != "" && q.Unit != "requests" && q.Unit != UnitCost:
		return nil, fmt.Errorf("unit %q (requests or cost)", q.Unit)
	case sq.cost && !k.Cost:
		return nil, fmt.Errorf("a %s quota cannot count cost", q.Kind)
	case sq.cost && !sq.charges():
		return nil, fmt.Errorf("a %s quota cannot be charged a response's cost", q.Kind)
	}
	if refused == RefusedAll && !k.Concurrency && !sq.charges() {
		return nil, fmt.Errorf("a %s quota cannot count refused requests past its limit", q.Kind)
	}
	if sem, ok := core.(*models.Semaphore); ok && k.Concurrency {
		sq.permits = sem
	}
	if len(q.Schedule) > 0 {
		if _, ok := core.(*models.TokenBucket); !ok {
			return nil, fmt.Errorf("a schedule needs a %s quota, not %s", kindname.QuotaTokenBucket, q.Kind)
		}
		sq.steps = slices.Clone(q.Schedule)
	}
	return sq, nil
}

// newQuota builds one of the server's own quotas: a Gate quota (at most
// one, kept in s.gate) with its random stream, or any other kind.
func (s *Server) newQuota(q Quota, refused Refused, streams Streams) (*serverQuota, error) {
	k, err := LookupQuota(q.Kind)
	if err != nil || !k.Gate {
		return newServerQuota(q, refused)
	}
	switch {
	case s.gate != nil:
		return nil, fmt.Errorf("%w: a second %s: a server has at most one", ErrQuota, q.Kind)
	case q.CountsCost():
		return nil, fmt.Errorf("a %s quota cannot count cost", q.Kind)
	}
	if s.gate, err = k.gate(q, streams.Jitter); err != nil {
		return nil, err
	}
	s.gateAt = len(s.quotas)
	return &serverQuota{name: q.Name(), core: s.gate, status: q.RefusalStatus(), gate: true}, nil
}

// charges reports whether the quota's core can be charged past its limit.
func (q *serverQuota) charges() bool {
	_, ok := q.core.(models.Charger)
	return ok
}

// Answer is the server's reply to a request that reached it.
type Answer struct {
	OK bool
	// Status is a refusal's HTTP status (429, 503 or 403: the first
	// refusing quota's); 0 when OK.
	Status int
	// After is when the response arrives, counted from the start: for an
	// admitted request, Held and then its service.
	After time.Duration
	// Held is how long the server held an admitted request before serving
	// it (nginx limit_req's delay): the longest over the quotas.
	Held time.Duration
	// Door: refused on arrival by a Gate quota (Server.Arrive), so it
	// never reached the workers and holds nothing to give back.
	Door bool
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
	// (a sliding window, a concurrency limit). Only quotas that count
	// requests take part: those that count cost fill RemainingCost and
	// ResetCost (the x-ratelimit-remaining-tokens family) the same way,
	// -1 when no quota counts cost.
	Remaining     int64
	Reset         time.Duration
	RemainingCost int64
	ResetCost     time.Duration
	// LimitCost is the limit of the cost quota RemainingCost reads
	// (x-ratelimit-limit-tokens).
	LimitCost int64
	// Cost is the cost the response revealed (its output tokens), charged
	// to the quotas that count cost when it completes; 0 without
	// Config.ResponseCost.
	Cost int64
}

// headers fills a's rate-limit headers at now: the requests family, and
// the cost family when a quota counts cost.
func (s *Server) headers(now time.Duration, a *Answer) {
	a.Remaining, a.Reset, _ = s.family(now, false)
	a.RemainingCost, a.ResetCost = -1, 0
	if s.costly {
		a.RemainingCost, a.ResetCost, a.LimitCost = s.family(now, true)
	}
}

// family returns one header family's remaining, reset and limit at now,
// over the quotas that count cost (cost) or requests (-1, 0 without any).
func (s *Server) family(now time.Duration, cost bool) (remaining int64, reset time.Duration, limit int64) {
	remaining = -1
	least := -1
	for i := range s.quotas {
		q := s.quotas[i]
		if q.cost != cost || q.gate { // a proxy's filter sends no rate-limit headers
			continue
		}
		left := int64(math.Floor(float64(q.core.Max())*(1-q.core.Usage(now)) + 1e-9))
		if remaining < 0 || left < remaining {
			remaining, least = left, i
		}
	}
	if remaining > 0 || (cost && remaining == 0) {
		// A cost family at zero names when it is whole again: how much a
		// request needs, only the client knows.
		if r, ok := s.quotas[least].core.(models.Resetter); ok {
			reset = r.ResetAt(now) - now
		}
		return remaining, reset, s.quotas[least].core.Max()
	}
	if remaining < 0 {
		return remaining, 0, 0
	}
	for i := range s.quotas {
		if q := s.quotas[i]; !q.cost && !q.gate && q.permits == nil && !q.admits(now, 1) {
			if at, ok := q.core.ReadyAt(now, 1); ok {
				reset = max(reset, at-now)
			}
		}
	}
	return remaining, reset, s.quotas[least].core.Max()
}

// Start checks the quotas for a request of cost starting at now and draws
// its latency. A request is admitted only if every quota admits it, and
// then takes from each (one unit, or from a quota that counts cost its
// cost plus Config.ResponseReserve); what one refused takes is
// Config.Refused. A request answered OK under a concurrency quota holds a
// permit until Finish, and its response's real cost is charged then.
func (s *Server) Start(now time.Duration, cost int64) Answer {
	var a Answer
	s.StartInto(now, cost, &a)
	return a
}

// StartInto is Start writing the answer into *a (all of it): a caller
// that keeps the answer in a larger record saves copying it twice.
func (s *Server) StartInto(now time.Duration, cost int64, a *Answer) {
	s.follow(now)
	own := cost
	cost += s.cfg.ResponseReserve // what the quotas that count cost take now
	status := s.admit(now, cost)
	if status == 0 {
		*a = Answer{OK: true, After: s.latency(), RemainingCost: -1}
		if s.shapes {
			a.Held = s.held()
			a.After = clampAdd(a.Held, a.After)
		}
		if s.costR != nil {
			a.Cost = s.cost.Sample(s.costR)
		}
		if s.cfg.Headers {
			s.headers(now, a)
		}
		return
	}
	s.countRefused(now, own) // a refused request has no response to reserve for
	s.refuse(now, cost, status, a)
}

// refuse writes into *a (all of it) the refusal of a request of cost at
// now with status: its headers and Retry-After.
func (s *Server) refuse(now time.Duration, cost int64, status int, a *Answer) {
	*a = Answer{Status: status, After: s.cfg.RejectLatency, RemainingCost: -1}
	if s.cfg.Headers {
		s.headers(now, a)
	}
	switch ra := s.cfg.RetryAfter; {
	case ra.None:
	case ra.Reset:
		// The latest of the refusing rate quotas' next admissions.
		var at time.Duration
		for i := range s.quotas {
			if q := s.quotas[i]; q.permits == nil && !q.gate && !q.admits(now, cost) {
				if t, ok := q.core.ReadyAt(now, q.units(cost)); ok {
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
}

// admit takes a request of cost from every quota if each admits it and
// returns 0, and otherwise counts a refusal at each that does not and
// returns the status of the first of them.
func (s *Server) admit(now time.Duration, cost int64) (status int) {
	if len(s.quotas) == 1 && s.gate == nil {
		// One quota: taking is the check, as a core's TakeAt succeeds
		// exactly when its ReadyAt is now.
		q := s.quotas[0]
		if q.core.TakeAt(now, q.units(cost)) {
			q.admitted++
			q.taken += q.units(cost)
			return 0
		}
		q.refused++
		s.rejected[0]++
		return q.status
	}
	for i, q := range s.quotas {
		if !q.gate && !q.admits(now, cost) {
			q.refused++
			s.rejected[i]++
			if status == 0 {
				status = q.status
			}
		}
	}
	if status == 0 {
		for _, q := range s.quotas {
			if q.gate {
				continue
			}
			q.core.TakeAt(now, q.units(cost))
			q.admitted++
			q.taken += q.units(cost)
		}
	}
	return status
}

// held is the longest hold the quotas put on the request they admitted
// last, as nginx delays a request by the longest of its limit_req delays.
func (s *Server) held() time.Duration {
	var d time.Duration
	for i := range s.quotas {
		if q := s.quotas[i]; q.shaper != nil {
			d = max(d, q.shaper.Held())
		}
	}
	return d
}

// clampAdd is a + b, at most the longest duration.
func clampAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// countRefused counts a refused request of cost as Config.Refused says.
// A refused request never holds a concurrency permit.
func (s *Server) countRefused(now time.Duration, cost int64) {
	for i := range s.quotas {
		q := s.quotas[i]
		switch {
		case q.permits != nil || q.gate || s.cfg.Refused == RefusedNone:
		case s.cfg.Refused == RefusedAll:
			q.core.(models.Charger).ChargeAt(now, q.units(cost))
		case q.admits(now, cost):
			q.core.TakeAt(now, q.units(cost))
		}
	}
}

// Finish ends a request the server answered OK with a: its concurrency
// permits come back and the quotas that count cost are charged the cost
// its response revealed, room or not (a debt the next requests wait out),
// less the ResponseReserve they took at the start (the excess comes back).
func (s *Server) Finish(now time.Duration, a *Answer) {
	s.follow(now)
	for i := range s.quotas {
		q := s.quotas[i]
		switch {
		case q.permits != nil:
			q.permits.ReleaseAt(now, 1)
		case q.cost && a.Cost != s.cfg.ResponseReserve:
			// The reserve was taken when service started.
			q.core.(models.Charger).SettleAt(now, now-a.After, s.cfg.ResponseReserve, a.Cost)
		}
	}
}

// Shared reports whether quota k of Rejections is a shared one, and
// whether it counts cost.
func (s *Server) Shared(k int) (shared, countsCost bool) {
	return k >= len(s.cfg.Quotas), s.quotas[k].cost
}

// CountsCost reports whether a quota of the server counts cost.
func (s *Server) CountsCost() bool { return s.costly }

// Rejections returns, for each quota in order, its name and the 429s it
// refused (a request refused by several counts for each).
func (s *Server) Rejections() (names []string, counts []int64) {
	for i, q := range s.quotas {
		names, counts = append(names, q.name), append(counts, s.rejected[i])
	}
	return names, counts
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

// Arrive is a request reaching the server at now, before its workers'
// queue: a server with a Gate quota (Envoy's adaptive concurrency filter)
// forwards it or refuses it at once. It reports whether the request goes
// on to the workers; refused, *a is its answer (all of it, Door set). A
// forwarded request must come back through Depart when it is answered.
func (s *Server) Arrive(now time.Duration, a *Answer) bool {
	if s.gate == nil {
		return true
	}
	s.follow(now)
	if s.gate.forward(now) {
		return true
	}
	q := s.quotas[s.gateAt]
	q.refused++
	s.rejected[s.gateAt]++
	s.refuse(now, 1, q.status, a)
	a.Door = true
	return false
}

// Depart tells the Gate quota that a request it forwarded at arrived was
// answered at now (OK or refused by another quota): its latency is the
// filter's sample. Without a Gate quota it does nothing.
func (s *Server) Depart(now, arrived time.Duration) {
	if s.gate != nil {
		s.gate.record(now, arrived)
	}
}

// ConcurrencyLimit is the Gate quota's concurrency limit at now; false
// without one.
func (s *Server) ConcurrencyLimit(now time.Duration) (int64, bool) {
	if s.gate == nil {
		return 0, false
	}
	return s.gate.Limit(now), true
}
