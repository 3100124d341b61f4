package metrics

import (
	"math"
	"time"
)

// Ratio returns a ÷ b, or 0 when b is 0 (a share of nothing is reported as 0).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// little checks L = λW over the whole run, from instant 0 to its end: for a
// run that drains, every request that entered a stage also left it, so a
// difference beyond rounding means the measurements disagree. areaAll is
// the stage's ∫ n dt over the whole run, entries the entries that left it
// and sojourns the ns they spent in it.
func little(stage string, areaAll float64, entries int64, sojourns, window float64) Little {
	L := areaAll / window
	lambda := float64(entries) / window * 1e9
	W := Ratio(sojourns, float64(entries)) / 1e9
	return Little{Stage: stage, L: L, Lambda: lambda, W: W, RelError: Ratio(math.Abs(L-lambda*W), L)}
}

// Finish closes the run at end (its last completion) and returns its
// results. arrivalsEnd is when arrivals stopped: the offered rate is
// arrivals over the steady part of the arrival window, so an overload stays
// visible however long the backlog takes to drain.
func (r *Recorder) Finish(end, arrivalsEnd time.Duration, events uint64, stop Stop) (*Results, *Series) {
	warmup := r.layout.Warmup
	r.stages.fold(end)
	r.limiters.foldWaiting(end)
	window := float64(end - warmup)
	if window <= 0 {
		// No steady state: the run ended at or before the warm-up's end
		// (a warning says so). Every steady-state rate, mean and share is
		// 0, as over an unbounded window, even for what happened at the
		// warm-up's very end.
		window = math.Inf(1)
	}
	results := &Results{Scenario: r.layout.Scenario, Seed: r.layout.Seed, Complete: stop.IsZero(), Stop: stop,
		ElapsedS: end.Seconds(), WarmupS: warmup.Seconds(), IntervalS: r.layout.Interval.Seconds(), Events: events,
		RequestTimeoutS: r.layout.RequestTimeout.Seconds(), AcquireTimeoutS: r.layout.AcquireTimeout.Seconds(),
		AttemptTimeoutS: r.layout.AttemptTimeout.Seconds(),
		Instances:       max(1, r.layout.Instances)}
	r.requests.results(results, r.stages.inSystem(), end, arrivalsEnd, warmup, window)
	results.RequestS = r.times.dist()
	results.Limiters = make([]LimiterStats, 0, len(r.layout.Limiters))
	for i := range r.layout.Limiters {
		results.Limiters = append(results.Limiters, r.limiterStats(i, end, window))
	}
	r.stages.results(results, window)
	results.Upstreams = r.hosts.stats(end, window)
	r.tenants.results(results)
	whole := float64(max(end, 1))
	results.Little = append(r.stages.queueLittle(whole), r.limiters.little(whole)...)
	results.Little = append(results.Little, r.stages.little(whole)...)
	results.Storm = r.storm(min(end, arrivalsEnd))
	return results, r.timeline.series
}

// limiterStats closes limiter i's figures at end, with its adaptation;
// window is the steady state in ns.
func (r *Recorder) limiterStats(i int, end time.Duration, window float64) LimiterStats {
	out := r.limiters.stats(i, end, window)
	if r.layout.Limiters[i].Adaptive {
		out.Adaptation = r.adaptation(i)
	}
	return out
}
