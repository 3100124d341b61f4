package models

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
)

// Key is one parameter key of a limiter kind: its name in a scenario, the
// Params field it sets, its default, its range and its line in the
// scenario reference. A scenario reads, checks, writes and documents a
// kind's keys from these alone.
type Key struct {
	Name string
	// Type says what the value is, for the reference: "number",
	// "integer", "duration", "random duration".
	Type string
	// Doc is the key's line in the scenario reference.
	Doc string
	// Required: the kind's table must write the key.
	Required bool
	// OnlyWritten: the field is set only when the key is written, so that
	// the resolved scenario leaves it out and a variant that switches the
	// kind does not inherit it.
	OnlyWritten bool
	// Default is the value of a key left out: a float64, an int64, a
	// time.Duration or a jitter's text, as the field holds.
	Default any
	// DefaultOf, when set, works the default out from the keys read before
	// it (a burst from the rate).
	DefaultOf func(p *Params, k Kind) any
	// DefaultDoc, when set, is the default as the reference says it.
	DefaultDoc string
	// Min is the least value, of the field's type (a jitter's text has
	// none); Open excludes it.
	Min  any
	Open bool
	// Max, when set, is the greatest value a number may have (a share's
	// 1); Check holds the key to it.
	Max float64
	// UpTo: a jitter written as a plain duration d means uniform(0, d).
	UpTo bool
	// Valid checks a number written: a non-empty answer is the problem,
	// and the default is kept.
	Valid func(v float64, k Kind) string
	// Check checks the field, once read, against the keys read before it:
	// a non-empty answer is a problem at the key named (the value is kept).
	Check func(p *Params, k Kind) (key, msg string)
	// Field returns a pointer to the field the key sets: *float64,
	// **float64, *int64, *time.Duration or *Jitter.
	Field func(p *Params) any
}

// DefaultProbe is a vegas limiter's probe multiplier, Netflix
// concurrency-limits' default probeMultiplier.
const DefaultProbe = 30.0

// DefaultLag is the lateness of each sleep of a polling_bucket or
// locked_bucket when the scenario does not say: up to a millisecond,
// uniformly. asyncio's event loop waits in epoll with its timeout rounded
// up to whole milliseconds, so a sleep resumes up to 1 ms after it is due,
// and every timer, I/O callback and task step due in that window runs in
// the same loop iteration. A worker returning from a response in that
// window reaches acquire() before the sleeper woken for the token and takes
// it; sleepers woken together run in the order of their (float-rounded)
// deadlines, which is effectively random. Most acquisitions therefore wait
// briefly and a few starve: the seed's crawler measured in real asyncio
// (fidelity/) has the wait distribution this default reproduces, where a
// lag of 0 gives a FIFO bucket's.
const DefaultLag = "1ms"

// MinRate is the least rate a limiter or quota may have, per second: one
// in about 32 years. A slower one's waits pass the last instant a run can
// reach.
const MinRate = 1e-9

// MaxPermits is the most permits a concurrency limit may hold.
const MaxPermits = 1 << 40

// RateTooSlow says why a rate written as v is refused ("" if it is not).
func RateTooSlow(v float64) string {
	if v > 0 && v < MinRate {
		return fmt.Sprintf("(%v per second) must be at least %v (one in about 32 years)", v, MinRate)
	}
	return ""
}

// wholePermits refuses an adaptive concurrency limit that is not a whole
// number of permits: the limiter holds permits, not shares of one.
func wholePermits(v float64, k Kind) string {
	if v != math.Trunc(v) || v > MaxPermits {
		return fmt.Sprintf("must be a whole number of permits from 1 to %d for %s, got %v", int64(MaxPermits), k.Name, v)
	}
	return ""
}

func rateValid(v float64, _ Kind) string { return RateTooSlow(v) }

// The keys the kinds share; a kind's own keys are declared with it.
var (
	rateKey = Key{Name: "rate", Type: "number", Required: true, Default: 0.0, Min: 0.0, Open: true, Valid: rateValid,
		Doc:   "tokens per second, at least 10⁻⁹ (one in about 32 years; so is a quota's)",
		Field: func(p *Params) any { return &p.Rate }}
	burstKey = Key{Name: "burst", Type: "number", Min: 1.0, DefaultOf: defaultBurst, Check: checkBurst,
		DefaultDoc: "max(1, rate); `aimd`: max(1, initial); `gcra`, `xrate`: the rate rounded up",
		Doc:        "bucket capacity: a whole number for `gcra` and `xrate`, whose tolerance, (burst − 1) ÷ rate, must fit a duration (about 292 years)",
		Field:      func(p *Params) any { return &p.Burst }}
	initialFillKey = Key{Name: "initial_fill", Type: "number", Default: 1.0, Min: 0.0, Max: maxInitialFill, Check: checkFill,
		Doc:   "share of the burst present at t = 0, at most 1",
		Field: func(p *Params) any { return &p.InitialFill }}
	lagKey = Key{Name: "lag", Type: "random duration", Default: DefaultLag, UpTo: true, DefaultDoc: "`\"1ms\"` (uniform 0–1 ms)",
		Doc:   "lateness of each sleep (event-loop timer lag; a plain duration d is uniform 0–d); see \"Why the article's bucket is not FIFO\" below. `\"0s\"` makes the bucket FIFO",
		Field: func(p *Params) any { return &p.Lag }}
	limitKey = Key{Name: "limit", Type: "integer", Required: true, Default: int64(1), Min: int64(1), Check: checkExactLog,
		Doc:   "starts allowed per `window`",
		Field: func(p *Params) any { return &p.Limit }}
	windowKey = Key{Name: "window", Type: "duration", Required: true, Default: time.Second, Min: time.Duration(0), Open: true,
		Doc:   "the window `limit` counts over",
		Field: func(p *Params) any { return &p.Window }}
	permitsKey = Key{Name: "permits", Type: "integer", Required: true, Default: int64(1), Min: int64(1),
		Doc:   "permits held until the response",
		Field: func(p *Params) any { return &p.Permits }}
	increaseKey = Key{Name: "increase", Type: "number", Default: 1.0, Min: 0.0,
		Doc:   "added per `interval` without a 429: requests per second (`aimd`) or permits (`aimd_concurrency`)",
		Field: func(p *Params) any { return &p.Increase }}
	intervalKey = Key{Name: "interval", Type: "duration", Default: time.Second, Min: time.Duration(0), Open: true,
		Doc:   "the period of additive increase, and the least time between two decreases (the 429s of requests already in flight count once)",
		Field: func(p *Params) any { return &p.Interval }}
	decreaseKey = Key{Name: "decrease", Type: "number", Default: 0.5, Min: 0.0, Open: true, Check: checkDecrease,
		Doc:   "the factor the rate (or the permits) is multiplied by on a 429: below 1",
		Field: func(p *Params) any { return &p.Decrease }}
)

// adaptive returns the initial, min and max keys of an adaptive limit: a
// rate above 0, or (permits) a whole number of permits from 1.
func adaptive(permits bool) (initial, lo, hi Key) {
	min, open, valid, what := 0.0, true, func(float64, Kind) string { return "" }, "a rate, requests per second"
	if permits {
		min, open, valid, what = 1.0, false, wholePermits, "permits, a whole number (10 or 10.0)"
	}
	initial = Key{Name: "initial", Type: "number", Required: true, Default: 0.0, Min: min, Open: open, Valid: valid,
		Doc:   "the limit at the start: " + what,
		Field: func(p *Params) any { return &p.Initial }}
	lo = Key{Name: "min", Type: "number", Default: 1.0, Min: min, Open: open, Valid: valid, Check: checkMin,
		Doc:   "the least a run of 429s may bring the limit to: " + what,
		Field: func(p *Params) any { return &p.Min }}
	hi = Key{Name: "max", Type: "number", Required: true, Default: 0.0, Min: min, Open: open, Valid: valid, Check: checkMax,
		Doc:   "the most the limit may reach: " + what,
		Field: func(p *Params) any { return &p.Max }}
	return initial, lo, hi
}

func defaultBurst(p *Params, k Kind) any {
	if k.WholeBurst {
		return math.Max(1, math.Ceil(p.Rate)) // a whole burst
	}
	if p.Initial > 0 { // an adaptive rate: one second of its start
		return math.Max(1, p.Initial)
	}
	return math.Max(1, p.Rate)
}

func checkBurst(p *Params, k Kind) (string, string) {
	switch {
	case k.WholeBurst && p.Burst != math.Trunc(p.Burst):
		return "burst", fmt.Sprintf("must be a whole number for %s, got %v", k.Name, p.Burst)
	case k.WholeBurst && p.Rate > 0 && (p.Burst-1)/p.Rate*1e9 >= math.MaxInt64:
		// The tolerance, (burst − 1) emission intervals, is a duration.
		return "burst", fmt.Sprintf("(%v) at rate %v/s is a tolerance of %.3g s, longer than a duration holds (about 292 years)", p.Burst, p.Rate, (p.Burst-1)/p.Rate)
	}
	return "", ""
}

// maxInitialFill is the most of its burst a bucket can start with.
const maxInitialFill = 1.0

func checkFill(p *Params, _ Kind) (string, string) {
	if f := p.Fill(); f > maxInitialFill {
		return "initial_fill", fmt.Sprintf("must be between 0 and %v, got %v", maxInitialFill, f)
	}
	return "", ""
}

// KeyMax is the greatest value a limiter key called name may have, for
// the kinds that read it, and whether it has one.
func KeyMax(name string) (float64, bool) {
	for _, k := range kinds {
		for _, key := range k.Keys {
			if key.Name == name && key.Max != 0 {
				return key.Max, true
			}
		}
	}
	return 0, false
}

func checkExactLog(p *Params, k Kind) (string, string) {
	if k.ExactLog && p.Limit > MaxExactLog {
		return "limit", fmt.Sprintf("%d is too large for an exact log; use %s", p.Limit, kindname.SlidingWindowCounter)
	}
	return "", ""
}

func checkDecrease(p *Params, _ Kind) (string, string) {
	if p.Decrease >= 1 {
		return "decrease", fmt.Sprintf("must be below 1 (the rate is multiplied by it on a 429), got %v", p.Decrease)
	}
	return "", ""
}

func checkMin(p *Params, _ Kind) (string, string) {
	if p.Initial > 0 && p.Min > p.Initial {
		return "min", fmt.Sprintf("(%v) must not exceed initial (%v)", p.Min, p.Initial)
	}
	return "", ""
}

func checkMax(p *Params, _ Kind) (string, string) {
	if p.Initial > p.Max && p.Max > 0 {
		return "initial", fmt.Sprintf("(%v) must not exceed max (%v)", p.Initial, p.Max)
	}
	return "", ""
}

// Has reports whether the kind reads the key called name.
func (k Kind) Has(name string) bool {
	for _, key := range k.Keys {
		if key.Name == name {
			return true
		}
	}
	return false
}

// KeyNames returns the names of the kind's keys, in docs order.
func (k Kind) KeyNames() []string {
	out := make([]string, len(k.Keys))
	for i, key := range k.Keys {
		out[i] = key.Name
	}
	return out
}

// DefaultText renders the key's default as the reference shows it.
func (key Key) DefaultText() string {
	switch {
	case key.Required:
		return "required"
	case key.DefaultDoc != "":
		return key.DefaultDoc
	}
	switch v := key.Default.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration, string:
		return fmt.Sprintf("`\"%v\"`", v)
	}
	return fmt.Sprint(key.Default)
}

// TypeText renders the key's type and least value as the reference shows
// them ("number > 0", "integer ≥ 1").
func (key Key) TypeText() string {
	if key.Min == nil {
		return key.Type
	}
	rel := "≥"
	if key.Open {
		rel = ">"
	}
	return fmt.Sprintf("%s %s %v", key.Type, rel, key.Min)
}
