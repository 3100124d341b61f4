package metrics

import (
	"math"
	"slices"
)

// steadyLimits calls f with the end and the limit of each steady-state row
// of a limit column (per object), multiplied by objects: all the limiter's
// objects together.
type steadyLimits func(f func(t, limit float64))

// adaptation reads limiter i's limit column over the steady state, a
// few passes over the series and never the whole column at once (see
// orderStats).
func (r *Recorder) adaptation(i int) *Adaptation {
	column := r.timeline.series.Index(r.layout.Limiters[i].Name + ".limit")
	if column < 0 {
		return nil
	}
	objects := r.limiters.objects(i)
	interval, warmup := r.layout.Interval.Seconds(), r.layout.Warmup.Seconds()
	steady := steadyLimits(func(f func(t, limit float64)) {
		r.timeline.series.Scan(0, []int{0, column}, func(_ int, values []float64) bool {
			if values[0]-interval >= warmup-1e-9 {
				f(values[0], values[1]*objects)
			}
			return true
		})
	})
	all := valueSpreadOf(func(yield func(float64)) { steady(func(_, limit float64) { yield(limit) }) })
	if all.n == 0 {
		return nil
	}
	out := &Adaptation{LimitMean: all.sum / float64(all.n), LimitMin: all.min, LimitMax: all.max, Oscillation: all.oscillation()}
	steps := r.quotaSteps()
	for k, at := range steps {
		end := math.Inf(1)
		if k+1 < len(steps) {
			end = steps[k+1]
		}
		out.Changes = append(out.Changes, settling(steady, at, end, r.quotaAt(at)))
	}
	return out
}

// settling is how the limit found quota, set at at and kept until end
// (seconds).
func settling(steady steadyLimits, at, end, quota float64) Settling {
	out := Settling{AtS: at, QuotaRPS: quota}
	settled := math.Inf(1) // the end of the first row within the band
	steady(func(t, limit float64) {
		if t > at && t <= end && t < settled && math.Abs(limit-quota) <= SettleBand*quota {
			settled = t
		}
	})
	if math.IsInf(settled, 1) {
		return out
	}
	took := settled - at
	out.SettleS = &took
	from := valueSpreadOf(func(yield func(float64)) {
		steady(func(t, limit float64) {
			if t >= settled && t <= end {
				yield(limit)
			}
		})
	})
	out.LimitMean = from.sum / float64(from.n)
	out.Oscillation = from.oscillation()
	return out
}

// quotaSteps returns the instants (seconds) at which some host's quota
// schedule changes its rate, in order, each once.
func (r *Recorder) quotaSteps() []float64 {
	var steps []float64
	for _, schedule := range r.layout.QuotaSchedules {
		for _, step := range schedule {
			if !slices.Contains(steps, step.AtS) {
				steps = append(steps, step.AtS)
			}
		}
	}
	slices.Sort(steps)
	return steps
}

// quotaAt is the hosts' quotas together at t seconds: each host's rate
// from its schedule (its initial rate before the first step).
func (r *Recorder) quotaAt(t float64) float64 {
	var sum float64
	for host, quota := range r.layout.Quotas {
		rate := quota.PerSecond
		if host < len(r.layout.QuotaSchedules) {
			for _, step := range r.layout.QuotaSchedules[host] {
				if step.AtS <= t {
					rate = step.RPS
				}
			}
		}
		sum += rate
	}
	return sum
}
