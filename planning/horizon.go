package planning

import (
	"fmt"
	"math"
	"path"
	"time"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// Turnovers is how many times the slowest state of a run (a bucket's
// burst being spent, a window, an on/off cycle) must turn over in its
// steady window for the run's figures to be its long-run ones: with ten,
// what the start leaves (a full bucket, a fresh window) weighs a tenth at
// most.
const Turnovers = 10

// maxLengthen bounds how far a plan lengthens a point's run: a point that
// needs more is refused with the horizon it needs.
const (
	maxLengthen   = 50
	maxLengthenTo = 7 * 24 * time.Hour
)

// Horizon says whether a run was long enough for its long-run state to
// show, and what it needed.
type Horizon struct {
	// NeededS is the steady window the run needs: Turnovers times its
	// slowest turnover; WindowS the steady window it had.
	NeededS float64 `json:"needed_s"`
	WindowS float64 `json:"window_s"`
	// Why names the slowest turnover.
	Why string `json:"why"`
	// Lengthened: the plan ran the point again on a run this long
	// (run.duration, in seconds); Refused: it would need more than the
	// plan lengthens a run, so the point is not feasible.
	Lengthened float64 `json:"lengthened_to_s,omitempty"`
	// WarmupS is the warm-up of the longer run: at least one turnover,
	// so that what the start leaves (a bucket's burst) is spent before
	// the steady window opens.
	WarmupS float64 `json:"warmup_s,omitempty"`
	Refused bool    `json:"refused,omitempty"`
}

// Short reports whether the run's steady window is shorter than it needs.
func (h Horizon) Short() bool { return h.NeededS > h.WindowS*(1+1e-9) }

// HorizonOf is the steady window sc's run needs, read from what its run r
// showed: for every token bucket (an upstream's quota or the client's)
// offered more than its rate, the time its burst takes to spend (burst ÷
// the excess); for every window, the window; for an on/off workload, its
// cycle. The slowest, times Turnovers, is the need.
func HorizonOf(sc *scenarios.Scenario, r *metrics.Results) Horizon {
	h := Horizon{WindowS: r.Throughput.WindowS}
	slowest := func(s float64, why string) {
		if need := Turnovers * s; need > h.NeededS {
			h.NeededS, h.Why = need, why
		}
	}
	for _, u := range sc.Upstreams {
		offered := hostAttempts(r, u.Host)
		for _, q := range u.Quota {
			quotaTurnover(q, offered, "upstream "+u.Host, slowest)
		}
	}
	perInstance := r.Throughput.OfferedRPS / float64(max(1, r.Instances))
	for _, l := range sc.Client.Limiters {
		switch {
		case l.Window > 0:
			slowest(time.Duration(l.Window).Seconds(), fmt.Sprintf("limiter %s's %s window", l.Name, time.Duration(l.Window)))
		case l.Rate > 0 && l.Burst > 0 && l.Scope == "global" && perInstance > l.Rate:
			s := l.Burst / (perInstance - l.Rate)
			slowest(s, fmt.Sprintf("limiter %s's burst of %s spent in %s at %s/s over its rate", l.Name, report.Human(l.Burst), secsText(s), report.Human(perInstance-l.Rate)))
		}
	}
	if w := sc.Workload; w.Arrival == "onoff" {
		cycle := time.Duration(w.On + w.Off)
		slowest(cycle.Seconds(), fmt.Sprintf("the on/off workload's %s cycle", cycle))
	}
	return h
}

// quotaTurnover reports a server quota's turnover to slowest: a window,
// or the time an overdrawn bucket takes to spend its burst.
func quotaTurnover(q scenarios.Quota, offered float64, where string, slowest func(float64, string)) {
	if q.Unit == "cost" {
		return // its demand is in cost, which attempts do not measure
	}
	switch {
	case q.Window > 0:
		slowest(q.Window.Seconds(), fmt.Sprintf("%s's %s %s window", where, q.Window, q.Kind))
	case q.Rate > 0 && q.Burst > 0:
		rate := q.Rate
		for _, st := range q.Schedule {
			rate = math.Min(rate, st.Rate)
		}
		if offered > rate {
			s := q.Burst / (offered - rate)
			slowest(s, fmt.Sprintf("%s's quota burst of %s spent in %s at %s/s over its rate", where, report.Human(q.Burst), secsText(s), report.Human(offered-rate)))
		}
	}
}

// hostAttempts is the attempts per second (whole run) at the hosts
// pattern names ("*" every host).
func hostAttempts(r *metrics.Results, pattern string) float64 {
	if r.ElapsedS <= 0 {
		return 0
	}
	var n int64
	for _, u := range r.Upstreams {
		if ok, _ := path.Match(pattern, u.Host); ok || pattern == "*" || pattern == u.Host {
			n += u.Attempts
		}
	}
	return float64(n) / r.ElapsedS
}

func secsText(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// lengthened are the overrides that run sc long enough for a steady window
// of h.NeededS after a warm-up of at least one turnover (noted in h), and
// the run's new length in seconds; ok is false when that is more than a
// plan lengthens a run.
func lengthened(sc *scenarios.Scenario, r *metrics.Results, h *Horizon) ([]scenarios.Override, float64, bool) {
	warmup := math.Max(time.Duration(sc.Run.Warmup).Seconds(), math.Ceil(h.NeededS/Turnovers))
	// Arrivals end before the last completion: keep the run's tail.
	to := math.Ceil(warmup + h.NeededS*1.05)
	if to > maxLengthen*math.Max(r.ElapsedS, 1) || to > maxLengthenTo.Seconds() {
		return nil, to, false
	}
	h.WarmupS = warmup
	ovs := []scenarios.Override{{Key: "run.warmup", Value: fmt.Sprintf("%gs", warmup)}}
	if sc.Run.Duration > 0 {
		ovs = append(ovs, scenarios.Override{Key: "run.duration", Value: fmt.Sprintf("%gs", to)})
	}
	if sc.Run.Requests > 0 {
		scale := to / math.Max(r.ElapsedS, 1e-9)
		ovs = append(ovs, scenarios.Override{Key: "run.requests", Value: int64(math.Ceil(float64(sc.Run.Requests) * scale))})
	}
	return ovs, to, sc.Run.Duration > 0 || sc.Run.Requests > 0
}
