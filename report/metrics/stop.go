package metrics

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// StopKind says why a run ended before its work was done.
type StopKind uint8

// Why a run stopped.
const (
	// Finished: the run did all its work (the zero Stop).
	Finished StopKind = iota
	// Stalled: work was parked on limiters with nothing left to wake it.
	Stalled
	// Deadlocked: a stall with a wait-for cycle between limiters.
	Deadlocked
	// GuardTripped: a guard stopped a runaway run.
	GuardTripped
	// Interrupted: the user stopped the run.
	Interrupted
)

// Stop is why a run stopped early. In metrics.json it is the one string
// stop_reason (its Text); Kind and Guard are read back from that text's
// fixed prefixes, which are written only here.
type Stop struct {
	Kind StopKind
	// Guard names the guard that tripped (GuardTripped), as the scenario's
	// run key names it (max_live_requests, max_events, …).
	Guard string
	// Text is the whole reason as printed.
	Text string
}

// Prefixes of stop_reason, one per kind.
const (
	stalledPrefix     = "stalled: "
	guardPrefix       = "guard: "
	interruptedReason = "interrupted"
	cycleMark         = "deadlock cycle: "
)

// StallStop is the stop of a stalled run; message is the stall's
// description, cycle whether it found a wait-for cycle (a deadlock).
func StallStop(message string, cycle bool) Stop {
	kind := Stalled
	if cycle {
		kind = Deadlocked
	}
	return Stop{Kind: kind, Text: stalledPrefix + message}
}

// GuardStop is the stop of a run a guard ended; message describes it and
// must name the guard as "guard NAME (".
func GuardStop(guard, message string) Stop {
	return Stop{Kind: GuardTripped, Guard: guard, Text: guardPrefix + message}
}

// InterruptStop is the stop of an interrupted run.
func InterruptStop() Stop { return Stop{Kind: Interrupted, Text: interruptedReason} }

// IsZero reports whether the run finished (no stop_reason is written).
func (s Stop) IsZero() bool { return s.Kind == Finished }

// String returns the stop's text, as stop_reason holds it.
func (s Stop) String() string { return s.Text }

// MarshalJSON writes the stop as its text.
func (s Stop) MarshalJSON() ([]byte, error) { return json.Marshal(s.Text) }

var guardName = regexp.MustCompile(`guard ([a-z_]+) \(`)

// UnmarshalJSON reads a stop_reason back, recovering its kind.
func (s *Stop) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return fmt.Errorf("stop_reason: %w", err)
	}
	*s = ParseStop(text)
	return nil
}

// ParseStop recovers a Stop from its text.
func ParseStop(text string) Stop {
	switch {
	case text == "":
		return Stop{}
	case strings.HasPrefix(text, stalledPrefix):
		return StallStop(strings.TrimPrefix(text, stalledPrefix), strings.Contains(text, cycleMark))
	case strings.HasPrefix(text, guardPrefix):
		message := strings.TrimPrefix(text, guardPrefix)
		guard := ""
		if match := guardName.FindStringSubmatch(message); match != nil {
			guard = match[1]
		}
		return GuardStop(guard, message)
	case text == interruptedReason:
		return InterruptStop()
	}
	return Stop{Kind: Stalled, Text: text}
}

// Cycle returns the limiters of a deadlock's wait-for cycle, in order,
// the first repeated at the end; nil when the stop is no deadlock.
func (s Stop) Cycle() []string {
	if s.Kind != Deadlocked {
		return nil
	}
	_, rest, ok := strings.Cut(s.Text, cycleMark)
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, ";")
	return strings.Split(strings.TrimSpace(rest), " → ")
}

// Detail is the stop's text without its kind prefix.
func (s Stop) Detail() string {
	for _, prefix := range []string{stalledPrefix, guardPrefix} {
		if strings.HasPrefix(s.Text, prefix) {
			return strings.TrimPrefix(s.Text, prefix)
		}
	}
	return s.Text
}

// WarningCode classifies a warning so that diagnoses can act on it.
type WarningCode uint8

// Warning codes.
const (
	// OtherWarning is any warning without a code of its own.
	OtherWarning WarningCode = iota
	// AcquireOrder: a concurrency limiter is taken before a rate limiter
	// on some path.
	AcquireOrder
	// LockOrder: paths take limiters in opposite orders (a lock-order
	// cycle that can deadlock).
	LockOrder
	// ReplicationStopped: a replication stopped early.
	ReplicationStopped
	// NoSteadyState: the run ended at or before the end of its warm-up,
	// or its last request arrived before it.
	NoSteadyState
	// ShortHorizon: the steady window is too short for the run's slowest
	// state to turn over enough times.
	ShortHorizon
)

// ShortHorizonWarning: the steady window of windowS seconds is shorter
// than the neededS its slowest state (why) needs.
func ShortHorizonWarning(windowS, neededS float64, why string) Warning {
	return Warning{ShortHorizon, fmt.Sprintf("horizon: the steady window of %s is shorter than the %s its long-run state needs (ten turnovers of %s): its figures may not be the long-run ones; lengthen run.duration (limitsim plan does)",
		time.Duration(windowS*1e9).Round(time.Millisecond), time.Duration(neededS*1e9).Round(time.Second), why)}
}

// Warning is a legal but questionable choice or event. In metrics.json it
// is its text; the code is read back from the text's fixed form, which is
// written only here.
type Warning struct {
	Code WarningCode
	Text string
}

// String returns the warning's text.
func (w Warning) String() string { return w.Text }

// AcquireOrderWarning: path takes the concurrency limiter named
// concurrency before the rate limiter named rate.
func AcquireOrderWarning(path, concurrency, rate string) Warning {
	return Warning{AcquireOrder, fmt.Sprintf("path %s takes concurrency limiter %s before rate limiter %s: permits are held while waiting for the clock (acquire rate limits first)", path, concurrency, rate)}
}

// LockOrderWarning: the limiters of cycle are taken in opposite orders;
// why lists each edge with the paths that make it.
func LockOrderWarning(cycle, why []string) Warning {
	return Warning{LockOrder, fmt.Sprintf("lock-order cycle %s: paths acquire these limiters in opposite orders and can deadlock [%s]", strings.Join(cycle, " → "), strings.Join(why, "; "))}
}

// ReplicationWarning: the replication numbered replication (from 1) of n
// stopped early.
func ReplicationWarning(replication, n int) Warning {
	return Warning{ReplicationStopped, fmt.Sprintf("replication %d of %d stopped early; the spread covers none", replication, n)}
}

// NoSteadyStateWarning: the run ended at end, at or before the end of
// its warm-up: nothing was measured in the steady state.
func NoSteadyStateWarning(warmup, end time.Duration) Warning {
	return Warning{NoSteadyState, fmt.Sprintf("the run ended at %v, at or before the end of its warm-up (%v): no steady state was measured, so every steady-state figure (rates, waits, levels, utilisation) is empty; shorten run.warmup or lengthen the run", end, warmup)}
}

// NoSteadyArrivalsWarning: the last request arrived at last, before the
// end of the warm-up: the steady state saw only the backlog drain.
func NoSteadyArrivalsWarning(warmup, last time.Duration) Warning {
	return Warning{NoSteadyState, fmt.Sprintf("the last request arrived at %v, before the end of the warm-up (%v): the steady state has no arrivals, so its offered rate and end-to-end times are empty and the rest measures a backlog draining; shorten run.warmup or lengthen the run", last, warmup)}
}

// noArrivalsText opens the warning of a run in which no request arrived.
const noArrivalsText = "no request arrived in the run"

// NoArrivalsWarning: no request arrived in the run's end of simulated
// time: every figure is empty. It counts as measuring no steady state.
func NoArrivalsWarning(end time.Duration) Warning {
	return Warning{NoSteadyState, fmt.Sprintf("%s's %v: every figure is empty; raise the workload's rate or lengthen the run", noArrivalsText, end)}
}

// NoArrivals reports whether w says no request arrived in the run (or in
// one of its replications).
func (w Warning) NoArrivals() bool {
	text := w.Text
	if _, rest, ok := strings.Cut(text, ": "); ok && strings.HasPrefix(text, "replication ") {
		text = rest
	}
	return w.Code == NoSteadyState && strings.HasPrefix(text, noArrivalsText)
}

// ReplicationNoSteadyStateWarning: the replication numbered replication
// (from 1) of n had no steady state; w is its own warning.
func ReplicationNoSteadyStateWarning(replication, n int, w Warning) Warning {
	return Warning{NoSteadyState, fmt.Sprintf("replication %d of %d: %s", replication, n, w.Text)}
}

// NoSteadyState returns r's warning that it measured no steady state (or
// no arrivals in it), if it has one.
func (r *Results) NoSteadyState() (Warning, bool) {
	for _, w := range r.Warnings {
		if w.Code == NoSteadyState {
			return w, true
		}
	}
	return Warning{}, false
}

// noSteadyForm is the fixed form of a NoSteadyState warning; its third
// group is the instant it names (the run's end or its last arrival).
var noSteadyForm = regexp.MustCompile(`^(replication \d+ of \d+: )?(the run ended|the last request arrived) at (\S+), (at or )?before the end of (its|the) warm-up \(\S+\): `)

// SteadyStateCut returns the instant a NoSteadyState warning names, no
// later than the warm-up's end: when the run ended, or when its last
// request arrived.
func (w Warning) SteadyStateCut() (time.Duration, bool) {
	m := noSteadyForm.FindStringSubmatch(w.Text)
	if w.Code != NoSteadyState || m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[3])
	return d, err == nil
}

var warningForms = []struct {
	code    WarningCode
	pattern *regexp.Regexp
}{
	{AcquireOrder, regexp.MustCompile(`^path \S+ takes concurrency limiter \S+ before rate limiter \S+: `)},
	{LockOrder, regexp.MustCompile(`^lock-order cycle `)},
	{ReplicationStopped, regexp.MustCompile(`^replication \d+ of \d+ stopped early`)},
	{NoSteadyState, noSteadyForm},
	{ShortHorizon, regexp.MustCompile(`^horizon: the steady window of `)},
}

// ParseWarning recovers a Warning from its text.
func ParseWarning(text string) Warning {
	for _, f := range warningForms {
		if f.pattern.MatchString(text) {
			return Warning{f.code, text}
		}
	}
	return Warning{OtherWarning, text}
}

// MarshalJSON writes the warning as its text.
func (w Warning) MarshalJSON() ([]byte, error) { return json.Marshal(w.Text) }

// UnmarshalJSON reads a warning back, recovering its code.
func (w *Warning) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return fmt.Errorf("warning: %w", err)
	}
	*w = ParseWarning(text)
	return nil
}
