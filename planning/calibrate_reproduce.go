package planning

import (
	"fmt"
	"strings"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim/client"
)

// minRefusedShare is the floor under the log's share of refusals when
// the written scenario's share is compared with it: a log with none is
// matched by a model refusing under threshold × 1%.
const minRefusedShare = 0.01

// WorkloadCheck compares the written scenario, run with its own
// arrivals (the process planArrivals chose, not the log's instants),
// with the whole log: a plan runs that scenario, so it must serve and
// refuse as production did, not only the model on the log's arrivals.
type WorkloadCheck struct {
	// Arrivals name the written process: "poisson at 105.6/s".
	Arrivals      string  `json:"arrivals"`
	LogGoodputRPS float64 `json:"log_goodput_rps"`
	SimGoodputRPS float64 `json:"sim_goodput_rps"`
	Log429Share   float64 `json:"log_429_share"`
	Sim429Share   float64 `json:"sim_429_share"`
	GoodputError  float64 `json:"goodput_error"` // |sim − log| ÷ log
	RefusedError  float64 `json:"429_error"`     // |sim − log| ÷ max(log, 1%)
	Reproduces    bool    `json:"reproduces"`
	RunDurationS  float64 `json:"run_duration_s"`
	// LogMinutes are the log's whole minutes its figures are over (0:
	// the whole log, shorter than two minutes).
	LogMinutes    int      `json:"log_minutes"`
	unfitArrivals []string // hosts or tenants whose fit a scenario cannot write
	threshold     float64
	log           string // the log's path, for the replay command
}

// CheckWorkload runs cfg (the written scenario's, with its own
// arrivals) once, compares its goodput and share of refusals with the
// log's over the whole log, and withdraws the trust of a calibration
// whose scenario does not reproduce them within the threshold Check
// used.
func (c *Calibration) CheckWorkload(cfg *client.Config, opt client.Options) (*client.Outcome, error) {
	out, err := client.RunReplication(cfg, 0, opt)
	if err != nil {
		return nil, err
	}
	if out.Interrupted {
		return out, nil
	}
	w := &WorkloadCheck{Arrivals: c.writtenArrivals(), threshold: c.Threshold, RunDurationS: out.Results.ElapsedS, log: c.Log}
	w.unfitArrivals = c.unwritten()
	w.LogGoodputRPS, w.Log429Share, w.LogMinutes = c.fullMinutes()
	w.SimGoodputRPS, w.Sim429Share = out.Results.Throughput.GoodputRPS, out.Results.Rate429
	w.GoodputError = ape(w.SimGoodputRPS, w.LogGoodputRPS)
	w.RefusedError = max(w.Sim429Share-w.Log429Share, w.Log429Share-w.Sim429Share) / max(w.Log429Share, minRefusedShare)
	w.Reproduces = w.GoodputError < c.Threshold && w.RefusedError < c.Threshold
	c.Workload = w
	if w.Reproduces && c.Trusted {
		c.Verdict += fmt.Sprintf("; the scenario written reproduces the log (goodput %.1f%% off, 429s %.1f%% off)", 100*w.GoodputError, 100*w.RefusedError)
	}
	if !w.Reproduces {
		why := w.why()
		if c.Trusted {
			c.Trusted, c.Verdict = false, "not trusted for planning: "+why
		} else {
			c.Verdict += "; " + why
		}
	}
	return out, nil
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
	rate := 0.0
	for _, h := range c.Hosts {
		rate += h.Arrivals.Rate
	}
	if s := c.workload; s.Kind != arrivals.KindPoisson {
		return fmt.Sprintf("%s at %s/s", s.Kind, report.Number(s.Rate, 4))
	}
	return fmt.Sprintf("poisson at %s/s", report.Number(rate, 4))
}

// why says how the written scenario misses the log, and what to plan on
// instead when the log's arrivals follow no process a scenario writes.
func (w *WorkloadCheck) why() string {
	var over []string
	if w.GoodputError >= w.threshold {
		over = append(over, fmt.Sprintf("goodput %s/s against the log's %s/s", report.Number(w.SimGoodputRPS, 4), report.Number(w.LogGoodputRPS, 4)))
	}
	if w.RefusedError >= w.threshold {
		over = append(over, fmt.Sprintf("refusals %s against the log's %s", percent(w.Sim429Share), percent(w.Log429Share)))
	}
	s := fmt.Sprintf("the scenario written, with its arrivals (%s), does not reproduce the log: %s", w.Arrivals, strings.Join(over, ", "))
	if len(w.unfitArrivals) > 0 {
		s += fmt.Sprintf("; the log's arrivals follow no process a scenario writes (%s): judge a configuration on them with `limitsim replay %s SCENARIO`",
			strings.Join(w.unfitArrivals, ", "), w.log)
	}
	return s
}

// percent writes a share as a percentage to three significant digits.
func percent(share float64) string { return report.Number(100*share, 3) + "%" }
