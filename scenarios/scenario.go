// Package scenarios loads limitsim scenario files (TOML, decoded strictly:
// every problem names the file, the key and the line), wires the scenario's
// client pipeline onto the engine, limiters and modeled upstreams, and runs
// it. It also embeds the bundled example scenarios.
package scenarios

import (
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// Scenario is a loaded, validated scenario with every default filled in.
// Encoded back to TOML it is "the scenario as run".
type Scenario struct {
	Name        string      `toml:"name"`
	Description string      `toml:"description,omitempty"`
	Run         RunSettings `toml:"run"`
	Workload    Workload    `toml:"workload"`
	Client      Client      `toml:"client"`
	Upstreams   []Upstream  `toml:"upstream"`

	// File is the path the scenario was read from ("" for a bundled one).
	File string `toml:"-"`
	// Warnings are legal but questionable choices, found while loading:
	// limiters acquired against the seed's order, lock-order cycles between
	// paths. The run simulates what the file says and reports them.
	Warnings []string `toml:"-"`
}

// RunSettings holds the run's length and statistics settings.
type RunSettings struct {
	Seed         uint64   `toml:"seed"`
	Requests     int64    `toml:"requests,omitempty"` // 0: limited by duration
	Duration     Duration `toml:"duration,omitempty"` // 0: limited by requests
	Warmup       Duration `toml:"warmup"`
	Interval     Duration `toml:"interval"`
	Replications int      `toml:"replications"`
	// Guards: a run that trips one stops with exit code 4 and partial,
	// valid outputs marked incomplete.
	MaxEvents           int64 `toml:"max_events"`
	MaxLiveRequests     int64 `toml:"max_live_requests"`
	MaxEventsPerInstant int64 `toml:"max_events_per_instant"`
}

// Default guard limits.
const (
	DefaultMaxEvents           = 2_000_000_000
	DefaultMaxLiveRequests     = 1_000_000
	DefaultMaxEventsPerInstant = 1_000_000
)

// Weighted is a named share of the workload. A tenant may instead bring its
// own arrival process (Arrival, Rate, On, Off): the workload is then the
// superposition of every tenant's arrivals.
type Weighted struct {
	Name    string   `toml:"name"`
	Weight  float64  `toml:"weight"`
	Arrival string   `toml:"arrival,omitempty"`
	Rate    float64  `toml:"rate,omitempty"`
	On      Duration `toml:"on,omitempty"`
	Off     Duration `toml:"off,omitempty"`
}

// Workload is the arrival process and how arrivals spread over hosts and
// tenants.
type Workload struct {
	Arrival   string     `toml:"arrival"`
	Rate      float64    `toml:"rate,omitempty"`
	RateTo    float64    `toml:"rate_to,omitempty"` // ramp: final rate
	Ramp      Duration   `toml:"ramp,omitempty"`    // ramp: time to reach rate_to
	On        Duration   `toml:"on,omitempty"`      // onoff: burst length
	Off       Duration   `toml:"off,omitempty"`     // onoff: quiet length
	Trace     string     `toml:"trace,omitempty"`   // trace: CSV of arrival offsets
	Cost      int64      `toml:"cost"`              // tokens (or permits) per request
	Hosts     []Weighted `toml:"hosts"`
	HostOrder string     `toml:"host_order"`
	Tenants   []Weighted `toml:"tenants"`

	// TraceTimes holds the trace's arrival offsets once loaded.
	TraceTimes []time.Duration `toml:"-"`
}

// Client is one client process (repeated Instances times).
type Client struct {
	Instances      int       `toml:"instances"`
	Ingest         string    `toml:"ingest"`
	QueueCapacity  int       `toml:"queue_capacity,omitempty"`
	QueueFull      string    `toml:"queue_full,omitempty"`
	Workers        int       `toml:"workers,omitempty"`
	MaxWaiting     int       `toml:"max_waiting"` // -1: unbounded
	AcquireTimeout Duration  `toml:"acquire_timeout"`
	RequestTimeout Duration  `toml:"request_timeout"`
	Limiters       []Limiter `toml:"limiter"`
	Paths          []Path    `toml:"path,omitempty"`
	On429          On429     `toml:"on_429"`
	Retry          Retry     `toml:"retry"`
}

// Limiter is one named client-side limiter.
type Limiter struct {
	Name        string   `toml:"name"`
	Kind        string   `toml:"kind"`
	Scope       string   `toml:"scope"`
	Hosts       []string `toml:"hosts,omitempty"`   // host scope: only these hosts
	Tenants     []string `toml:"tenants,omitempty"` // tenant scope: only these tenants
	Rate        float64  `toml:"rate,omitempty"`
	Burst       float64  `toml:"burst,omitempty"`
	InitialFill float64  `toml:"initial_fill,omitempty"`
	Limit       int64    `toml:"limit,omitempty"`
	Window      Duration `toml:"window,omitempty"`
	Permits     int64    `toml:"permits,omitempty"`
	MaxWaiting  int      `toml:"max_waiting"` // -1: unbounded
	Lag         Jitter   `toml:"lag,omitempty"`
	Handoff     Duration `toml:"handoff,omitempty"`
}

// OwnArrivals reports whether tenants bring their own arrival processes.
func (w *Workload) OwnArrivals() bool { return len(w.Tenants) > 0 && w.Tenants[0].Rate > 0 }

// Releases reports whether the limiter's units come back (concurrency).
func (l *Limiter) Releases() bool { return l.Kind == "semaphore" }

// Path is a request class that takes its own limiters in its own order.
type Path struct {
	Name     string   `toml:"name"`
	Weight   float64  `toml:"weight"`
	Limiters []string `toml:"limiters"`
}

// On429 is the client's reaction to a 429.
type On429 struct {
	Pause           string `toml:"pause"`       // host | caller | none
	PauseCheck      string `toml:"pause_check"` // entry | send
	HonorRetryAfter bool   `toml:"honor_retry_after"`
	Fallback        Jitter `toml:"fallback"`
	ResumeJitter    Jitter `toml:"resume_jitter"`
}

// Retry is the retry policy for 429s.
type Retry struct {
	Attempts int      `toml:"attempts"`
	Backoff  string   `toml:"backoff"` // none | constant | exponential
	Base     Duration `toml:"base"`
	Cap      Duration `toml:"cap"`
	Jitter   string   `toml:"jitter"` // none | full | equal | decorrelated
}

// Upstream is one modeled host ("*" for every host without its own block).
type Upstream struct {
	Host          string          `toml:"host"`
	Latency       upstream.Spec   `toml:"-"`
	LatencyText   string          `toml:"latency"`
	Quota         *upstream.Quota `toml:"quota,omitempty"`
	RetryAfter    string          `toml:"retry_after"`
	RejectLatency Duration        `toml:"reject_latency"`
	Workers       int             `toml:"workers,omitempty"`
}

// Duration is a time.Duration that encodes as "200ms" in TOML.
type Duration time.Duration

// MarshalText renders the duration as Go does ("1m30s").
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Jitter is a random duration: a fixed value, uniform(a,b), or
// exponential(mean). Its Text is kept for display.
type Jitter struct {
	Kind string // constant | uniform | exponential
	A, B time.Duration
	Text string
}

// MarshalText renders the jitter as written.
func (j Jitter) MarshalText() ([]byte, error) { return []byte(j.Text), nil }

// IsZero reports whether the jitter is always zero.
func (j Jitter) IsZero() bool { return j.Kind == "" || (j.Kind == "constant" && j.A == 0) }
