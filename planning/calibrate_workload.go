package planning

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/models/arrivalfit"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/scenarios"
)

// maxCostSteps is the most distinct costs a calibrated cost distribution
// writes one step each (every value with its share, exactly); a log with
// more is written as its percentiles.
const maxCostSteps = 32

// costStepGap is the width in probability of the rise from one cost to
// the next in a cost distribution written as steps (an empirical
// distribution's points have distinct p): no share of a sample of at
// most maxCostSamples is so small.
const costStepGap = 1e-7

// CostCalibration is the distribution of the costs a log records (of the
// requests answered or refused), sampled beyond maxCostSamples.
type CostCalibration struct {
	Requests int64   `json:"requests"`
	Mean     float64 `json:"mean"`
	P50      int64   `json:"p50"`
	P99      int64   `json:"p99"`
	Max      int64   `json:"max"`
	Distinct int     `json:"distinct_values"` // among the sampled costs
	// Dist is the scenario's workload.cost: the cost when every request
	// has one, else an empirical distribution, a step at each value (its
	// share exactly) for at most maxCostSteps values, else the
	// percentiles.
	Dist string `json:"dist"`
}

// fitCost describes the sampled costs of seen requests.
func fitCost(samples []int64, seen int64) *CostCalibration {
	s := slices.Sorted(slices.Values(samples))
	n := len(s)
	q := func(p float64) int64 { return s[min(max(int(math.Ceil(float64(n)*p))-1, 0), n-1)] }
	var sum float64
	values, counts := []int64{}, []int{}
	for _, v := range s {
		sum += float64(v)
		if len(values) == 0 || values[len(values)-1] != v {
			values, counts = append(values, v), append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	c := &CostCalibration{Requests: seen, Mean: roundSignificant(sum/float64(n), 4), P50: q(0.5), P99: q(0.99), Max: s[n-1],
		Distinct: len(values)}
	var points [][2]float64 // p, value
	switch {
	case len(values) == 1:
		c.Dist = strconv.FormatInt(values[0], 10)
		return c
	case len(values) <= maxCostSteps:
		round := func(p float64) float64 { return math.Round(p*1e9) / 1e9 }
		points = append(points, [2]float64{0, float64(values[0])})
		below := 0
		for k := range len(values) - 1 {
			below += counts[k]
			p := round(float64(below) / float64(n))
			points = append(points, [2]float64{p, float64(values[k])}, [2]float64{round(p + costStepGap), float64(values[k+1])})
		}
		points = append(points, [2]float64{1, float64(values[len(values)-1])})
	default:
		for i := range 100 {
			p := float64(i) / 100
			points = append(points, [2]float64{p, float64(q(p))})
		}
		points = append(points, [2]float64{0.999, float64(q(0.999))}, [2]float64{1, float64(s[n-1])})
		points[0][1] = float64(s[0])
	}
	text := make([]string, len(points))
	for i, pt := range points {
		text[i] = fmt.Sprintf("[%s, %d]", strconv.FormatFloat(pt[0], 'g', -1, 64), int64(pt[1]))
	}
	c.Dist = fmt.Sprintf("{ dist = \"empirical\", quantiles = [%s] }", strings.Join(text, ", "))
	return c
}

// TenantCalibration is one tenant's share of the log, its arrival fit,
// and how the model, run on the log's arrivals, answered its requests
// beside how production did.
type TenantCalibration struct {
	Tenant   string `json:"tenant"`
	Requests int64  `json:"requests"`
	// Share is the tenant's share of the requests answered or refused:
	// its weight in the scenario.
	Share      float64            `json:"share"`
	Arrivals   ArrivalCalibration `json:"arrivals"`
	LogGoodput int64              `json:"log_goodput"`
	SimGoodput int64              `json:"sim_goodput"`
	LogRefused int64              `json:"log_429"`
	SimRefused int64              `json:"sim_429"`
}

// fitTenants fits each tenant's share and arrivals (spread from the
// stream "calibrate/spread/tenant/NAME" of seed).
func fitTenants(cl *calibrationLog, seed uint64) []TenantCalibration {
	var total int
	for _, t := range cl.tenants {
		total += len(t.times)
	}
	span := time.Duration(cl.last - cl.first)
	out := make([]TenantCalibration, 0, len(cl.tenants))
	for _, t := range cl.tenants {
		tc := TenantCalibration{Tenant: t.name, Requests: t.requests, LogGoodput: t.goodput, LogRefused: t.refused}
		if len(t.times) > 0 && total > 0 {
			tc.Share = roundSignificant(float64(len(t.times))/float64(total), 4)
		}
		if len(t.times) > 0 {
			a, err := fitArrivals("calibrate/spread/tenant/"+t.name, t.times, t.precision, seed)
			if err != nil && span > 0 {
				a = fewArrivals(t.times, span)
				if len(t.times) >= arrivalfit.MinArrivals {
					a.Reason = fmt.Sprintf("%v: Poisson at their mean rate over the log's span", err)
				}
			}
			tc.Arrivals = a
		}
		out = append(out, tc)
	}
	return out
}

// ownArrival reports whether a tenant's own arrival process may be k
// (a scenario's tenant brings poisson, constant or onoff).
func ownArrival(k arrivals.Kind) bool {
	return k == arrivals.KindPoisson || k == arrivals.KindConstant || k == arrivals.KindOnOff
}

// planArrivals chooses the scenario's arrivals and says so in each
// fit's InScenario: each tenant its own process when a tenant's fit is
// one a tenant may bring other than Poisson; else one process for the
// workload, a single host's fit when a workload may take it, Poisson at
// the hosts' total rate otherwise (a scenario has one arrival process
// for every host: hosts cannot bring their own).
func (c *Calibration) planArrivals() {
	c.ownArrivals = false
	for _, t := range c.Tenants {
		k := t.Arrivals.spec.Kind
		if t.Share > 0 && k != arrivals.KindPoisson && ownArrival(k) && c.untenanted == 0 {
			c.ownArrivals = true
		}
	}
	if c.ownArrivals {
		for i := range c.Tenants {
			a := &c.Tenants[i].Arrivals
			switch {
			case c.Tenants[i].Share == 0:
				a.InScenario = "not written: none of its requests was answered or refused"
			case ownArrival(a.spec.Kind):
				a.InScenario = "its own " + a.spec.Kind.String() + ", as fitted"
			default:
				a.InScenario = fmt.Sprintf("its own poisson at its mean rate: a tenant brings poisson, constant or onoff, not %s", a.spec.Kind)
			}
		}
		for i := range c.Hosts {
			c.Hosts[i].Arrivals.InScenario = "the tenants' own processes, sent to the hosts by their rates' weights"
		}
		return
	}
	c.workload = arrivals.Spec{Kind: arrivals.KindPoisson}
	if len(c.Hosts) == 1 {
		switch s := c.Hosts[0].Arrivals.spec; s.Kind {
		case arrivals.KindConstant, arrivals.KindOnOff, arrivals.KindRamp:
			c.workload = s
		}
	}
	for i := range c.Hosts {
		a := &c.Hosts[i].Arrivals
		switch {
		case len(c.Hosts) == 1 && a.spec.Kind == c.workload.Kind:
			a.InScenario = a.spec.Kind.String() + ", as fitted"
		case len(c.Hosts) == 1:
			a.InScenario = fmt.Sprintf("poisson at its mean rate: a workload is not written as %s", a.spec.Kind)
		case a.spec.Kind == arrivals.KindPoisson:
			a.InScenario = "poisson at the hosts' total rate, a weight of it by its rate"
		default:
			a.InScenario = fmt.Sprintf("poisson at the hosts' total rate, a weight of it by its rate, not its %s: a scenario has one arrival process for every host (tenants may bring their own, hosts cannot)", a.spec.Kind)
		}
	}
	for i := range c.Tenants {
		a := &c.Tenants[i].Arrivals
		a.InScenario = fmt.Sprintf("a weight of %s of the workload's arrivals", strconv.FormatFloat(c.Tenants[i].Share, 'g', -1, 64))
		if k := a.spec.Kind; k != arrivals.KindPoisson && ownArrival(k) {
			a.InScenario += fmt.Sprintf(", not its own %s: %d records logged no tenant, which the tenants' own processes would leave out", k, c.untenanted)
		}
		if c.Tenants[i].Share == 0 {
			c.Tenants[i].Arrivals.InScenario = "not written: none of its requests was answered or refused"
		}
	}
}

// workloadRate is the rate the workload's one process is written at: its
// fit's for a constant, on-off or ramping process, else (Poisson) the
// hosts' total.
func (c *Calibration) workloadRate() float64 {
	switch c.workload.Kind {
	case arrivals.KindConstant, arrivals.KindOnOff, arrivals.KindRamp:
		return c.workload.Rate
	}
	rate := 0.0
	for _, h := range c.Hosts {
		rate += h.Arrivals.Rate
	}
	return rate
}

// writeWorkload writes the [workload] table (see planArrivals).
func (c *Calibration) writeWorkload(b *strings.Builder) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	b.WriteString("[workload]\n")
	if !c.ownArrivals {
		spec := c.workload
		fmt.Fprintf(b, "arrival = %q\n", spec.Kind.String())
		switch spec.Kind {
		case arrivals.KindOnOff:
			fmt.Fprintf(b, "on = %q\noff = %q\n", spec.On.String(), spec.Off.String())
		case arrivals.KindRamp:
			fmt.Fprintf(b, "rate_to = %s\nramp = %q\n", num(spec.RateTo), spec.Ramp.String())
		}
		fmt.Fprintf(b, "rate = %s\n", num(c.workloadRate()))
	}
	if c.Cost != nil {
		fmt.Fprintf(b, "cost = %s\n", c.Cost.Dist)
	}
	if named := c.Hosts[0].Host != ""; named {
		hosts := make([]string, len(c.Hosts))
		for i, h := range c.Hosts {
			hosts[i] = fmt.Sprintf("{ name = %s, weight = %s }", scenarios.QuoteString(h.Host), num(max(h.Arrivals.Rate, 1e-9)))
		}
		fmt.Fprintf(b, "hosts = [%s]\n", strings.Join(hosts, ", "))
	}
	var tenants []string
	for _, t := range c.Tenants {
		if t.Share == 0 {
			continue
		}
		if !c.ownArrivals {
			tenants = append(tenants, fmt.Sprintf("{ name = %s, weight = %s }", scenarios.QuoteString(t.Tenant), num(t.Share)))
			continue
		}
		s := t.Arrivals.spec
		switch s.Kind {
		case arrivals.KindConstant:
			tenants = append(tenants, fmt.Sprintf("{ name = %s, arrival = \"constant\", rate = %s }", scenarios.QuoteString(t.Tenant), num(s.Rate)))
		case arrivals.KindOnOff:
			tenants = append(tenants, fmt.Sprintf("{ name = %s, arrival = \"onoff\", rate = %s, on = %q, off = %q }", scenarios.QuoteString(t.Tenant), num(s.Rate), s.On.String(), s.Off.String()))
		default:
			tenants = append(tenants, fmt.Sprintf("{ name = %s, arrival = \"poisson\", rate = %s }", scenarios.QuoteString(t.Tenant), num(max(t.Arrivals.Rate, 1e-9))))
		}
	}
	if len(tenants) > 0 {
		fmt.Fprintf(b, "tenants = [%s]\n", strings.Join(tenants, ", "))
	}
}
