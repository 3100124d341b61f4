package planning

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// Fewest admitted requests a minute needs for its latency quantile to be
// compared: fewer say more about chance than about the model.
const (
	minSamplesP50 = 20
	minSamplesP99 = 200
)

// CalibrationMinute compares one minute of the model, run on the log's
// own arrivals, with the log: goodput (requests answered), refusals (429
// or 503) and the answered requests' latency quantiles. A quantile is
// absent when the minute had too few answers to compare it.
type CalibrationMinute struct {
	Minute         string   `json:"minute"` // RFC 3339 UTC
	LogGoodput     int64    `json:"log_goodput"`
	SimGoodput     int64    `json:"sim_goodput"`
	LogRefused     int64    `json:"log_429"`
	SimRefused     int64    `json:"sim_429"`
	LogLatencyP50S *float64 `json:"log_latency_p50_s,omitempty"`
	SimLatencyP50S *float64 `json:"sim_latency_p50_s,omitempty"`
	LogLatencyP99S *float64 `json:"log_latency_p99_s,omitempty"`
	SimLatencyP99S *float64 `json:"sim_latency_p99_s,omitempty"`
	logP50, logP99 float64
	simP50, simP99 float64
	hasP50, hasP99 bool
}

// CalibrationErrors are the mean absolute percentage errors of the model
// against the log, over the minutes: |sim − log| ÷ log, as a fraction. A
// count's minute where the log shows none counts 0 when the model shows
// none too, 1 otherwise; a quantile's only where both had enough answers.
type CalibrationErrors struct {
	Goodput    float64 `json:"goodput_mape"`
	Refused    float64 `json:"429_mape"`
	LatencyP50 float64 `json:"latency_p50_mape"`
	LatencyP99 float64 `json:"latency_p99_mape"`
	// Minutes are how many minutes each error averages.
	GoodputMinutes int `json:"goodput_minutes"`
	RefusedMinutes int `json:"429_minutes"`
	P50Minutes     int `json:"latency_p50_minutes"`
	P99Minutes     int `json:"latency_p99_minutes"`
}

// simMinute is the model's figures for one minute.
type simMinute struct {
	goodput, refused int64
	latency          *metrics.CountHist // µs
}

// calibrationTally counts the model's requests per minute of their
// arrival, and per tenant (by the run's tenant index).
type calibrationTally struct {
	origin  int64
	minutes map[int64]*simMinute
	tenants map[int]*simMinute // latency not kept
}

// tenant is tenant's counts.
func (t *calibrationTally) tenant(tenant int) *simMinute {
	m := t.tenants[tenant]
	if m == nil {
		m = &simMinute{}
		t.tenants[tenant] = m
	}
	return m
}

func (t *calibrationTally) minute(arrived time.Duration) *simMinute {
	k := (t.origin + int64(arrived)) / int64(time.Minute)
	m := t.minutes[k]
	if m == nil {
		m = &simMinute{}
		t.minutes[k] = m
	}
	return m
}

// Sent is not counted.
func (t *calibrationTally) Sent(_, _ time.Duration, _ int) {}

// Refused counts a refusal.
func (t *calibrationTally) Refused(arrived time.Duration, tenant, _ int) {
	t.minute(arrived).refused++
	t.tenant(tenant).refused++
}

// Ended counts an answered request and its latency.
func (t *calibrationTally) Ended(now, arrived time.Duration, tenant int, o metrics.RequestEnd) {
	if o != metrics.Succeeded {
		return
	}
	t.tenant(tenant).goodput++
	m := t.minute(arrived)
	m.goodput++
	if m.latency == nil {
		m.latency = metrics.NewCountHist()
	}
	m.latency.Add((now - arrived).Microseconds())
}

// observers tells each of its observers.
type observers []client.Observer

func (os observers) Sent(now, arrived time.Duration, tenant int) {
	for _, o := range os {
		o.Sent(now, arrived, tenant)
	}
}

func (os observers) Refused(arrived time.Duration, tenant, status int) {
	for _, o := range os {
		o.Refused(arrived, tenant, status)
	}
}

func (os observers) Ended(now, arrived time.Duration, tenant int, e metrics.RequestEnd) {
	for _, o := range os {
		o.Ended(now, arrived, tenant, e)
	}
}

// Check runs cfg (the calibrated scenario's) on the log's own arrivals
// (with their logged costs and tenants, when mapped), each admitted
// request taking the latency model's, its instant 0 on a
// multiple of the widest fixed window inferred so that the model's
// windows fall where the server's did; it compares the model with the
// log minute by minute and gives the verdict by threshold.
func (c *Calibration) Check(cfg *client.Config, threshold float64, opt client.Options) (*client.Outcome, error) {
	log := c.log
	log.Latency = LatencyModel
	r, err := PrepareReplay(cfg, log)
	if err != nil {
		return nil, err
	}
	a := int64(alignment(c.Hosts))
	r.sv.origin = floorDiv(r.sv.origin, a) * a
	r.run.Run.Duration = time.Duration(r.sv.last-r.sv.origin) + r.sv.widest + 1
	f, rd, err := openCalibrationLog(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := newTally(r.sv.origin, r.run.Workload.Tenants)
	ct := &calibrationTally{origin: r.sv.origin, minutes: map[int64]*simMinute{}, tenants: map[int]*simMinute{}}
	feed := &recordFeed{reader: rd, survey: r.sv, hostOf: r.hostOf, tenantOf: r.tenantOf, latency: LatencyModel, tally: t,
		spread: newSpreader(r.run.Run.Seed), costLogged: log.Options.Mapping.Cost != ""}
	opt.Recorded, opt.Observer = feed, observers{t, ct}
	out, err := client.Run(r.run, opt)
	if err != nil {
		return nil, err
	}
	if feed.err != nil {
		out.Series.Close()
		return nil, fmt.Errorf("%w: %w", ErrCalibrate, feed.err)
	}
	c.compare(ct, threshold)
	for i := range c.Tenants {
		if k, ok := r.tenantOf[c.Tenants[i].Tenant]; ok && ct.tenants[k] != nil {
			c.Tenants[i].SimGoodput, c.Tenants[i].SimRefused = ct.tenants[k].goodput, ct.tenants[k].refused
		}
	}
	return out, nil
}

// compare sets the minutes, the errors and the verdict.
func (c *Calibration) compare(ct *calibrationTally, threshold float64) {
	keys := map[int64]bool{}
	for k := range c.production {
		keys[k] = true
	}
	for k := range ct.minutes {
		keys[k] = true
	}
	c.Minutes = c.Minutes[:0]
	var e errorSums
	var lg loggedLatency
	for _, h := range c.Hosts {
		lg.resolution = max(lg.resolution, h.Latency.resolution.Seconds())
		lg.quantum = max(lg.quantum, h.Latency.quantum.Seconds())
	}
	for _, k := range sortedMinutes(keys) {
		m := calibrationMinute(k, c.production[k], ct.minutes[k], lg)
		e.add(&m)
		c.Minutes = append(c.Minutes, m)
	}
	c.Errors, c.Threshold = e.errors(), threshold
	c.Trusted, c.Verdict = verdict(c.Errors, threshold, unexplained(c.Hosts), c.refusalWord())
}

// refusalWord names the refusals a calibration counts (429 or 503): "429s"
// when every host that refused answered 429, "503s" when every one
// answered 503 (nginx's limit_req by default), "refusals" for a mix.
func (c *Calibration) refusalWord() string {
	seen := map[int]bool{}
	for _, h := range c.Hosts {
		if h.Quota.Status != 0 {
			seen[h.Quota.Status] = true
		}
	}
	switch {
	case len(seen) > 1:
		return "refusals"
	case seen[503]:
		return "503s"
	}
	return "429s"
}

// unexplained names the hosts whose refusals no inferred quota explains.
func unexplained(hosts []HostCalibration) []string {
	var out []string
	for _, h := range hosts {
		if h.Refused == 0 {
			continue
		}
		best := 0.0
		for _, c := range h.Quota.Candidates {
			best = max(best, c.Score)
		}
		if best < minQuotaScore {
			name := h.Host
			if name == "" {
				name = "the log"
			}
			out = append(out, fmt.Sprintf("%s's refusals follow no %s (agreement %.2f < %g)%s", name, h.Quota.tried, best, minQuotaScore, h.Quota.notTried))
		}
	}
	return out
}

// loggedLatency is how the log writes latencies, in seconds: resolution,
// under which a latency is logged as 0, and quantum, the step each is
// logged in (0: finer than a millisecond).
type loggedLatency struct{ resolution, quantum float64 }

// as is latency quantile v as the log would write it: 0 under the
// resolution, else rounded to the quantum. A model's p99 of 0.9 ms is a
// log's 1 ms, not 10% off it.
func (lg loggedLatency) as(v float64) float64 {
	switch {
	case v < lg.resolution:
		return 0
	case lg.quantum > 0:
		return math.Round(v/lg.quantum) * lg.quantum
	}
	return v
}

// calibrationMinute compares minute k of the log (p) and the model (s),
// each latency quantile as the log writes it (loggedLatency).
func calibrationMinute(k int64, p *minuteLog, s *simMinute, lg loggedLatency) CalibrationMinute {
	m := CalibrationMinute{Minute: time.Unix(k*60, 0).UTC().Format(time.RFC3339)}
	if p == nil {
		p = &minuteLog{}
	}
	if s == nil {
		s = &simMinute{}
	}
	m.LogGoodput, m.LogRefused, m.SimGoodput, m.SimRefused = p.goodput, p.refused, s.goodput, s.refused
	q := func(h *metrics.CountHist, p float64) float64 { return lg.as(float64(h.Quantile(p)) / 1e6) }
	if p.latency != nil && s.latency != nil {
		n := min(p.latency.Dist().Count, s.latency.Dist().Count)
		if n >= minSamplesP50 {
			m.logP50, m.simP50, m.hasP50 = q(p.latency, 0.5), q(s.latency, 0.5), true
			m.LogLatencyP50S, m.SimLatencyP50S = &m.logP50, &m.simP50
		}
		if n >= minSamplesP99 {
			m.logP99, m.simP99, m.hasP99 = q(p.latency, 0.99), q(s.latency, 0.99), true
			m.LogLatencyP99S, m.SimLatencyP99S = &m.logP99, &m.simP99
		}
	}
	return m
}

// errorSums add up the minutes' absolute percentage errors.
type errorSums struct {
	goodput, refused, p50, p99 float64
	n                          [4]int
}

func (e *errorSums) add(m *CalibrationMinute) {
	e.goodput += ape(float64(m.SimGoodput), float64(m.LogGoodput))
	e.refused += ape(float64(m.SimRefused), float64(m.LogRefused))
	e.n[0]++
	e.n[1]++
	if m.hasP50 {
		e.p50 += ape(m.simP50, m.logP50)
		e.n[2]++
	}
	if m.hasP99 {
		e.p99 += ape(m.simP99, m.logP99)
		e.n[3]++
	}
}

func (e *errorSums) errors() CalibrationErrors {
	mean := func(s float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return s / float64(n)
	}
	return CalibrationErrors{Goodput: mean(e.goodput, e.n[0]), Refused: mean(e.refused, e.n[1]),
		LatencyP50: mean(e.p50, e.n[2]), LatencyP99: mean(e.p99, e.n[3]),
		GoodputMinutes: e.n[0], RefusedMinutes: e.n[1], P50Minutes: e.n[2], P99Minutes: e.n[3]}
}

// ape is |sim − log| ÷ log; with log 0, 0 when sim is 0 too, else 1.
func ape(sim, log float64) float64 {
	if log == 0 {
		if sim == 0 {
			return 0
		}
		return 1
	}
	return max(sim-log, log-sim) / log
}

// verdict says whether every error is under threshold and every host's
// refusals are explained (unexplained names those that are not), naming
// what fails.
func verdict(e CalibrationErrors, threshold float64, unexplained []string, refusals string) (bool, string) {
	figures := []struct {
		name string
		err  float64
		n    int
	}{{"goodput", e.Goodput, e.GoodputMinutes}, {refusals, e.Refused, e.RefusedMinutes},
		{"latency p50", e.LatencyP50, e.P50Minutes}, {"latency p99", e.LatencyP99, e.P99Minutes}}
	var all, over []string
	for _, f := range figures {
		text := fmt.Sprintf("%s %.1f%%", f.name, 100*f.err)
		if f.n == 0 {
			text = f.name + " not compared (too few answers a minute)"
			over = append(over, text)
		} else if f.err >= threshold {
			over = append(over, text)
		}
		all = append(all, text)
	}
	if len(over) > 0 || len(unexplained) > 0 {
		var why []string
		if len(over) > 0 {
			why = append(why, fmt.Sprintf("%s at or over %g%% (mean absolute percentage error per minute)", strings.Join(over, ", "), 100*threshold))
		}
		return false, "not trusted for planning: " + strings.Join(append(why, unexplained...), "; ")
	}
	return true, fmt.Sprintf("trusted for planning: every error under %g%% (%s)", 100*threshold, strings.Join(all, ", "))
}
