package metrics

import (
	"fmt"
	"math"
	"time"
)

// Trigger is a transient loss of the upstream's capacity the scenario
// schedules: a latency_schedule step that raises a host's mean latency
// above its base, or a quota schedule step that cuts its rate below its
// base, from Start until the step that restores it, at End.
type Trigger struct {
	Start, End time.Duration
	// Latency is a latency trigger's highest mean latency (0 for a quota
	// cut).
	Latency time.Duration
}

// The thresholds of a metastable failure (docs/metrics.md, "Metastable
// failures").
const (
	// StormGoodputFraction: goodput after the trigger below this share of
	// its level before it is collapsed.
	StormGoodputFraction = 0.5
	// StormOfferedBand: the offered rate after the trigger within this
	// relative band of its level before it is unchanged.
	StormOfferedBand = 0.2
	// StormRetryShare: a share of attempts beyond one per arrival at least
	// this (and at least twice its level before) is elevated.
	StormRetryShare = 0.2
	// stormMinIntervals: the least number of whole intervals a window
	// before or after the trigger needs to be judged.
	stormMinIntervals = 3
	// StormSettleIntervals and StormSettleTimes set the settling time:
	// the longer of this many intervals and this many times the longest a
	// request lasts (Layout.StormSettle).
	StormSettleIntervals = 5
	StormSettleTimes     = 3
)

// Storm is a run's reading for a metastable failure: whether goodput
// stayed collapsed after its last trigger ended, offered load unchanged,
// retries taking an elevated share of the attempts (a retry storm).
// Rates are per second over whole intervals of the two windows: before,
// from the warm-up to the first trigger; after, from the last trigger's
// end plus the settling time to the end of the arrivals.
type Storm struct {
	Detected      bool    `json:"detected"`
	TriggerStartS float64 `json:"trigger_start_s"`
	TriggerEndS   float64 `json:"trigger_end_s"`
	// TriggerLatencyS is the highest mean latency of the latency triggers;
	// absent with quota cuts alone.
	TriggerLatencyS float64 `json:"trigger_latency_s,omitempty"`
	// SettleS is the time after the trigger's end left out of the after
	// window: the system's own time to recover.
	SettleS float64 `json:"settle_s"`
	// BeforeS and AfterS are the windows' lengths; a window shorter than
	// three intervals is not judged (Detected false).
	BeforeS          float64 `json:"before_s"`
	AfterS           float64 `json:"after_s"`
	GoodputBefore    float64 `json:"goodput_before_rps"`
	GoodputAfter     float64 `json:"goodput_after_rps"`
	GoodputLate      float64 `json:"goodput_late_rps"`
	OfferedBefore    float64 `json:"offered_before_rps"`
	OfferedAfter     float64 `json:"offered_after_rps"`
	RetryShareBefore float64 `json:"retry_share_before"`
	RetryShareAfter  float64 `json:"retry_share_after"`
}

// window sums a run of whole intervals.
type window struct {
	intervals, lateIntervals int
	arrivals, starts, oks    float64
	lateOKs                  float64
	from, through, lateFrom  float64 // s
}

func (w *window) rate(x, span float64) float64 { return Ratio(x, float64(w.intervals)*span) }

// retryShare is the share of attempts beyond one per arrival.
func (w *window) retryShare() float64 {
	return math.Max(0, 1-Ratio(w.arrivals, w.starts))
}

// storm reads the run's series for a metastable failure after the
// layout's triggers, up to the end of the arrivals; nil without a
// trigger that ends.
func (r *Recorder) storm(arrivalsEnd time.Duration) *Storm {
	l := &r.layout
	return StormOf(r.timeline.series, StormWindows{Triggers: l.Triggers, Warmup: l.Warmup, Interval: l.Interval,
		Settle: l.StormSettle, ArrivalsEnd: arrivalsEnd})
}

// StormWindows is what StormOf reads a series with: the triggers, the
// warm-up, the series' interval, the settling time (at least
// StormSettleIntervals intervals are used) and the end of the arrivals.
type StormWindows struct {
	Triggers                              []Trigger
	Warmup, Interval, Settle, ArrivalsEnd time.Duration
}

// StormOf reads series s (its t_s, arrivals, starts and succeeded
// columns) for a metastable failure; nil without a trigger that ends.
func StormOf(s *Series, w StormWindows) *Storm {
	start, end, ok := triggerSpan(w.Triggers)
	if !ok || w.Interval <= 0 {
		return nil
	}
	settle := max(StormSettleIntervals*w.Interval, w.Settle)
	out := &Storm{TriggerStartS: start.Seconds(), TriggerEndS: end.Seconds(), SettleS: settle.Seconds()}
	for _, t := range w.Triggers {
		out.TriggerLatencyS = max(out.TriggerLatencyS, t.Latency.Seconds())
	}
	before := window{from: w.Warmup.Seconds(), through: start.Seconds()}
	after := window{from: (end + settle).Seconds(), through: w.ArrivalsEnd.Seconds()}
	after.lateFrom = after.from + (after.through-after.from)/2
	span := w.Interval.Seconds()
	s.ScanNamed(0, []string{"t_s", "arrivals", "starts", "succeeded"}, func(_ int, v []float64) bool {
		for _, w := range []*window{&before, &after} {
			w.add(v, span)
		}
		return true
	})
	out.BeforeS, out.AfterS = float64(before.intervals)*span, float64(after.intervals)*span
	out.GoodputBefore, out.GoodputAfter = before.rate(before.oks, span), after.rate(after.oks, span)
	out.GoodputLate = Ratio(after.lateOKs, float64(after.lateIntervals)*span)
	out.OfferedBefore, out.OfferedAfter = before.rate(before.arrivals, span), after.rate(after.arrivals, span)
	out.RetryShareBefore, out.RetryShareAfter = before.retryShare(), after.retryShare()
	out.Detected = before.intervals >= stormMinIntervals && after.intervals >= stormMinIntervals && out.collapsed()
	return out
}

// add counts row v (t_s, arrivals, starts, succeeded) if its interval,
// span seconds long, lies wholly in the window.
func (w *window) add(v []float64, span float64) {
	t := v[0]
	if t-span < w.from-1e-9 || t > w.through+1e-9 {
		return
	}
	w.intervals++
	w.arrivals += v[1]
	w.starts += v[2]
	w.oks += v[3]
	if t-span >= w.lateFrom-1e-9 {
		w.lateIntervals++
		w.lateOKs += v[3]
	}
}

// collapsed applies the thresholds to the windows' figures.
func (s *Storm) collapsed() bool {
	limit := StormGoodputFraction * s.GoodputBefore
	return s.GoodputBefore > 0 && s.GoodputAfter < limit && s.GoodputLate < limit &&
		math.Abs(Ratio(s.OfferedAfter, s.OfferedBefore)-1) <= StormOfferedBand &&
		s.RetryShareAfter >= math.Max(StormRetryShare, 2*s.RetryShareBefore)
}

// triggerSpan returns the first trigger's start and the last one's end;
// false without a trigger, or with one that never ends (nothing after it
// to judge).
func triggerSpan(ts []Trigger) (start, end time.Duration, ok bool) {
	for i, t := range ts {
		if t.End <= t.Start {
			return 0, 0, false
		}
		if i == 0 || t.Start < start {
			start = t.Start
		}
		end = max(end, t.End)
	}
	return start, end, len(ts) > 0
}

// StormShareOf is storm_share of r: the share of its replications in a
// metastable failure, or of r alone (0 or 1) without replications. The
// error says why a run without a trigger that ends has none.
func StormShareOf(r *Results) (float64, error) {
	if rp := r.Replications; rp != nil && rp.StormShare != nil {
		return *rp.StormShare, nil
	}
	if r.Storm == nil {
		return 0, fmt.Errorf("storm_share: the run has no trigger that ends (a latency_schedule step that raises an upstream's latency, or a quota schedule step that cuts its rate, then one that restores it)")
	}
	if r.Storm.Detected {
		return 1, nil
	}
	return 0, nil
}
