package client

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// costing is the pipeline's part that knows what requests cost, and what
// the reservations of their responses' cost have held.
type costing struct {
	cost                          upstream.Count // each request's cost
	fixedCost                     int64          // the cost when it is constant, else 0
	costRand                      *rand.Rand     // the costs' stream, when they vary
	costs                         []*hostCost    // by host; nil for a host that counts no cost
	costed                        bool           // some host keeps cost statistics
	varies                        bool           // what some limiter takes varies by grant (costVaries)
	reserveRoom                   [][]sized      // by path, for learned reservations: the limiters that bound them; nil otherwise
	reserveHeld, reserveHeldFirst int64          // attempts whose reservation was held, and the first one's estimate
	reserveHeldBy                 sized          // the limiter that held the first
	pathCosts                     []pathCost     // by path, when some path has its own cost; nil otherwise
}

// pathCost is what one path's requests cost: a constant, or a draw.
type pathCost struct {
	fixed int64
	count upstream.Count
	rand  *rand.Rand
}

// draw is one request's cost on the path.
func (c *pathCost) draw() int64 {
	if c.fixed > 0 {
		return c.fixed
	}
	return c.count.Sample(c.rand)
}

// mean is the path's mean cost.
func (c *pathCost) mean() float64 {
	if c.fixed > 0 {
		return float64(c.fixed)
	}
	return c.count.Mean()
}

// newCost sets up the draw of each request's cost.
func (p *pipeline) newCost() error {
	w := &p.cfg.Workload
	if w.CostDist == nil {
		if w.Cost < 1 {
			return fmt.Errorf("%w: workload cost %d must be at least 1", ErrConfig, w.Cost)
		}
		p.fixedCost = w.Cost
		return nil
	}
	c, err := upstream.NewCount(w.CostDist, 1)
	if err != nil {
		return fmt.Errorf("%w: workload cost: %w", ErrConfig, err)
	}
	p.cost = c
	if n, ok := c.Constant(); ok {
		p.fixedCost = n
		return nil
	}
	p.costRand = p.eng.Stream("cost")
	return nil
}

// newPathCosts sets up the costs of the paths with their own: a path
// without one costs what the workload says. Every path costing the same
// constant leaves the cost fixed; otherwise each arrival draws its cost
// from its path (a path's distribution from the stream cost/PATH).
func (p *pipeline) newPathCosts() error {
	own := false
	for _, path := range p.cfg.Paths {
		own = own || path.ownCost()
	}
	if !own {
		return nil
	}
	costs := make([]pathCost, len(p.cfg.Paths))
	same := true
	for i, path := range p.cfg.Paths {
		c := &costs[i]
		switch {
		case path.CostDist != nil:
			n, err := upstream.NewCount(path.CostDist, 1)
			if err != nil {
				return fmt.Errorf("%w: path %s: cost: %w", ErrConfig, path.Name, err)
			}
			if c.fixed, _ = n.Constant(); c.fixed == 0 {
				c.count, c.rand = n, p.eng.Stream("cost/"+path.Name)
			}
		case path.Cost > 0:
			c.fixed = path.Cost
		case p.fixedCost > 0:
			c.fixed = p.fixedCost
		default: // the workload's distribution, from its own stream
			c.count, c.rand = p.cost, p.costRand
		}
		same = same && c.fixed > 0 && c.fixed == costs[0].fixed
	}
	if same {
		p.fixedCost = costs[0].fixed
		return nil
	}
	p.fixedCost, p.pathCosts = 0, costs
	return nil
}

// drawCost is the cost of an arrival on path, when costs vary.
func (p *pipeline) drawCost(path int) int64 {
	if p.pathCosts != nil {
		return p.pathCosts[path].draw()
	}
	return p.cost.Sample(p.costRand)
}

// meanCostF is a request's mean cost.
func (p *pipeline) meanCostF() float64 {
	if p.fixedCost > 0 {
		return float64(p.fixedCost)
	}
	if p.pathCosts != nil {
		var sum, total float64
		for i := range p.pathCosts {
			w := p.cfg.Paths[i].Weight
			sum, total = sum+w*p.pathCosts[i].mean(), total+w
		}
		return sum / total
	}
	return p.cost.Mean()
}

// hostCost is what one host's requests cost, for a host whose quotas
// count cost or whose responses reveal one.
type hostCost struct {
	requests, responses *metrics.CountHist
	charged             float64
}

// newHostCosts sets up the cost statistics of the hosts that need them.
func (p *pipeline) newHostCosts() {
	p.costs = make([]*hostCost, len(p.servers))
	for i, s := range p.servers {
		if s.CountsCost() || p.cfg.Upstreams[i].ResponseCost != nil {
			p.costs[i] = &hostCost{requests: metrics.NewCountHist(), responses: metrics.NewCountHist()}
			p.costed = true
		}
	}
}

// costArrived records the cost of a request routed to host.
func (p *pipeline) costArrived(host int, cost int64) {
	if !p.costed {
		return
	}
	if c := p.costs[host]; c != nil {
		c.requests.Add(cost)
	}
}

// costServed records an attempt of cost that reached host's server.
func (p *pipeline) costServed(host int, cost int64, a *upstream.Answer) {
	if !p.costed {
		return
	}
	if c := p.costs[host]; c != nil && a.OK {
		c.charged += float64(cost)
	}
}

// costDone records the cost an OK answer revealed.
func (p *pipeline) costDone(host int, a *upstream.Answer) {
	if !p.costed {
		return
	}
	if c := p.costs[host]; c != nil && a.OK && p.cfg.Upstreams[host].ResponseCost != nil {
		c.responses.Add(a.Cost)
		c.charged += float64(a.Cost)
	}
}

// costStats returns host's cost statistics over a run of span (nil for a
// host without them).
func (p *pipeline) costStats(host int, span time.Duration) *metrics.CostStats {
	c := p.costs[host]
	if c == nil {
		return nil
	}
	out := &metrics.CostStats{Request: c.requests.Dist(), Response: c.responses.Dist()}
	if span > 0 {
		out.ChargedPerS = c.charged / span.Seconds()
	}
	for _, q := range p.cfg.Upstreams[host].Quotas {
		if !q.CountsCost() {
			continue
		}
		if perS, _ := q.Capacity(); out.QuotaPerS == 0 || perS < out.QuotaPerS {
			out.QuotaPerS, out.QuotaBurst = perS, q.Size()
		}
	}
	return out
}

// costUtilisation makes u's quota utilisation the share of its cost quota
// used (cost admitted ÷ what the quota admits, over the whole run) when
// that quota is the one that binds first: a count of requests against its
// request equivalent would mislead, since the cheap requests pass and the
// costly ones are refused.
func (p *pipeline) costUtilisation(host int, u *metrics.UpstreamStats) {
	c := u.Cost
	if c == nil || c.QuotaPerS <= 0 || u.QuotaRPS == nil {
		return
	}
	for _, q := range p.cfg.Upstreams[host].Quotas {
		if rps, conc := q.Capacity(); !conc && !q.CountsCost() && rps > 0 && rps <= *u.QuotaRPS {
			return // a request quota is the tightest
		}
	}
	used := c.ChargedPerS / c.QuotaPerS
	u.QuotaUtilisation = &used
}

// costEstimator tracks the response costs one instance has observed, for
// reservations at a quantile of them.
type costEstimator struct {
	quantile  float64 // the quantile estimated
	histogram *metrics.CountHist
	observed  int64 // responses observed
	current   int64 // the estimate
	tick      int64 // observations until the estimate is next read
}

// estimateEvery is how many observations pass between readings of the
// quantile once the first estimateEvery are in (each of which is read).
const estimateEvery = 32

func newCostEstimator(r Reserve) *costEstimator {
	e := &costEstimator{current: r.Fixed}
	switch r.Estimate {
	case EstimateP50:
		e.quantile = 0.5
	case EstimateP90:
		e.quantile = 0.9
	default:
		return e
	}
	e.histogram = metrics.NewCountHist()
	return e
}

// observe records one response's cost.
func (e *costEstimator) observe(cost int64) {
	if e.histogram == nil {
		return
	}
	e.histogram.Add(cost)
	e.observed++
	if e.tick--; e.observed <= estimateEvery || e.tick <= 0 {
		e.current, e.tick = e.histogram.Quantile(e.quantile), estimateEvery
	}
}

// charged records what a grant of limiter li at scope s took from it, for
// a limiter whose units vary by grant.
func (p *pipeline) charged(now time.Duration, li, s int, r *request) {
	if p.varies && p.costVaries(li) {
		p.rec.LimiterCharged(now, li, s, float64(p.units(li, r)))
	}
}

// costVaries reports whether what limiter li takes varies by grant.
func (p *pipeline) costVaries(li int) bool {
	return p.countsCost(li) && (p.fixedCost == 0 || p.cfg.Reserve.Estimate != EstimateNone)
}

// countsCost reports whether limiter li takes a request's cost (rather
// than one unit per request).
func (p *pipeline) countsCost(li int) bool {
	return p.facts[li].countsCost
}

// units is what request r takes from limiter li.
func (p *pipeline) units(li int, r *request) int64 {
	if p.countsCost(li) {
		return r.cost + r.reserved
	}
	return 1
}

// newReserveRoom sets, for each path, the limiters of the path that count
// cost and have a size (a bucket's burst, a window's limit), when the
// client learns its reservations from the responses (p50 or p90). A
// learned estimate is held to the room the request's own cost leaves in
// the smallest of them that covers the request (a host- or tenant-scoped
// limiter may cover only some): reserving more than a limiter can ever
// hold would refuse every request from then on. A fixed estimate is
// checked when the scenario is loaded instead.
func (p *pipeline) newReserveRoom() {
	if e := p.cfg.Reserve.Estimate; e != EstimateP50 && e != EstimateP90 {
		return
	}
	p.reserveRoom = make([][]sized, len(p.paths))
	for pi, lims := range p.paths {
		for _, li := range lims {
			if !p.countsCost(li) {
				continue
			}
			l := &p.cfg.Limiters[li]
			var size int64
			switch l.Kind.Family {
			case models.RateFamily:
				size = int64(l.Params.Burst)
			case models.WindowFamily:
				size = l.Params.Limit
			}
			if size > 0 {
				p.reserveRoom[pi] = append(p.reserveRoom[pi], sized{li, size})
			}
		}
	}
}

// sized is a limiter that counts cost, and the most it holds.
type sized struct {
	li   int
	size int64
}

// reserve sets the reservation of r's attempt from its instance's
// estimate, held to the room the limiters that cover it leave.
func (p *pipeline) reserve(now time.Duration, r *request) {
	r.reserved, r.reservedAt = p.instances[r.instance].estimate.current, now
	if p.reserveRoom == nil {
		return
	}
	for _, l := range p.reserveRoom[r.path] {
		if r.cost+r.reserved <= l.size || p.scope(l.li, r) < 0 {
			continue
		}
		if r.cost <= l.size { // a request that fits alone: its reservation is held
			if p.reserveHeld == 0 {
				p.reserveHeldFirst, p.reserveHeldBy = r.reserved, l
			}
			p.reserveHeld++
		}
		r.reserved = max(0, l.size-r.cost)
	}
}

func quantileName(e Estimate) string {
	if e == EstimateP50 {
		return "p50"
	}
	return "p90"
}

// reserveWarning says how many attempts' reservations were held to the
// room a limiter leaves, if any were.
func (p *pipeline) reserveWarning() (metrics.Warning, bool) {
	if p.reserveHeld == 0 {
		return metrics.Warning{}, false
	}
	by := p.reserveHeldBy
	return metrics.Warning{Text: fmt.Sprintf("client.reserve: %d attempts had their reservation held to what a limiter can hold with the request's own cost (first limiter %s, %d): the %s of the response costs (first %d) does not fit it; raise its size or reserve less",
		p.reserveHeld, p.cfg.Limiters[by.li].Name, by.size, quantileName(p.cfg.Reserve.Estimate), p.reserveHeldFirst)}, true
}

// reconcile charges the limiters r took its cost from the difference
// between its response's real cost and its reservation (a 429 reveals
// none): the reservation made good, or given back.
func (p *pipeline) reconcile(now time.Duration, r *request) {
	if p.cfg.Reserve.Estimate == EstimateNone {
		return
	}
	var real int64
	if r.answer.OK {
		real = r.answer.Cost
		if p.cfg.Upstreams[r.host].ResponseCost != nil { // a host that reveals no cost says nothing of those that do
			p.instances[r.instance].estimate.observe(real)
		}
	}
	took := r.reserved
	r.reserved = 0
	if real == took {
		return
	}
	for _, li := range p.paths[r.path] {
		s := p.scope(li, r)
		if s < 0 || !p.countsCost(li) {
			continue
		}
		// The grants came no earlier than reservedAt: a window that began
		// after it may hold them yet is not given them back (the safe side).
		if a, ok := p.instances[r.instance].limiters[li][s].(settler); ok {
			a.Settle(now, r.reservedAt, took, real)
			p.instances[r.instance].activate(li, s)
			p.rec.LimiterCharged(now, li, s, float64(real-took))
		}
	}
}

// settler is a limiter that can be charged after the fact (models.Line
// over a models.Charger).
type settler interface {
	Settle(now, since time.Duration, took, real int64) bool
}

var _ settler = (*models.Line)(nil)

// pauseOnCost pauses r's host when the tokens family of its answer says
// fewer remain than the request took: at zero (a quota spent, or in debt
// for responses charged after the fact) until the reset; otherwise for the
// share of the reset the shortfall is of everything missing (limit −
// remaining), which is when a steadily refilling bucket holds enough again
// (a window gives its units back only at its end: the client resumes early
// and reads the headers again).
func (p *pipeline) pauseOnCost(now time.Duration, r *request, need int64) {
	a := &r.answer
	if a.RemainingCost < 0 || a.RemainingCost >= need || a.ResetCost <= 0 || a.LimitCost <= a.RemainingCost {
		return
	}
	wait := a.ResetCost
	if a.RemainingCost > 0 {
		short := float64(need-a.RemainingCost) / float64(a.LimitCost-a.RemainingCost)
		wait = time.Duration(min(1, short) * float64(a.ResetCost))
	}
	p.pauseHost(now, r, clock.Add(now-a.After, wait), false)
}
