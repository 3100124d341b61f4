package scenarios

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
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
	// Quotas are the quotas several upstreams count together.
	Quotas   SharedQuotas `toml:"quota,omitempty"`
	Variants []Variant    `toml:"variant,omitempty"`
	Sweeps   []Sweep      `toml:"sweep,omitempty"`

	// File is the path the scenario was read from ("" for a bundled one).
	File string `toml:"-"`
	// Warnings are legal but questionable choices, found while loading:
	// limiters acquired against the article's order, lock-order cycles between
	// paths. The run simulates what the file says and reports them.
	Warnings []metrics.Warning `toml:"-"`
	// Ranges are the numbers the scenario leaves uncertain, in the order
	// read: each key reads as its range's mid, and a plan with
	// --uncertain draws them.
	Ranges []Range `toml:"-"`

	// src and sets are the text the scenario was read from and the
	// overrides applied to it: a variant is those with its own overrides
	// after them (see Resolved).
	src  []byte
	sets []Override
	// ld is the Loader the scenario was loaded through, when the caller
	// gave one: its data files and variants are read as ld first read them
	// (see OpenDataFile, Resolved). nil: as they are now.
	ld *Loader
	// data lists the data files the scenario and its variants read, as
	// written (see DataFiles).
	data []string
}

// RunSettings holds the run's length and statistics settings.
type RunSettings struct {
	Seed         uint64   `toml:"seed"`
	Requests     int64    `toml:"requests,omitzero"` // 0: limited by duration
	Duration     Duration `toml:"duration,omitzero"` // 0: limited by requests
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
	DefaultMaxEvents       = 2_000_000_000
	DefaultMaxLiveRequests = 1_000_000
	// MaxLiveRequestsLimit is the largest run.max_live_requests accepted:
	// a few scheduled events per live request stay well inside the event
	// queue's 2^28.
	MaxLiveRequestsLimit       = 50_000_000
	DefaultMaxEventsPerInstant = 1_000_000
)

// Weighted is a named share of the workload. A tenant may instead bring its
// own arrival process (Arrival, Rate, On, Off): the workload is then the
// superposition of every tenant's arrivals.
type Weighted struct {
	Name    string   `toml:"name"`
	Weight  float64  `toml:"weight"`
	Arrival string   `toml:"arrival,omitempty"`
	Rate    float64  `toml:"rate,omitzero"`
	On      Duration `toml:"on,omitzero"`
	Off     Duration `toml:"off,omitzero"`
}

// Workload is the arrival process and how arrivals spread over hosts and
// tenants.
type Workload struct {
	Arrival   string     `toml:"arrival,omitempty"` // "" when tenants bring their own
	Rate      float64    `toml:"rate,omitzero"`
	RateTo    float64    `toml:"rate_to,omitzero"` // ramp: final rate
	Ramp      Duration   `toml:"ramp,omitzero"`    // ramp: time to reach rate_to
	On        Duration   `toml:"on,omitzero"`      // onoff: burst length
	Off       Duration   `toml:"off,omitzero"`     // onoff: quiet length
	Trace     string     `toml:"trace,omitempty"`  // trace: CSV of arrival offsets
	Cost      Cost       `toml:"cost"`             // tokens (or window units) per request: a number or a distribution
	Hosts     []Weighted `toml:"hosts"`
	HostOrder string     `toml:"host_order"`
	Tenants   []Weighted `toml:"tenants"`

	// TraceTimes holds the trace's arrival offsets, sorted, once loaded
	// from a file out of order; TraceStream reads them from a file in
	// ascending order as each run goes. One of the two is set.
	TraceTimes  []time.Duration      `toml:"-"`
	TraceStream arrivals.TraceSource `toml:"-"`
}

// Client is one client process (repeated Instances times).
type Client struct {
	Instances int `toml:"instances"`
	// InstanceWeights splits the workload unevenly between instances (one
	// weight per instance); nil: evenly.
	InstanceWeights []float64 `toml:"instance_weights,omitempty"`
	Ingest          string    `toml:"ingest"`
	QueueCapacity   *int      `toml:"queue_capacity,omitempty"` // queue ingest only
	QueueFull       string    `toml:"queue_full,omitempty"`
	Workers         int       `toml:"workers,omitzero"`
	MaxWaiting      *int      `toml:"max_waiting,omitempty"` // nil: unbounded
	AcquireTimeout  Duration  `toml:"acquire_timeout"`
	RequestTimeout  Duration  `toml:"request_timeout"`
	Limiters        []Limiter `toml:"limiter,omitempty"`
	Paths           []Path    `toml:"path,omitempty"`
	On429           On429     `toml:"on_429"`
	Retry           Retry     `toml:"retry"`
	Headers         *Headers  `toml:"headers,omitempty"`  // nil: headers ignored
	Reserve         *Reserve  `toml:"reserve,omitempty"`  // nil: nothing reserved for responses
	OnLimit         *OnLimit  `toml:"on_limit,omitempty"` // nil: a 429 alone is a 429
}

// OnLimit says which refusal statuses the client treats as a 429: paused
// on as [client.on_429] says, retried, counted as throttled. A refusal
// with another status is a failure.
type OnLimit struct {
	Statuses []int `toml:"statuses"`
}

// Reserve is what each request reserves on the limiters that count cost
// for its response's cost, reconciled with the real cost when the response
// arrives.
type Reserve struct {
	Estimate string `toml:"estimate"` // fixed | p50 | p90
	Fixed    int64  `toml:"fixed"`    // the fixed estimate, and p50's or p90's before any response
}

// Limiter is one named client-side limiter.
type Limiter struct {
	Name    string   `toml:"name"`
	Kind    string   `toml:"kind"`
	Scope   string   `toml:"scope"`
	Unit    string   `toml:"unit,omitempty"`    // "requests": one per request; "" counts cost
	Hosts   []string `toml:"hosts,omitempty"`   // host scope: only these hosts
	Tenants []string `toml:"tenants,omitempty"` // tenant scope: only these tenants
	// Params are the kind's keys (models.Kind.Keys), and max_waiting:
	// read, checked and written as the kinds table declares them.
	models.Params
	// scope = "cluster": the shared store
	StoreRTT     Jitter   `toml:"store_rtt,omitempty"`
	StoreErrors  float64  `toml:"store_errors,omitzero"`
	OnStoreError string   `toml:"on_store_error,omitempty"`
	SyncInterval Duration `toml:"sync_interval,omitzero"`
}

// OwnArrivals reports whether tenants bring their own arrival processes.
func (w *Workload) OwnArrivals() bool { return len(w.Tenants) > 0 && w.Tenants[0].Rate > 0 }

// Releases reports whether the limiter's units come back (concurrency).
func (l *Limiter) Releases() bool {
	k, err := models.LookupKind(l.Kind)
	return err == nil && k.Releases()
}

// Path is a request class that takes its own limiters in its own order.
type Path struct {
	Name     string   `toml:"name"`
	Weight   float64  `toml:"weight"`
	Limiters []string `toml:"limiters"`
	// Cost replaces workload.cost for the path's requests; nil: the
	// workload's.
	Cost *Cost `toml:"cost,omitempty"`
	// Method is the path's HTTP method, reported with it ("": none).
	Method string `toml:"method,omitempty"`
}

// Headers is how the client reads rate-limit headers.
type Headers struct {
	PauseAtZero bool  `toml:"pause_at_zero,omitzero"`
	SlowBelow   int64 `toml:"slow_below,omitzero"`
}

// On429 is the client's reaction to a 429.
type On429 struct {
	Pause           string `toml:"pause"`       // host | caller | none
	PauseCheck      string `toml:"pause_check"` // entry | send
	PauseEnd        string `toml:"pause_end"`   // longest | latest
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
	// Budget caps retries at this share of the requests of the last
	// BudgetWindow (0: no budget).
	Budget       float64  `toml:"budget,omitzero"`
	BudgetWindow Duration `toml:"budget_window,omitzero"`
	// Tokens and TokenRatio are gRPC's retry throttling (0: none).
	Tokens     float64 `toml:"tokens,omitzero"`
	TokenRatio float64 `toml:"token_ratio,omitzero"`
	// SDK is a retry policy as an SDK ships it: aws-standard |
	// aws-adaptive | grpc ("": none). It sets the defaults of the keys
	// above and adds the SDK's retry quota, throttling or send-rate limiter.
	SDK string `toml:"sdk,omitempty"`
	// Multiplier is an exponential back-off's growth from one retry to the
	// next (gRPC's backoffMultiplier; 0: doubling).
	Multiplier float64 `toml:"multiplier,omitzero"`
}

// Upstream is one modeled host ("*" for every host without its own block).
type Upstream struct {
	Host    string  `toml:"host"`
	Latency Latency `toml:"latency"`
	// LatencySchedule switches the latency during the run.
	LatencySchedule []LatencyStep `toml:"latency_schedule,omitempty"`
	Quota           Quotas        `toml:"quota,omitempty"`
	ResponseCost    *Cost         `toml:"response_cost,omitempty"`   // the cost a response reveals
	RefusedCounts   string        `toml:"refused_counts,omitempty"`  // others | all; "": none
	ResponseReserve int64         `toml:"response_reserve,omitzero"` // taken for the response at the start by cost quotas
	RetryAfter      string        `toml:"retry_after"`
	RejectLatency   Duration      `toml:"reject_latency"`
	Workers         int           `toml:"workers,omitzero"`
}

// LatencyStep switches an upstream's latency from At on.
type LatencyStep struct {
	At      Duration `toml:"at"`
	Latency Latency  `toml:"latency"`
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

// Resolved renders the scenario as run: every default filled in, in TOML
// that loads back to the same scenario. A variant whose own overrides
// would give another scenario over that text is written as the overrides
// that give the variant as run (see resolvedVariants).
func (sc *Scenario) Resolved() (string, error) {
	text, err := sc.encoded()
	if err != nil || len(sc.Variants) == 0 || sc.src == nil {
		return text, err
	}
	c := *sc
	c.Variants = sc.resolvedVariants(text)
	return c.encoded()
}

// DataFiles returns the data files the scenario reads (a trace, latency
// samples) and those its variants read, each once: paths as written,
// relative to the folder of its file. A copy of the scenario's resolved
// text elsewhere reads the same only beside copies of them.
func (sc *Scenario) DataFiles() []string { return slices.Clone(sc.data) }

// OpenDataFile opens the data file p (one of DataFiles) for reading: as the
// Loader the scenario was loaded through first read it, so that what a
// plan writes beside recommended.toml is what its points ran, or else the
// file as it is now.
func (sc *Scenario) OpenDataFile(p string) (io.ReadCloser, error) {
	path := filepath.Join(filepath.Dir(sc.File), p)
	if sc.ld == nil {
		return os.Open(path)
	}
	if tf := sc.ld.loadedTrace(path); tf != nil && sc.ld.loadedText(path) == nil {
		return tf.openChecked() // a trace is checked as it is read, not kept
	}
	data, err := sc.ld.read(path, maxDataBytes)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// addData notes data files read, each once.
func (sc *Scenario) addData(paths ...string) {
	for _, p := range paths {
		if !slices.Contains(sc.data, p) {
			sc.data = append(sc.data, p)
		}
	}
}

// resolvedHeader opens the text Resolved writes.
const resolvedHeader = "# The scenario as run, with every default filled in.\n"

// IsResolved reports whether sc was read from text Resolved wrote (a run's
// scenario.toml, a plan's recommended.toml), by its opening line.
func IsResolved(sc *Scenario) bool { return strings.HasPrefix(string(sc.src), resolvedHeader) }

// encoded is the scenario in TOML, with the header comment.
func (sc *Scenario) encoded() (string, error) {
	var b strings.Builder
	b.WriteString(resolvedHeader)
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(sc); err != nil {
		return "", err
	}
	return b.String(), nil
}
