package planning

import (
	"fmt"
	"math"
	"path"
	"time"

	"github.com/limitsim/limitsim/models"
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
	// What the clients' own buckets let through at the start is spread
	// over the window: an excess no larger than that is no overdraw.
	startBurst := 0.0
	for _, l := range sc.Client.Limiters {
		if l.Window == 0 && l.Rate > 0 && l.Burst > 0 {
			startBurst += l.Burst * float64(max(1, r.Instances))
		}
	}
	for _, u := range r.Upstreams {
		if b := quotaBlock(sc, u.Host); b != nil {
			for _, q := range b.Quota {
				quotaTurnover(q, hostLoad(r, u), startBurst/math.Max(h.WindowS, 1e-9), "upstream "+u.Host, slowest)
			}
		}
	}
	clientTurnovers(sc.Client.Limiters, r, slowest)
	cycles(sc.Workload, slowest)
	return h
}

// clientTurnovers reports the client's limiters' turnovers to slowest: a
// window, or the time a bucket offered more than its rate (in the busiest
// instance, or for every instance with scope "cluster") takes to spend
// its burst.
func clientTurnovers(ls []scenarios.Limiter, r *metrics.Results, slowest func(float64, string)) {
	for _, l := range ls {
		k, err := models.LookupKind(l.Kind)
		switch {
		case err != nil:
		case l.Window > 0 && k.Family == models.WindowFamily: // not an adaptive limiter's measuring window
			slowest(time.Duration(l.Window).Seconds(), fmt.Sprintf("limiter %s's %s window", l.Name, time.Duration(l.Window)))
		case l.Rate > 0 && l.Burst > 0 && l.Unit != "cost" && (l.Scope == "global" || l.Scope == "cluster"):
			demand := r.Throughput.OfferedRPS * busiestShare(r)
			if l.Scope == "cluster" {
				demand = r.Throughput.OfferedRPS // one limit for every instance
			}
			if excess := demand - l.Rate; excess > 0.02*l.Rate {
				s := l.Burst / excess
				slowest(s, fmt.Sprintf("limiter %s's burst of %s spent in %s at %s/s over its rate", l.Name, report.Human(l.Burst), secsText(s), report.Human(excess)))
			}
		}
	}
}

// busiestShare is the busiest client instance's share of the workload:
// its own limiters see that much of the offered load.
func busiestShare(r *metrics.Results) float64 {
	share := 1 / float64(max(1, r.Instances))
	for _, in := range r.PerInstance {
		share = math.Max(share, in.Weight)
	}
	return share
}

// cycles reports an on/off workload's cycle, and each tenant's own, to
// slowest.
func cycles(w scenarios.Workload, slowest func(float64, string)) {
	if w.Arrival == "onoff" {
		cycle := time.Duration(w.On + w.Off)
		slowest(cycle.Seconds(), fmt.Sprintf("the on/off workload's %s cycle", cycle))
	}
	for _, t := range w.Tenants {
		if t.Arrival == "onoff" {
			cycle := time.Duration(t.On + t.Off)
			slowest(cycle.Seconds(), fmt.Sprintf("tenant %s's %s on/off cycle", t.Name, cycle))
		}
	}
}

// quotaBlock is the [[upstream]] block whose quotas a host answers with:
// its own, else the first whose pattern matches it ("*" matching every
// host without a block of its own).
func quotaBlock(sc *scenarios.Scenario, host string) *scenarios.Upstream {
	for i := range sc.Upstreams {
		if sc.Upstreams[i].Host == host {
			return &sc.Upstreams[i]
		}
	}
	for i := range sc.Upstreams {
		if ok, _ := path.Match(sc.Upstreams[i].Host, host); ok || sc.Upstreams[i].Host == "*" {
			return &sc.Upstreams[i]
		}
	}
	return nil
}

// hostLoad is the attempts per second the steady state sent to host u:
// the steady started rate, in the host's share of the attempts.
func hostLoad(r *metrics.Results, u metrics.UpstreamStats) float64 {
	var all int64
	for _, v := range r.Upstreams {
		all += v.Attempts
	}
	if all == 0 {
		return 0
	}
	return r.Throughput.StartedRPS * float64(u.Attempts) / float64(all)
}

// quotaTurnover reports a server quota's turnover to slowest: a window,
// or the time an overdrawn bucket takes to spend its burst (an excess
// within tolerance, plus 2% of the rate for the noise, is no overdraw).
func quotaTurnover(q scenarios.Quota, offered, tolerance float64, where string, slowest func(float64, string)) {
	switch {
	case q.Window > 0:
		slowest(q.Window.Seconds(), fmt.Sprintf("%s's %s %s window", where, q.Window, q.Kind))
	case q.Unit == "cost":
		// its demand is in cost, which attempts do not measure
	case q.Rate > 0 && q.Burst > 0:
		rate := q.Rate
		for _, st := range q.Schedule {
			rate = math.Min(rate, st.Rate)
		}
		if excess := offered - rate; excess > tolerance+0.02*rate {
			s := q.Burst / excess
			slowest(s, fmt.Sprintf("%s's quota burst of %s spent in %s at %s/s over its rate", where, report.Human(q.Burst), secsText(s), report.Human(excess)))
		}
	}
}

func secsText(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// lengthened are the overrides that run sc long enough for a steady window
// of h.NeededS after a warm-up of at least one turnover (noted in h), and
// the run's new length in seconds; ok is false when that is more than a
// plan lengthens a run.
func lengthened(sc *scenarios.Scenario, r *metrics.Results, h *Horizon) ([]scenarios.Override, float64, bool) {
	// A warm-up of one turnover, but never past the first step of a
	// schedule or the end of a ramp: what the scenario changes on purpose
	// stays in the measurement.
	warmup := math.Min(math.Ceil(h.NeededS/Turnovers), firstChange(sc).Seconds())
	warmup = math.Max(time.Duration(sc.Run.Warmup).Seconds(), warmup)
	// Arrivals end before the last completion: keep the run's tail.
	to := math.Ceil(warmup + h.NeededS*1.05)
	if to > maxLengthen*math.Max(r.ElapsedS, 1) || to > maxLengthenTo.Seconds() {
		return nil, to, false
	}
	h.WarmupS = warmup
	overrides := []scenarios.Override{{Key: "run.warmup", Value: fmt.Sprintf("%gs", warmup)}}
	if sc.Run.Duration > 0 {
		overrides = append(overrides, scenarios.Override{Key: "run.duration", Value: fmt.Sprintf("%gs", to)})
	}
	if sc.Run.Requests > 0 {
		scale := to / math.Max(r.ElapsedS, 1e-9)
		overrides = append(overrides, scenarios.Override{Key: "run.requests", Value: int64(math.Ceil(float64(sc.Run.Requests) * scale))})
	}
	return overrides, to, sc.Run.Duration > 0 || sc.Run.Requests > 0
}

// firstChange is the first instant the scenario changes something on
// purpose: a quota's or a latency's schedule step, or a ramp's end
// (a week when there is none).
func firstChange(sc *scenarios.Scenario) time.Duration {
	first := maxLengthenTo
	for _, u := range sc.Upstreams {
		for _, q := range u.Quota {
			for _, st := range q.Schedule {
				first = min(first, st.At)
			}
		}
		for _, st := range u.LatencySchedule {
			first = min(first, time.Duration(st.At))
		}
	}
	if r := time.Duration(sc.Workload.Ramp); r > 0 {
		first = min(first, r)
	}
	return first
}
