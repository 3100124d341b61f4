package scenarios

import (
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// maxProjected bounds the requests a run may be projected to simulate
// (arrivals × attempts); beyond it the run is refused before it starts.
const maxProjected = 1e10

// maxIntervals bounds the intervals a run may be projected to record (the
// rows of its timeseries.csv, about a kilobyte each): a month of
// one-second intervals is 2.6 million.
const maxIntervals = 1e7

// crossCheck finds contradictions between keys and fills in warnings. It
// runs even when decoding found problems, so that one round of fixes can
// address both kinds, but skips each check one of whose keys was rejected
// (decoder.intact): a value replaced by its default, or a list missing an
// entry, would make a misleading contradiction.
func (d *decoder) crossCheck(sc *Scenario) {
	d.checking = true
	defer func() { d.checking = false }()
	d.checkRun(sc)
	n := d.knownNames(sc)
	d.checkLimiters(sc, n)
	d.checkPaths(sc, n)
	d.idleLimiters(sc)
	d.idleWorkloadCost(sc)
	d.checkUpstreams(sc, n)
	d.checkShared(sc, n)
	d.checkFootprint(sc)
	if len(d.probs) == 0 {
		sc.Warnings = append(sc.Warnings, orderWarnings(sc)...)
	}
}

// checkRun checks the run's length, the arrival process and the retry
// policy against each other.
func (d *decoder) checkRun(sc *Scenario) {
	r, w, c := &sc.Run, &sc.Workload, &sc.Client
	if d.intact("run.warmup", "run.duration") && r.Duration > 0 && r.Warmup >= r.Duration {
		d.problem("run.warmup", "(%v) must be shorter than run.duration (%v)", time.Duration(r.Warmup), time.Duration(r.Duration))
	}
	if d.intact("workload.arrival", "run.requests") && w.Arrival == "backlog" && r.Requests == 0 {
		d.problem("run.requests", "is required with workload.arrival = \"backlog\" (how many targets are ready at t = 0)")
	}
	if d.intact("workload.arrival", "run.requests", "run.duration") && w.Arrival != "backlog" && w.Arrival != "trace" && r.Duration == 0 && r.Requests == 0 {
		d.problem("run", "needs run.requests or run.duration")
	}
	if w.Arrival == "ramp" && w.Ramp == 0 && d.intact("workload.arrival", "workload.ramp", "run.duration") {
		if r.Duration == 0 {
			d.problem("workload.ramp", "is required when run.duration is not set")
		} else {
			w.Ramp = r.Duration
		}
	}
	if d.intact("client.retry.cap", "client.retry.base") && c.Retry.Cap < c.Retry.Base {
		d.problem("client.retry.cap", "(%v) must not be below client.retry.base (%v)", time.Duration(c.Retry.Cap), time.Duration(c.Retry.Base))
	}
	// Projected work, refused before anything is allocated.
	if d.intact("run.requests", "run.duration", "run.replications", "workload.arrival", "workload.rate", "workload.rate_to",
		"workload.tenants", "client.retry.attempts") {
		d.checkProjected(sc)
	}
}

// names are the hosts, tenants and limiters a scenario declares, for
// checking the references to them. A list is known only when it was read
// and every entry has its name: a missing name might be the one a
// reference means.
type names struct {
	hosts, tenants           map[string]bool
	hostNames, tenantNames   []string
	hostsKnown, tenantsKnown bool
	badHost                  map[string]bool // hosts whose name has a problem
	limiters                 map[string]int  // by name: the last index
	limiterNames             []string        // for messages, each once
	limitersKnown            bool
}

func (d *decoder) knownNames(sc *Scenario) *names {
	w, c := &sc.Workload, &sc.Client
	n := &names{hosts: make(map[string]bool, len(w.Hosts)), tenants: make(map[string]bool, len(w.Tenants)),
		badHost: map[string]bool{}, limiters: map[string]int{}}
	n.hostsKnown, n.hostNames = d.nameSet("workload.hosts", w.Hosts, n.hosts)
	for i, h := range w.Hosts {
		if !d.intact(fmt.Sprintf("workload.hosts[%d].name", i)) {
			n.badHost[h.Name] = true
		}
	}
	n.tenantsKnown, n.tenantNames = d.nameSet("workload.tenants", w.Tenants, n.tenants)
	n.limitersKnown = d.listIntact("client.limiter")
	for i, l := range c.Limiters {
		n.limitersKnown = n.limitersKnown && l.Name != ""
		n.limiters[l.Name] = i
	}
	for i, l := range c.Limiters {
		if n.limiters[l.Name] == i {
			n.limiterNames = append(n.limiterNames, l.Name)
		}
	}
	return n
}

// nameSet fills set with the names of list (at key) and returns whether
// the list is known and its names, each once, in order.
func (d *decoder) nameSet(key string, list []Weighted, set map[string]bool) (known bool, names []string) {
	known = d.listIntact(key)
	names = make([]string, 0, len(list))
	for _, e := range list {
		known = known && e.Name != ""
		if !set[e.Name] {
			names = append(names, e.Name)
		}
		set[e.Name] = true
	}
	return known, names
}

// checkLimiters checks each limiter against the request cost and the hosts
// and tenants it names.
func (d *decoder) checkLimiters(sc *Scenario, n *names) {
	counting := 0 // limiters that count cost
	for i, l := range sc.Client.Limiters {
		key := fmt.Sprintf("client.limiter[%d]", i)
		kind, _ := models.LookupKind(l.Kind)
		if l.Kind != "" && !kind.Releases() && l.Unit != "requests" {
			counting++
			if r := sc.Client.Reserve; r != nil && (!kind.Chargeable || l.Scope == "cluster") && d.intact(key+".kind", key+".scope") {
				d.problem("client.reserve", "limiter %s (kind %s, scope %s) counts cost but cannot be charged the difference when a response arrives: reservations need a %s limiter (or unit = \"requests\" on this one)",
					l.Name, l.Kind, l.Scope, strings.Join(chargeableKinds(), ", "))
			}
		}
		switch {
		case l.Kind == "" || l.Unit == "requests":
		case kind.Family == models.RateFamily && kind.Has("burst"):
			// The default burst follows the rate.
			if d.intact(key+".kind", key+".rate", key+".burst", "workload.cost", "client.reserve") {
				d.checkCost(sc, key+".burst", "limiter "+l.Name+"'s burst", l.Burst, clientReserve(sc), l.Name)
			}
		case kind.Family == models.WindowFamily:
			if d.intact(key+".kind", key+".limit", "workload.cost", "client.reserve") {
				d.checkCost(sc, key+".limit", "limiter "+l.Name+"'s limit", float64(l.Limit), clientReserve(sc), l.Name)
			}
		}
		// A rejected element is left out of the list: the indices after it
		// would be wrong.
		if n.hostsKnown && d.intact(key+".hosts") {
			d.scopeNames(key+".hosts", "host", l.Hosts, n.hosts, n.hostNames)
		}
		if n.tenantsKnown && d.intact(key+".tenants") {
			d.scopeNames(key+".tenants", "tenant", l.Tenants, n.tenants, n.tenantNames)
		}
	}
	if sc.Client.Reserve != nil && counting == 0 && d.intact("client.limiter") {
		d.problem("client.reserve", "no client limiter counts cost (every one has unit = \"requests\" or is a concurrency limit): there is nothing to reserve on")
	}
}

// costSamples is how many draws of a cost distribution are checked against
// a limit, with a fixed seed: shares above 1 in 1,000 are reported.
const costSamples = 20000

// extraCost is what a request takes beyond its own cost (n, set by key):
// a reservation for its response.
type extraCost struct {
	n   int64
	key string
}

// clientReserve is the client's fixed reservation, if it reserves.
func clientReserve(sc *Scenario) extraCost {
	if r := sc.Client.Reserve; r != nil {
		return extraCost{r.Fixed, "client.reserve.fixed"}
	}
	return extraCost{}
}

// chargeableKinds names the limiter kinds a reservation can be reconciled
// on.
func chargeableKinds() []string {
	var out []string
	for _, k := range models.Kinds() {
		if k.Chargeable {
			out = append(out, k.Name)
		}
	}
	return out
}

// checkPaths checks the request paths' names and the limiters they take.
func (d *decoder) checkPaths(sc *Scenario, n *names) {
	seenPath := map[string]bool{}
	for i, p := range sc.Client.Paths {
		key := fmt.Sprintf("client.path[%d]", i)
		if p.Name != "" {
			if seenPath[p.Name] && d.intact(key+".name") {
				d.problem(key+".name", "duplicate path name %q", p.Name)
			}
			seenPath[p.Name] = true
		}
		if !n.limitersKnown || !d.intact(key+".limiters") {
			continue
		}
		used := map[string]bool{}
		for j, name := range p.Limiters {
			if _, ok := n.limiters[name]; !ok {
				d.unknownName(fmt.Sprintf("%s.limiters[%d]", key, j), "limiter", name, n.limiterNames)
			} else if used[name] {
				d.problem(fmt.Sprintf("%s.limiters[%d]", key, j), "names limiter %q twice", name)
			}
			used[name] = true
		}
	}
}

// idleLimiters warns of limiters no path takes: with paths, a request
// takes only its path's limiters.
func (d *decoder) idleLimiters(sc *Scenario) {
	if len(sc.Client.Paths) == 0 {
		return
	}
	taken := map[string]bool{}
	for _, p := range sc.Client.Paths {
		for _, name := range p.Limiters {
			taken[name] = true
		}
	}
	for i, l := range sc.Client.Limiters {
		if !taken[l.Name] {
			d.idle = append(d.idle, metrics.Warning{Text: fmt.Sprintf("client.limiter[%d] (%s) has no effect: no [[client.path]] takes it", i, l.Name)})
		}
	}
}

// checkUpstreams checks there is one upstream per host, or a "*" default,
// and the request cost against the quotas that count it.
func (d *decoder) checkUpstreams(sc *Scenario, n *names) {
	reveals := false
	for i, u := range sc.Upstreams {
		reveals = reveals || u.ResponseCost != nil
		for k, q := range u.Quota {
			key := fmt.Sprintf("upstream[%d].quota", i)
			if len(u.Quota) > 1 {
				key = fmt.Sprintf("%s[%d]", key, k)
			}
			if !upstream.Quota(q).CountsCost() || !d.intact(key, "workload.cost", fmt.Sprintf("upstream[%d].response_reserve", i)) {
				continue
			}
			field := ".limit"
			if k, _ := upstream.LookupQuota(q.Kind); k.Has("burst") {
				field = ".burst"
			}
			d.checkCost(sc, key+field, fmt.Sprintf("upstream %s's cost quota", u.Host), upstream.Quota(q).Size(),
				extraCost{u.ResponseReserve, fmt.Sprintf("upstream[%d].response_reserve", i)}, "")
		}
	}
	if sc.Client.Reserve != nil && !reveals && d.listIntact("upstream") {
		sc.Warnings = append(sc.Warnings, metrics.Warning{Text: "client.reserve: no upstream reveals a response cost (response_cost): every reservation is given back whole when its answer arrives"})
	}
	covered := map[string]bool{}
	upstreamsKnown := d.listIntact("upstream")
	for i, u := range sc.Upstreams {
		key := fmt.Sprintf("upstream[%d].host", i)
		if u.Host == "" || !d.intact(key) {
			upstreamsKnown = false // it might be meant for any host
			continue
		}
		switch {
		case covered[u.Host]:
			d.problem(key, "duplicate upstream for host %q", u.Host)
		case u.Host != "*" && !n.hosts[u.Host] && n.hostsKnown:
			d.unknownName(key, "host", u.Host, append(slices.Clip(n.hostNames), "*"))
		}
		covered[u.Host] = true
	}
	if upstreamsKnown && n.hostsKnown && !covered["*"] {
		for _, h := range n.hostNames {
			if !covered[h] && !n.badHost[h] {
				d.problem("upstream", "no [[upstream]] for host %q (add one, or one with host = \"*\")", h)
			}
		}
	}
}

// checkProjected refuses a run projected to simulate too many attempts.
func (d *decoder) checkProjected(sc *Scenario) {
	r, w, c := &sc.Run, &sc.Workload, &sc.Client
	arrivals := float64(r.Requests)
	rate := w.Rate
	for _, t := range w.Tenants {
		rate += t.Rate
	}
	if r.Duration > 0 && rate > 0 {
		peak := max(rate, w.RateTo)
		byTime := peak * time.Duration(r.Duration).Seconds()
		if arrivals == 0 || byTime < arrivals {
			arrivals = byTime
		}
	}
	if proj := arrivals * float64(c.Retry.Attempts) * float64(r.Replications); proj > maxProjected {
		d.problem("run", "projects %.3g attempts (arrivals × client.retry.attempts × run.replications), over the limit of %.0g", proj, float64(maxProjected))
	}
	// The simulated span: run.duration, or the requests at the rate,
	// whichever ends the run first.
	span := time.Duration(r.Duration).Seconds()
	if r.Requests > 0 && rate > 0 {
		if byRequests := float64(r.Requests) / rate; span == 0 || byRequests < span {
			span = byRequests
		}
	}
	if iv := time.Duration(r.Interval).Seconds(); iv > 0 {
		if rows := span / iv; rows > maxIntervals {
			d.problem("run.interval", "projects %.0f intervals (%s simulated ÷ run.interval %s), over the limit of %.0f million: each is a row of timeseries.csv and a step of the run; lengthen run.interval or shorten the run",
				rows, spanSeconds(span), time.Duration(r.Interval), maxIntervals/1e6)
		}
	}
}

// spanSeconds writes a simulated span of s seconds: as a duration, or in
// days or years when a duration would be unreadable (or overflow: a
// trillion requests at 80/s are 396 years, past a Duration's 292).
func spanSeconds(s float64) string {
	const day, year = 86400.0, 365.25 * 86400
	switch {
	case s >= 2*year:
		return fmt.Sprintf("%.3g years", s/year)
	case s >= 2*day:
		return fmt.Sprintf("%.0f days", s/day)
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// Bounds on what a scenario's structure may allocate before it runs.
const (
	maxLimiterObjects = 1_000_000 // limiter instances: limiters × scopes × client instances
	maxLogBytes       = 1 << 30   // sliding-window logs, 8 bytes per remembered start
	maxHostSlots      = 10_000_000
)

// checkFootprint refuses scenarios whose limiters alone would exhaust
// memory: every scoped limiter exists once per host or tenant per instance,
// and an exact sliding window remembers `limit` instants.
//
// A limiter or quota with a rejected key is left out, so the totals are
// lower bounds: one over its limit is over it whatever the rejected values.
func (d *decoder) checkFootprint(sc *Scenario) {
	c, w := &sc.Client, &sc.Workload
	if !d.intact("client.instances") || !d.listIntact("workload.hosts") || !d.listIntact("workload.tenants") {
		return
	}
	inst := float64(c.Instances)
	var objects, logBytes float64
	for i, l := range c.Limiters {
		key := fmt.Sprintf("client.limiter[%d]", i)
		if !d.intact(key+".kind", key+".scope", key+".hosts", key+".tenants", key+".limit") {
			continue
		}
		scopes := 1.0
		switch l.Scope {
		case "host":
			scopes = float64(len(w.Hosts))
			if len(l.Hosts) > 0 {
				scopes = float64(len(l.Hosts))
			}
		case "tenant":
			scopes = float64(len(w.Tenants))
			if len(l.Tenants) > 0 {
				scopes = float64(len(l.Tenants))
			}
		}
		objects += scopes * inst
		if kind, _ := models.LookupKind(l.Kind); kind.ExactLog {
			logBytes += exactLogBytes(l.Limit) * scopes * inst
			if logBytes > maxLogBytes {
				d.problem(fmt.Sprintf("client.limiter[%d].limit", i), "an exact sliding window of %d per %s, %d scopes × %d instances, would remember %.3g GiB of instants (limit 1 GiB): use %s", l.Limit, time.Duration(l.Window), int(scopes), c.Instances, logBytes/(1<<30), kindname.SlidingWindowCounter)
				return
			}
		}
	}
	if objects > maxLimiterObjects {
		d.problem("client.limiter", "%.3g limiter instances (limiters × scopes × %d client instances) is over the limit of %d", objects, c.Instances, maxLimiterObjects)
	}
	for i, u := range sc.Upstreams {
		for _, q := range u.Quota {
			if !quotaExactLog(q.Kind) || !d.intact(fmt.Sprintf("upstream[%d].quota", i)) {
				continue
			}
			logBytes += exactLogBytes(q.Limit) * float64(len(w.Hosts))
			if logBytes > maxLogBytes {
				d.problem(fmt.Sprintf("upstream[%d].quota.limit", i), "an exact sliding window of %d per host would remember %.3g GiB of instants (limit 1 GiB)", q.Limit, logBytes/(1<<30))
				return
			}
		}
	}
	if slots := inst * float64(len(w.Hosts)); slots > maxHostSlots {
		d.problem("client.instances", "%d instances × %d hosts is over the limit of %d", c.Instances, len(w.Hosts), maxHostSlots)
	}
}

// quotaExactLog reports whether quota kind name remembers every start.
func quotaExactLog(name string) bool {
	k, err := upstream.LookupQuota(name)
	return err == nil && k.ExactLog
}

// exactLogBytes is the most an exact sliding-window log of limit starts
// holds: its ring doubles from 8 entries up to the next power of two ≥
// limit, 8 bytes an entry.
func exactLogBytes(limit int64) float64 {
	return 8 * float64(max(8, uint64(1)<<bits.Len64(uint64(max(limit, 1)-1))))
}

// scopeNames checks a limiter's list of the hosts or tenants (what) it is
// for, at key: each one known, and named once.
func (d *decoder) scopeNames(key, what string, names []string, known map[string]bool, valid []string) {
	seen := make(map[string]bool, len(names))
	for j, name := range names {
		switch {
		case !known[name]:
			d.unknownName(fmt.Sprintf("%s[%d]", key, j), what, name, valid)
		case seen[name]:
			d.problem(fmt.Sprintf("%s[%d]", key, j), "names %s %q twice", what, name)
		}
		seen[name] = true
	}
}

func (d *decoder) unknownName(key, what, name string, valid []string) {
	if s, ok := nearest(name, valid); ok {
		d.problem(key, "names no %s %q (did you mean %q?)", what, name, s)
	} else {
		d.problem(key, "names no %s %q (known: %s)", what, name, strings.Join(valid, ", "))
	}
}

// maxOrderWarnings bounds the warnings about concurrency limiters taken
// before rate limiters.
const maxOrderWarnings = 20

// loadData reads trace and samples files, relative to the scenario's
// folder: a trace in ascending order is checked here and read again by
// each run as it goes (see readTrace).
func (d *decoder) loadData(sc *Scenario, dir string) {
	resolve := func(p string) (string, error) {
		if !filepath.IsLocal(p) {
			return "", fmt.Errorf("%q must be a relative path inside the scenario's folder (no absolute path, no \"..\")", p)
		}
		sc.addData(p)
		return filepath.Join(dir, p), nil
	}
	if sc.Workload.Arrival == "trace" {
		path, err := resolve(sc.Workload.Trace)
		var tf *traceFile
		if err == nil {
			tf, err = d.ld.trace(path)
		}
		if err != nil {
			d.problem("workload.trace", "%v", err)
		} else {
			if tf.sorted != nil {
				sc.Workload.TraceTimes = tf.sorted
			} else {
				sc.Workload.TraceStream = tf
			}
			if end := time.Duration(sc.Run.Duration); end > 0 && tf.least >= end {
				d.problem("workload.trace", "every instant (the first at %v) is at or after run.duration (%v): nothing would arrive", tf.least, end)
			}
		}
	}
	for i := range sc.Upstreams {
		d.loadSamples(&sc.Upstreams[i].Latency, fmt.Sprintf("upstream[%d].latency", i), resolve)
	}
}
