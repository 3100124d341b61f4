package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
	"github.com/limitsim/limitsim/upstream"
)

// numText writes x exactly, as TOML reads it back.
func numText(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// spanText writes a span of simulated time for a reader: whole seconds,
// or days beyond two.
func spanText(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	}
	return durationText(d.Round(time.Second))
}

// The check's length: after a warm-up (the slowest bucket's turnover and
// five p99 latencies) it measures at least checkMinRequests requests and
// two turnovers of the slowest limiter, aiming for checkTargetRequests and
// four; it simulates at most checkMaxHorizon, and checkMaxArrivals
// arrivals over its two runs.
const (
	checkTargetRequests = 5000
	checkMinRequests    = 2000
	checkMaxArrivals    = 2_000_000
	checkMaxHorizon     = 366 * 24 * time.Hour
	// checkGoodput is the share of the sized rate goodput must reach.
	checkGoodput = 0.9
)

// checkPlan is how the check runs: what the instances are offered in all
// (the binding quota, in requests per second) for how long.
type checkPlan struct {
	offered                   float64
	warmup, horizon, interval time.Duration
}

// roundUp rounds d up to a multiple of step.
func roundUp(d, step time.Duration) time.Duration { return (d + step - 1) / step * step }

// offered is the binding quota in requests per second: the least of the
// quota, the window's limit per second and the cost quota ÷ the mean cost.
func (s *Sizing) offered() float64 {
	in := s.Inputs
	r := in.QuotaRPS
	if in.WindowLimit > 0 && in.WindowS > 0 {
		r = math.Min(r, float64(in.WindowLimit)/in.WindowS)
	}
	if in.CostQuota > 0 {
		r = math.Min(r, in.CostQuota/s.CostMean)
	}
	return r
}

// turnover is the slowest limiter's time to refill from empty, in
// seconds (a bucket's burst ÷ its rate, a window's length), and what it
// is; and the slowest bucket's, which the warm-up waits out: the buckets
// start full, while a window starts empty, as it is at each of its ends.
func (s *Sizing) turnover() (slowest float64, what string, bucket float64) {
	per := s.PerInstance
	bucket, what = per.Burst/per.Rate, "request bucket"
	if sh := s.Shared; sh != nil {
		bucket = sh.Burst / sh.Rate
	}
	if per.CostBurst > 0 && per.CostBurst/per.CostRate > bucket {
		bucket, what = per.CostBurst/per.CostRate, "cost bucket"
	}
	slowest = bucket
	if s.windowBinds() && s.Inputs.WindowS > slowest {
		slowest, what = s.Inputs.WindowS, "window"
	}
	return slowest, what, bucket
}

// windowBinds reports whether the window limiters can refuse what the
// request limiter admits: whether a window holds fewer than its burst and
// a window's worth of its rate.
func (s *Sizing) windowBinds() bool {
	tot := s.Total
	rate, burst := tot.Rate, tot.Burst
	if sh := s.Shared; sh != nil {
		rate, burst = sh.Rate, sh.Burst
	}
	return tot.WindowLimit > 0 && float64(tot.WindowLimit) < burst+rate*s.Inputs.WindowS
}

// plan works out the check's length, or says why the check cannot run.
func (s *Sizing) plan() (checkPlan, string) {
	turn, what, bucket := s.turnover()
	p := checkPlan{offered: s.offered()}
	warmup := bucket + 5*s.Inputs.LatencyP99
	least := math.Max(checkMinRequests/s.SizedRPS, 2*turn)
	if warmup+least > checkMaxHorizon.Seconds() {
		return p, fmt.Sprintf("not simulated: %d requests at %.4g/s and two turnovers of the %s (%s each) take %s of simulated time, beyond the check's limit of %s",
			checkMinRequests, s.SizedRPS, what, spanText(seconds(turn)), spanText(seconds(warmup+least)), spanText(checkMaxHorizon))
	}
	perSecond := p.offered*(1+checkOverload) + checkUnder*s.SizedRPS // the three runs' arrivals
	if (warmup+least)*perSecond > checkMaxArrivals {
		return p, fmt.Sprintf("not simulated: %s of simulated time (a warm-up, then two turnovers of the %s) at %.4g/s and twice it is %.3g arrivals, beyond the check's limit of %d",
			spanText(seconds(warmup+least)), what, p.offered, (warmup+least)*perSecond, checkMaxArrivals)
	}
	measure := math.Min(math.Max(checkTargetRequests/s.SizedRPS, 4*turn), math.Min(checkMaxHorizon.Seconds(), checkMaxArrivals/perSecond)-warmup)
	p.interval = max(time.Second, seconds(measure/500).Round(time.Second))
	if s.windowBinds() {
		// A sliding window admits its limit in a burst once a window:
		// the figures span whole windows.
		w := s.Inputs.WindowS
		measure = math.Floor(measure/w) * w
		p.interval = seconds(w) / time.Duration(math.Ceil(w/p.interval.Seconds()))
	}
	p.warmup = roundUp(seconds(warmup), p.interval)
	p.horizon = p.warmup + max(p.interval, seconds(measure)/p.interval*p.interval)
	return p, ""
}

// checkScenario returns the scenario of one run of the check: the
// instances, each configured with ClientTOML, offered load × the binding
// quota (Poisson) against a server that enforces the published quota as a
// token bucket with a second of burst, the window limit as a sliding
// window, and the cost quota as a bucket counting cost with a minute of
// burst; each request costs one unit when it starts and what its response
// reveals (the lognormal cost) when it completes.
func (s *Sizing) checkScenario(p checkPlan, load float64) string {
	in := s.Inputs
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"size-verify\"\n\n[run]\nseed = 1\nduration = %q\nwarmup = %q\ninterval = %q\n",
		durationText(p.horizon), durationText(p.warmup), durationText(p.interval))
	fmt.Fprintf(&b, "\n[workload]\narrival = \"poisson\"\nrate = %s\n", numText(load*p.offered))
	fmt.Fprintf(&b, "\n[client]\ninstances = %d\n%s", in.Instances, s.ClientTOML())
	b.WriteString("\n[client.on_429]\npause = \"host\"\nhonor_retry_after = true\n")
	quotas := []string{fmt.Sprintf("{ kind = %q, rate = %s, burst = %s }", kindname.QuotaTokenBucket, numText(in.QuotaRPS), numText(serverBurst(in.QuotaRPS)))}
	if in.WindowLimit > 0 {
		quotas = append(quotas, fmt.Sprintf("{ kind = %q, limit = %d, window = %q }", kindname.QuotaSlidingWindow, in.WindowLimit, durationText(seconds(in.WindowS))))
	}
	if in.CostQuota > 0 {
		quotas = append(quotas, fmt.Sprintf("{ kind = %q, unit = \"cost\", rate = %s, burst = %s }",
			kindname.QuotaTokenBucket, numText(in.CostQuota), numText(in.CostQuota*costBurstSeconds)))
	}
	lognormal := upstream.Name(upstream.LogNormal{})
	fmt.Fprintf(&b, "\n[[upstream]]\nhost = \"*\"\nlatency = { dist = %q, p50 = %q, p99 = %q }\nquota = [%s]\nretry_after = \"1s\"\nreject_latency = \"5ms\"\n",
		lognormal, durationText(seconds(in.LatencyP50)), durationText(seconds(in.LatencyP99)), strings.Join(quotas, ", "))
	if in.CostQuota > 0 {
		fmt.Fprintf(&b, "response_cost = { dist = %q, p50 = %d, p99 = %d }\n", lognormal, in.CostP50, in.CostP99)
	}
	return b.String()
}

// SizingCheck is what simulating the sized configuration found. The check
// runs it three times: offered the binding quota (Poisson, whose lulls
// let the buckets fill and burst: the test of the bursts against the
// server's), offered twice that (the limiters always busy: the test of
// the rate they deliver), and offered 90% of the sized rate (lulls
// again, and the test of the waiting line against the arrivals' bursts).
type SizingCheck struct {
	// Simulated is false when the check could not be run (Note says why):
	// then Holds is false too and proves nothing.
	Simulated bool `json:"simulated"`
	// Holds: under 1% of attempts answered 429 in every run, the
	// goodput beyond the quota at least 90% of the sized rate, and under
	// 1% refused offered 90% of the sized rate.
	Holds bool `json:"holds"`
	// Rate429 is the largest of the runs' shares of attempts answered
	// 429; GoodputRPS the goodput of the run beyond the quota.
	Rate429    float64 `json:"rate_429"`
	GoodputRPS float64 `json:"goodput_rps"`
	// SizedRPS is the rate goodput is held to: Sizing.SizedRPS, but for
	// the half unit of cost the check adds to a request's mean (see
	// checkRate); QuotaRPS the binding quota in requests per second, what
	// the first run offers.
	SizedRPS float64 `json:"sized_rps"`
	QuotaRPS float64 `json:"quota_rps"`
	// HorizonS and WarmupS are each run's simulated time and the part of
	// it left out of the figures.
	HorizonS float64     `json:"horizon_s,omitempty"`
	WarmupS  float64     `json:"warmup_s,omitempty"`
	Runs     []SizingRun `json:"runs,omitempty"`
	Note     string      `json:"note"`
}

// SizingRun is one run of the check, its figures over the steady state.
type SizingRun struct {
	OfferedRPS float64 `json:"offered_rps"`
	Rate429    float64 `json:"rate_429"`
	GoodputRPS float64 `json:"goodput_rps"`
	Attempts   int64   `json:"attempts"`
	// Refused is the share of arrivals refused at once or timed out
	// waiting for a limiter: what the check's third run, offered 90% of
	// the sized rate, holds under 1%.
	Refused float64 `json:"refused"`
}

// checkUnder is what the third run offers, in sized rates: under what
// the limiters admit, so that a refusal there is a line too short for
// the arrivals' bursts, not load shed.
const checkUnder = 0.9

// checkRate is the sized rate as the check's requests cost: each takes one
// unit when it starts and the drawn cost, rounded down to whole units,
// when its response completes, about half a unit more than the
// lognormal's mean.
func (s *Sizing) checkRate() float64 {
	if s.PerInstance.CostRate == 0 {
		return s.SizedRPS
	}
	n := float64(s.Inputs.Instances)
	r := s.PerInstance.Rate * n
	if s.Shared != nil {
		r = s.Shared.Rate
	}
	if s.PerInstance.WindowLimit > 0 {
		r = math.Min(r, float64(s.Total.WindowLimit)/s.Inputs.WindowS)
	}
	return math.Min(r, s.Total.CostRate/(s.CostMean+0.5))
}

// checkRefused is the share of refusals the third run holds under.
const checkRefused = 0.01

// refusedShare is the share of r's arrivals refused at once or timed out
// waiting for a limiter.
func refusedShare(r *metrics.Results) float64 {
	if r.Requests.Arrived == 0 {
		return 0
	}
	return float64(r.Requests.Rejected+r.Requests.AcquireTimeouts) / float64(r.Requests.Arrived)
}

// checkOverload is what the second run offers, in binding quotas.
const checkOverload = 2

// Check simulates the sized configuration and says whether the arithmetic
// holds (see SizingCheck). A check that cannot run says so in a
// SizingCheck that is not Simulated. Setting interrupt (a signal) stops
// the runs at their next event: the check then says it proves nothing.
func (s *Sizing) Check(interrupt *atomic.Bool) (*SizingCheck, error) {
	v := &SizingCheck{SizedRPS: s.checkRate(), QuotaRPS: s.offered()}
	p, why := s.plan()
	if why != "" {
		v.Note = why
		return v, nil
	}
	v.HorizonS, v.WarmupS = p.horizon.Seconds(), p.warmup.Seconds()
	var results []*metrics.Results
	for _, load := range []float64{1, checkOverload, checkUnder * v.SizedRPS / p.offered} {
		sc, err := Parse("size-verify.toml", []byte(s.checkScenario(p, load)))
		if err != nil {
			return nil, fmt.Errorf("the check's scenario: %w", err)
		}
		out, err := sc.Simulate(client.Options{Interrupt: interrupt})
		if err != nil {
			return nil, fmt.Errorf("the check's run at %g× the quota: %w", load, err)
		}
		r := out.Results
		results = append(results, r)
		v.Runs = append(v.Runs, SizingRun{OfferedRPS: load * p.offered, Rate429: r.Rate429, Attempts: r.Requests.Attempts,
			GoodputRPS: steadyGoodput(out.Series, p), Refused: refusedShare(r)})
	}
	v.Simulated = true
	at, beyond, under := v.Runs[0], v.Runs[1], v.Runs[2]
	v.Rate429, v.GoodputRPS = max(at.Rate429, beyond.Rate429, under.Rate429), beyond.GoodputRPS
	switch {
	case !results[0].Complete || !results[1].Complete || !results[2].Complete:
		stopped := results[slices.IndexFunc(results, func(r *metrics.Results) bool { return !r.Complete })]
		v.Note = fmt.Sprintf("the check stopped early (%v): nothing is proven", stopped.Stop)
	case v.Rate429 >= 0.01:
		worst := results[0]
		for i, r := range v.Runs {
			if r.Rate429 > worst.Rate429 {
				worst = results[i]
			}
		}
		v.Note = fmt.Sprintf("the arithmetic does not hold: %.2f%% of attempts answered 429 offered the quota, %.2f%% offered twice it, %.2f%% offered %.0f%% of the sized rate%s; %s",
			100*at.Rate429, 100*beyond.Rate429, 100*under.Rate429, 100*checkUnder, refusedBy(worst.Upstreams), remedy429(worst.Limiters))
	case v.GoodputRPS < checkGoodput*v.SizedRPS:
		v.Note = fmt.Sprintf("goodput %.4g/s offered twice the quota is under %.0f%% of the sized %.4g/s: %s binds before the rate",
			v.GoodputRPS, 100*checkGoodput, v.SizedRPS, mostWaited(results[1].Limiters))
	case under.Refused >= checkRefused:
		v.Note = fmt.Sprintf("the line is too short for the arrivals' bursts: %.2f%% of requests offered %.0f%% of the sized rate (%.4g/s) were refused at once or timed out waiting; raise client.max_waiting",
			100*under.Refused, 100*checkUnder, under.OfferedRPS)
	default:
		v.Holds = true
		v.Note = fmt.Sprintf("holds: %.2f%% 429s offered the quota (%.4g/s) and %.2f%% offered twice it, with %.4g/s of goodput (%.1f%% of the sized %.4g/s); %.2f%% refused offered %.0f%% of the sized rate; %s of simulated time each",
			100*at.Rate429, at.OfferedRPS, 100*beyond.Rate429, v.GoodputRPS, 100*v.GoodputRPS/v.SizedRPS, v.SizedRPS, 100*under.Refused, 100*checkUnder, spanText(p.horizon))
	}
	return v, nil
}

// steadyGoodput is the successes per second of the intervals from the
// warm-up to the horizon: the run's own goodput_rps runs on to the last
// completion, whose latency tail would count against a short horizon.
func steadyGoodput(series *metrics.Series, p checkPlan) float64 {
	from, to, half := p.warmup.Seconds(), p.horizon.Seconds(), p.interval.Seconds()/2
	var succeeded float64
	series.ScanNamed(0, []string{"t_s", "succeeded"}, func(_ int, vals []float64) bool {
		if vals[0] > from+half && vals[0] < to+half {
			succeeded += vals[1]
		}
		return vals[0] < to+half
	})
	return succeeded / (to - from)
}

// remedy429 says what to change against 429s: the semaphore, when requests
// waited for it (each had its token already, and they leave in bunches
// the rate limiter never allowed), the rate otherwise.
func remedy429(ls []metrics.LimiterStats) string {
	for _, l := range ls {
		if l.Family == kindname.ConcurrencyFamily && l.MeanWaiting > 0.01 {
			return fmt.Sprintf("requests waited for the semaphore %q (%.3g on average) and left it in bunches: give it more permits (or more memory)", l.Name, l.MeanWaiting)
		}
	}
	return "lower the rate"
}

// refusedBy names the quotas that answered 429, with their counts.
func refusedBy(ups []metrics.UpstreamStats) string {
	var parts []string
	for _, u := range ups {
		for _, q := range u.RejectedBy {
			if q.Count > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", q.Quota, q.Count))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// mostWaited names the limiter with the most requests waiting on it.
func mostWaited(ls []metrics.LimiterStats) string {
	best := "a limiter"
	most := 0.0
	for _, l := range ls {
		if l.MeanWaiting > most {
			best, most = fmt.Sprintf("the limiter %q (%.3g waiting on average)", l.Name, l.MeanWaiting), l.MeanWaiting
		}
	}
	return best
}
