package models

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/internal/kindname"
)

// Family groups limiter kinds by what they count, which decides their
// parameters, how their usage reads and whether their units come back.
type Family uint8

var familyNames = [...]string{kindname.RateFamily, kindname.WindowFamily, kindname.ConcurrencyFamily}

func (f Family) String() string { return familyNames[f] }

// Limiter families.
const (
	// RateFamily limiters count starts over time with a rate and a burst.
	RateFamily Family = iota
	// WindowFamily limiters allow a limit of starts per window.
	WindowFamily
	// ConcurrencyFamily limiters hold permits until released.
	ConcurrencyFamily
)

// Params is the configuration of one limiter, for every kind; each kind
// reads the fields its Keys set. The toml tags are the keys' names in a
// scenario file: a scenario's limiter table embeds Params, so that the
// resolved scenario writes each key as it was read. A key added to a kind
// is a field here and a Key in the kind's entry below: the scenario's
// decoder, its checks, --set, the resolved scenario and the reference
// take it from those alone.
type Params struct {
	Rate        float64       `toml:"rate,omitzero"`          // rate: tokens per second
	Burst       float64       `toml:"burst,omitzero"`         // burst: bucket capacity
	InitialFill *float64      `toml:"initial_fill,omitempty"` // initial_fill: share of the burst held at the start (nil: 1)
	Limit       int64         `toml:"limit,omitzero"`         // limit: starts per window
	Window      time.Duration `toml:"window,omitzero"`        // window
	Permits     int64         `toml:"permits,omitzero"`       // permits
	MaxWaiting  Bound         `toml:"max_waiting,omitempty"`  // max_waiting: bound on the waiting line
	Lag         Jitter        `toml:"lag,omitempty"`          // lag: scheduling delay of each wake-up
	Handoff     time.Duration `toml:"handoff,omitzero"`       // handoff: cost of each lock hand-over

	// AIMD: the rate starts at Initial and moves within [Min, Max]: × Decrease
	// on a 429, + Increase per Interval without one.
	Initial  float64       `toml:"initial,omitzero"`
	Min      float64       `toml:"min,omitzero"`
	Max      float64       `toml:"max,omitzero"`
	Increase float64       `toml:"increase,omitzero"`
	Interval time.Duration `toml:"interval,omitzero"`
	Decrease float64       `toml:"decrease,omitzero"`

	// K is sre_throttle's multiplier: the client sends up to K times what
	// the backend accepts (over Window).
	K float64 `toml:"k,omitzero"`
	// Probe is vegas's probe multiplier (see VegasConfig.Probe); nil:
	// DefaultProbe.
	Probe *float64 `toml:"probe,omitempty"`
}

// Fill returns the initial fill of a bucket (1 when unset).
func (p *Params) Fill() float64 {
	if p.InitialFill == nil {
		return 1
	}
	return *p.InitialFill
}

// ProbeMultiplier returns vegas's probe multiplier (DefaultProbe when
// unset).
func (p *Params) ProbeMultiplier() float64 {
	if p.Probe == nil {
		return DefaultProbe
	}
	return *p.Probe
}

// Env is what a limiter is built on: its scheduler, and a random stream for
// kinds that draw (created only when they ask).
type Env struct {
	Sched  clock.Scheduler
	Stream func() *rand.Rand
}

// Kind is one limiter kind as a scenario names it. The table of kinds is
// the one place a kind is declared: the scenario decoder, its checks, the
// client and the scenario reference all read it.
type Kind struct {
	Name   string
	Family Family
	// Keys are the parameter keys the kind reads, beyond those every kind
	// has (name, kind, scope, hosts, tenants, max_waiting), in docs order.
	Keys []Key
	// WholeBurst: the burst must be a whole number (and defaults to the
	// rate rounded up).
	WholeBurst bool
	// ExactLog: the kind remembers the instant of every start in its
	// window (8 bytes each, in a buffer of the next power of two), so its
	// limit is bounded by MaxLimit and by the run's memory budget.
	ExactLog bool
	// Chargeable: its limiters can be charged after the fact (a
	// reservation reconciled with a response's real cost): a Line over a
	// Charger.
	Chargeable bool
	// Adaptive: its limiters implement Adaptive (the client reports each
	// answer to them).
	Adaptive bool
	// Doc is the kind's line in the scenario reference.
	Doc string
	// New builds one limiter of this kind.
	New func(p Params, env Env) (Limiter, error)
}

// MaxExactLog is the largest limit of a kind with an exact log.
const MaxExactLog = 1 << 26

// Capacity is what one limiter of this kind configured by p allows: units
// per second for a rate or window limiter (its rate, or limit ÷ window),
// permits for a concurrency limiter.
func (k Kind) Capacity(p Params) float64 {
	switch k.Family {
	case RateFamily:
		if p.Max > 0 { // an adaptive rate: the most it allows
			return p.Max
		}
		return p.Rate
	case WindowFamily:
		if p.Window <= 0 {
			return 0
		}
		return float64(p.Limit) / p.Window.Seconds()
	}
	return float64(p.Permits)
}

// Releases reports whether the kind's units come back (a concurrency limiter).
func (k Kind) Releases() bool { return k.Family == ConcurrencyFamily }

// lag turns a Jitter into the per-wake-up draw the article-style buckets take.
func lag(j Jitter, env Env) func() time.Duration {
	if j.IsZero() {
		return nil
	}
	r := env.Stream()
	return func() time.Duration { return j.Sample(r) }
}

func line(c Core, err error, p Params, env Env) (Limiter, error) {
	if err != nil {
		return nil, err
	}
	return NewLine(c, env.Sched, p.MaxWaiting), nil
}

// The keys of one or a few kinds.
var (
	handoffKey = Key{Name: "handoff", Type: "duration", Default: time.Duration(0), Min: time.Duration(0),
		Doc:   "delay between a release of the lock and the next waiter running",
		Field: func(p *Params) any { return &p.Handoff }}
	kKey = Key{Name: "k", Type: "number", Default: 2.0, Min: 1.0,
		Doc:   "the client sends up to `k` times what the backend accepted over `window` and sheds the rest locally (a local refusal ends the request as rejected by the limiter)",
		Field: func(p *Params) any { return &p.K }}
	throttleWindowKey = Key{Name: "window", Type: "duration", Default: 2 * time.Minute, Min: time.Second,
		Doc:   "the window the requests and the accepts are counted over",
		Field: func(p *Params) any { return &p.Window }}
	probeKey = Key{Name: "probe", Type: "number", Default: DefaultProbe, Min: 0.0, OnlyWritten: true,
		Doc:   "every `probe` × limit windows of 20 answers (times a random factor in [0.5, 1)) the least latency seen is forgotten for the current window's (Netflix's probeMultiplier), so a server that slowed for good is not read as a queue; the price is a limit that creeps above the knee. 0 never probes. Left out of the resolved scenario unless written",
		Field: func(p *Params) any { return &p.Probe }}

	rateInitial, rateMin, rateMax       = adaptive(false)
	permitInitial, permitMin, permitMax = adaptive(true)
)

var kinds = []Kind{
	{Name: kindname.TokenBucket, Family: RateFamily, Chargeable: true, Keys: []Key{rateKey, burstKey, initialFillKey},
		Doc: "`rate` per second, `burst` capacity (default: the rate), `initial_fill` 0..1 (default 1); FIFO waiters",
		New: func(p Params, env Env) (Limiter, error) {
			b, err := tokenBucket(TokenBucketConfig{Rate: p.Rate, Burst: p.Burst, InitialFill: p.Fill()})
			if err != nil {
				return nil, err
			}
			return newBucketLine(b, env.Sched, p.MaxWaiting), nil
		}},
	{Name: kindname.GCRA, Family: RateFamily, Keys: []Key{rateKey, burstKey}, WholeBurst: true,
		Doc: "`rate`, whole `burst` (default: the rate rounded up); the same admissions as a bucket, one instant of state",
		New: func(p Params, env Env) (Limiter, error) {
			g, err := NewGCRA(GCRAConfig{Rate: p.Rate, Burst: int64(p.Burst)})
			return line(g, err, p, env)
		}},
	{Name: kindname.XRate, Family: RateFamily, Keys: []Key{rateKey, burstKey}, WholeBurst: true,
		Doc: "a real `golang.org/x/time/rate.Limiter` driven as its `Wait` does: fails at once when the reservation matures after the deadline",
		New: func(p Params, env Env) (Limiter, error) { return NewXRate(p.Rate, int(p.Burst), env.Sched) }},
	{Name: kindname.PollingBucket, Family: RateFamily, Keys: []Key{rateKey, burstKey, initialFillKey, lagKey},
		Doc: "the article's `TokenBucket`: each waiter sleeps its deficit and retries; not FIFO. `lag` (jitter) delays each wake-up",
		New: func(p Params, env Env) (Limiter, error) {
			b, err := NewTokenBucket(TokenBucketConfig{Rate: p.Rate, Burst: p.Burst, InitialFill: p.Fill()})
			if err != nil {
				return nil, err
			}
			return NewPollingBucket(b, env.Sched, lag(p.Lag, env)), nil
		}},
	{Name: kindname.LockedBucket, Family: RateFamily, Keys: []Key{rateKey, burstKey, initialFillKey, lagKey, handoffKey},
		Doc: "the bucket that sleeps holding its lock: one waiter at a time; `handoff` is the event-loop trip each hand-over costs",
		New: func(p Params, env Env) (Limiter, error) {
			b, err := NewTokenBucket(TokenBucketConfig{Rate: p.Rate, Burst: p.Burst, InitialFill: p.Fill()})
			if err != nil {
				return nil, err
			}
			return NewLockedBucket(b, env.Sched, lag(p.Lag, env), p.Handoff), nil
		}},
	{Name: kindname.AIMD, Family: RateFamily, Adaptive: true, Keys: []Key{rateInitial, rateMin, rateMax, increaseKey, intervalKey, decreaseKey, burstKey},
		Doc: "a token bucket whose rate adapts to 429s: × `decrease` (0.5) on a 429, at most once per `interval` (1s); + `increase` (1/s) per `interval` without one; within [`min` (1/s), `max`], from `initial`; FIFO waiters",
		New: func(p Params, env Env) (Limiter, error) {
			return NewAIMD(AIMDConfig{Initial: p.Initial, Min: p.Min, Max: p.Max, Increase: p.Increase, Decrease: p.Decrease,
				Interval: p.Interval, Burst: p.Burst, MaxWaiting: p.MaxWaiting}, env.Sched)
		}},
	{Name: kindname.SREThrottle, Family: RateFamily, Adaptive: true, Keys: []Key{kKey, throttleWindowKey},
		Doc: "client-side adaptive throttling (Google SRE book): refuses locally with probability max(0, (requests − `k` × accepts) ÷ (requests + 1)) over `window` (`k` 2, `window` 2m); never waits",
		New: func(p Params, env Env) (Limiter, error) { return NewSREThrottle(p.K, p.Window, env.Stream()) }},
	{Name: kindname.SlidingWindow, Family: WindowFamily, Keys: []Key{limitKey, windowKey}, ExactLog: true,
		Doc: "exact log: never more than `limit` starts in any `window`; O(limit) memory",
		New: func(p Params, env Env) (Limiter, error) {
			c, err := NewSlidingLog(p.Limit, p.Window)
			return line(c, err, p, env)
		}},
	{Name: kindname.SlidingWindowCounter, Family: WindowFamily, Chargeable: true, Keys: []Key{limitKey, windowKey},
		Doc: "O(1) approximation of the sliding window from two fixed windows",
		New: func(p Params, env Env) (Limiter, error) {
			c, err := NewSlidingCounter(p.Limit, p.Window)
			return line(c, err, p, env)
		}},
	{Name: kindname.FixedWindow, Family: WindowFamily, Chargeable: true, Keys: []Key{limitKey, windowKey},
		Doc: "`limit` per `window`, reset at boundaries: can pass twice the limit across one",
		New: func(p Params, env Env) (Limiter, error) {
			c, err := NewFixedWindow(p.Limit, p.Window)
			return line(c, err, p, env)
		}},
	{Name: kindname.AIMDConcurrency, Family: ConcurrencyFamily, Adaptive: true, Keys: []Key{permitInitial, permitMin, permitMax, increaseKey, intervalKey, decreaseKey},
		Doc: "a concurrency limit driven by 429s: permits × `decrease` (0.5) on a 429, at most once per `interval` (1s); + `increase` (1) permits per `interval` without one; within [`min` (1), `max`] from `initial`; FIFO waiters",
		New: func(p Params, env Env) (Limiter, error) {
			return NewAIMDConcurrency(AIMDConfig{Initial: p.Initial, Min: p.Min, Max: p.Max, Increase: p.Increase, Decrease: p.Decrease,
				Interval: p.Interval, MaxWaiting: p.MaxWaiting}, env.Sched)
		}},
	{Name: kindname.Vegas, Family: ConcurrencyFamily, Adaptive: true, Keys: []Key{permitInitial, permitMin, permitMax, probeKey},
		Doc: "a concurrency limit set from latency (TCP Vegas, as Netflix's concurrency-limits adapts it): grows while answers show no queueing at the server, shrinks as their latency rises above the least seen or on a 429; from `initial` within [`min`, `max`] permits; every `probe` (30) × limit windows of 20 answers, times a random factor in [0.5, 1), it forgets the least latency and takes the current one (Netflix's probeMultiplier: a server that slowed for good is not mistaken for queueing; 0 never probes); FIFO waiters",
		New: func(p Params, env Env) (Limiter, error) {
			c := VegasConfig{Initial: int64(p.Initial), Min: int64(p.Min), Max: int64(p.Max), MaxWaiting: p.MaxWaiting, Probe: p.ProbeMultiplier()}
			if c.Probe > 0 {
				c.Rand = env.Stream()
			}
			return NewVegas(c, env.Sched)
		}},
	{Name: kindname.Gradient2, Family: ConcurrencyFamily, Adaptive: true, Keys: []Key{permitInitial, permitMin, permitMax},
		Doc: "a concurrency limit from the ratio of long-term to short-term latency (Netflix's Gradient2): grows by about √limit while latency holds, shrinks as it rises or on a 429; from `initial` within [`min`, `max`] permits; FIFO waiters",
		New: func(p Params, env Env) (Limiter, error) {
			return NewGradient2(VegasConfig{Initial: int64(p.Initial), Min: int64(p.Min), Max: int64(p.Max), MaxWaiting: p.MaxWaiting}, env.Sched)
		}},
	{Name: kindname.Semaphore, Family: ConcurrencyFamily, Keys: []Key{permitsKey},
		Doc: "`permits` held until the response: asyncio.Semaphore, FIFO, a release wakes exactly the waiters that fit",
		New: func(p Params, env Env) (Limiter, error) {
			s, err := NewSemaphore(p.Permits)
			return line(s, err, p, env)
		}},
}

// Kinds returns the limiter kinds in docs order.
func Kinds() []Kind { return slices.Clone(kinds) }

// KindNames returns the kinds' names in docs order.
func KindNames() []string {
	out := make([]string, len(kinds))
	for i := range kinds {
		out[i] = kinds[i].Name
	}
	return out
}

// LookupKind returns the kind called name.
func LookupKind(name string) (Kind, error) {
	for _, k := range kinds {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("%w: unknown limiter kind %q", ErrConfig, name)
}
