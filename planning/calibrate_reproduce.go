package planning

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// minRefusedShare is the floor under the log's share of refusals when
// the written scenario's share is compared with it: a log with none is
// matched by a model refusing under threshold × 1%.
const minRefusedShare = 0.01

// workloadReplications are the runs of the written scenario its check
// takes: the log is one draw of production, and each run one of the
// model, so the comparison allows for the runs' spread as well as the
// threshold.
const workloadReplications = 5

// WorkloadCheck compares the written scenario, run with its own
// arrivals (the process planArrivals chose, not the log's instants),
// with the log: a plan runs that scenario, so it must serve and refuse
// as production did, not only the model on the log's arrivals.
type WorkloadCheck struct {
	// Arrivals name the written process: "poisson at 105.6/s".
	Arrivals      string  `json:"arrivals"`
	LogGoodputRPS float64 `json:"log_goodput_rps"`
	Log429Share   float64 `json:"log_429_share"`
	// SimGoodputRPS and Sim429Share are the means over Replications runs
	// of RunDurationS each (seeds 1 to Replications), with their 95%
	// confidence half-widths.
	SimGoodputRPS  float64 `json:"sim_goodput_rps"`
	SimGoodputCI95 float64 `json:"sim_goodput_ci95"`
	Sim429Share    float64 `json:"sim_429_share"`
	Sim429CI95     float64 `json:"sim_429_share_ci95"`
	Replications   int     `json:"replications"`
	GoodputError   float64 `json:"goodput_error"` // |sim − log| ÷ log
	RefusedError   float64 `json:"429_error"`     // |sim − log| ÷ max(log, 1%)
	// Reproduces: each figure's gap is within the threshold (of the log's
	// goodput, of the larger of its share of refusals and 1%) plus the
	// spread a run has (its half-width × √(runs + 1): the log is one run
	// of production).
	Reproduces   bool    `json:"reproduces"`
	RunDurationS float64 `json:"run_duration_s"`
	// LogMinutes are the log's whole minutes its figures are over (0:
	// the whole log, shorter than two minutes).
	LogMinutes    int      `json:"log_minutes"`
	unfitArrivals []string // hosts or tenants whose fit a scenario cannot write
	threshold     float64
	log           string // the log's path, for the replay command
}

// CheckWorkload runs cfg (the written scenario's, with its own
// arrivals) workloadReplications times, each as long as the part of the
// log compared, compares its goodput and share of refusals with the
// log's, and withdraws the trust of a calibration whose scenario does
// not reproduce them (see WorkloadCheck.Reproduces). It returns the last
// run's outcome (nil when interrupted before one ran).
func (c *Calibration) CheckWorkload(cfg *client.Config, opt client.Options) (*client.Outcome, error) {
	w := &WorkloadCheck{Arrivals: c.writtenArrivals(), threshold: c.Threshold, log: c.Log, Replications: workloadReplications}
	w.unfitArrivals = c.unwritten()
	w.LogGoodputRPS, w.Log429Share, w.LogMinutes = c.fullMinutes()
	// As long as the part of the log compared, up to the scenario's own
	// longest run.
	compared := time.Duration(w.LogMinutes) * time.Minute
	if w.LogMinutes == 0 {
		compared = max(time.Second, time.Duration(c.SpanS*1e9).Round(time.Second))
	}
	run := *cfg
	run.Run.Requests, run.Run.Duration = 0, min(maxCalibratedDuration, compared)
	w.RunDurationS = run.Run.Duration.Seconds()
	var goodput, shares []float64
	var out *client.Outcome
	for rep := range workloadReplications {
		var err error
		if out, err = client.RunReplication(&run, rep, opt); err != nil {
			return nil, err
		}
		out.Series.Close()
		if out.Interrupted {
			return out, nil
		}
		goodput, shares = append(goodput, out.Results.Throughput.GoodputRPS), append(shares, out.Results.Rate429)
	}
	g, r := metrics.SpreadOf(goodput), metrics.SpreadOf(shares)
	w.SimGoodputRPS, w.SimGoodputCI95, w.Sim429Share, w.Sim429CI95 = g.Mean, g.CI95, r.Mean, r.CI95
	w.GoodputError = ape(w.SimGoodputRPS, w.LogGoodputRPS)
	w.RefusedError = math.Abs(w.Sim429Share-w.Log429Share) / max(w.Log429Share, minRefusedShare)
	w.Reproduces = !w.goodputOff() && !w.refusedOff()
	c.Workload = w
	c.judgeWorkload(w)
	return out, nil
}

// goodputOff reports whether the runs' goodput misses the log's by more
// than the threshold and a run's spread (its half-width × √(runs + 1)).
func (w *WorkloadCheck) goodputOff() bool {
	return math.Abs(w.SimGoodputRPS-w.LogGoodputRPS) > w.threshold*w.LogGoodputRPS+w.SimGoodputCI95*w.runSpread()
}

// refusedOff is goodputOff for the share of refusals, whose threshold is
// of the larger of the log's share and minRefusedShare.
func (w *WorkloadCheck) refusedOff() bool {
	return math.Abs(w.Sim429Share-w.Log429Share) > w.threshold*max(w.Log429Share, minRefusedShare)+w.Sim429CI95*w.runSpread()
}

// runSpread turns the runs' mean's half-width into one run's: the log is
// one run of production.
func (w *WorkloadCheck) runSpread() float64 { return math.Sqrt(float64(w.Replications + 1)) }

// judgeWorkload adds the check of the written scenario to the verdict.
func (c *Calibration) judgeWorkload(w *WorkloadCheck) {
	switch {
	case w.Reproduces && c.Trusted:
		c.Verdict += fmt.Sprintf("; the scenario written reproduces the log (goodput %.1f%% off, %s %.1f%% off, over %d runs)", 100*w.GoodputError, c.refusalWord(), 100*w.RefusedError, w.Replications)
	case !w.Reproduces && c.Trusted:
		c.Trusted, c.Verdict = false, "not trusted for planning: "+w.why()
	case !w.Reproduces:
		c.Verdict += "; " + w.why()
	}
}

// fullMinutes are the log's goodput per second and share of refusals
// over the minutes it covers whole: a log cut from production starts
// and ends inside a quota's window, whose refusals it then misses, where
// the scenario runs whole windows from its start. A log with fewer than
// two whole minutes is taken whole (minutes 0).
func (c *Calibration) fullMinutes() (goodputRPS, share float64, minutes int) {
	var goodput, refused int64
	for k, m := range c.production {
		if k*int64(time.Minute) >= c.first && (k+1)*int64(time.Minute) <= c.last {
			goodput, refused, minutes = goodput+m.goodput, refused+m.refused, minutes+1
		}
	}
	span := float64(minutes) * 60
	if minutes < 2 {
		goodput, refused, minutes, span = 0, 0, 0, c.SpanS
		for _, h := range c.Hosts {
			goodput, refused = goodput+h.Admitted, refused+h.Refused
		}
	}
	if span > 0 {
		goodputRPS = float64(goodput) / span
	}
	if goodput+refused > 0 {
		share = float64(refused) / float64(goodput+refused)
	}
	return goodputRPS, share, minutes
}

// unwritten names the fitted processes the scenario does not write as
// fitted: each host's other than the workload's process, or each
// tenant's other than those a tenant brings, "host api: trace".
func (c *Calibration) unwritten() []string {
	var out []string
	if c.ownArrivals {
		for _, t := range c.Tenants {
			if t.Share > 0 && !ownArrival(t.Arrivals.spec.Kind) {
				out = append(out, fmt.Sprintf("tenant %s: %s", t.Tenant, t.Arrivals.Process))
			}
		}
		return out
	}
	for _, h := range c.Hosts {
		if h.Arrivals.Process != c.workload.Kind.String() {
			name := "the log"
			if h.Host != "" {
				name = "host " + h.Host
			}
			out = append(out, fmt.Sprintf("%s: %s", name, h.Arrivals.Process))
		}
	}
	return out
}

// writtenArrivals names the scenario's arrival process as written.
func (c *Calibration) writtenArrivals() string {
	if c.ownArrivals {
		return "each tenant's own process"
	}
	return fmt.Sprintf("%s at %s/s", c.workload.Kind, report.Number(c.workloadRate(), 4))
}

// why says how the written scenario misses the log, and what to plan on
// instead when the log's arrivals follow no process a scenario writes.
func (w *WorkloadCheck) why() string {
	var over []string
	if w.goodputOff() {
		over = append(over, fmt.Sprintf("goodput %s/s against the log's %s/s", report.Number(w.SimGoodputRPS, 4), report.Number(w.LogGoodputRPS, 4)))
	}
	if w.refusedOff() {
		over = append(over, fmt.Sprintf("refusals %s against the log's %s", shareText(w.Sim429Share, math.NaN()), shareText(w.Log429Share, math.NaN())))
	}
	s := fmt.Sprintf("the scenario written, with its arrivals (%s), does not reproduce the log: %s", w.Arrivals, strings.Join(over, ", "))
	if len(w.unfitArrivals) > 0 {
		s += fmt.Sprintf("; the log's arrivals follow no process a scenario writes (%s)", strings.Join(w.unfitArrivals, ", "))
	}
	return s + fmt.Sprintf("; judge a configuration on the log's own arrivals with `limitsim replay %s SCENARIO`", w.log)
}

// shareText writes a share of refusals (with its 95% half-width, unless
// NaN) as every report writes the 429 rate.
func shareText(share, ci95 float64) string { return report.Figure("rate_429", share, ci95) }
