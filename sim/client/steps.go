package client

import (
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// limFacts is what the pipeline asks of a limiter's configuration at every
// acquisition, held together: the configuration itself is large, and each
// question of it a multiplication and a load from a different line.
type limFacts struct {
	scope      Scope
	releases   bool // a concurrency limiter: its permits come back
	countsCost bool // it takes a request's cost rather than one unit
}

// step is one limiter of a path in one client instance, with what taking
// and giving back its permits asks, gathered when the pipeline is built: a
// request's stage reads one record rather than the configuration, the
// facts and the instance's tables in turn.
type step struct {
	li         int
	scope      Scope
	keyScope   []int             // host or tenant → scope slot, -1 = not covered; nil: the key itself
	limiters   []models.Limiter  // by scope slot
	releasers  []models.Releaser // by scope slot; nil when the permits do not come back
	active     []uint64          // scope slots that may be in use (the instance's set, shared)
	countsCost bool              // takes the request's cost, not one unit
	ownBound   bool              // every object enforces its max_waiting itself (a Line)
}

// slot returns request r's scope slot at the step's limiter, or -1 when
// the limiter does not cover r (as pipeline.scope does).
func (st *step) slot(r *request) int { return st.slotOf(int(r.host), int(r.tenant)) }

func (st *step) slotOf(host, tenant int) int {
	var k int
	switch st.scope {
	case PerHost:
		k = host
	case PerTenant:
		k = tenant
	default: // one scope for everyone
		return 0
	}
	if st.keyScope != nil {
		return st.keyScope[k]
	}
	return k
}

// newSteps builds instance in's step table from its limiter tables.
func (p *pipeline) newSteps(in *instance) {
	in.steps = make([][]step, len(p.paths))
	for pi, lims := range p.paths {
		for _, li := range lims {
			st := step{li: li, scope: p.facts[li].scope, keyScope: p.scopeOf[li], limiters: in.limiters[li], releasers: in.releasers[li],
				active: in.active[li], countsCost: p.facts[li].countsCost, ownBound: true}
			for _, lim := range st.limiters {
				if _, line := lim.(*models.Line); !line {
					st.ownBound = false
				}
			}
			in.steps[pi] = append(in.steps[pi], st)
		}
	}
	in.scoped = make([][]*step, len(p.paths))
	for pi := range in.steps {
		for i := range in.steps[pi] {
			if st := &in.steps[pi][i]; st.scope == PerHost || st.scope == PerTenant {
				in.scoped[pi] = append(in.scoped[pi], st)
			}
		}
	}
}

// newScopes maps each limiter's hosts or tenants to its scope slots and
// describes the limiters for the recorder.
func (p *pipeline) newScopes(hosts, tenants []string) []metrics.LimiterInfo {
	var infos []metrics.LimiterInfo
	for _, l := range p.cfg.Limiters {
		info := metrics.LimiterInfo{Name: l.Name, Kind: l.Kind.Name, Scope: l.Scope.String(), Releases: l.Kind.Releases(),
			Capacity: l.Kind.Capacity(l.Params), Cost: max(1, p.fixedCost), Family: l.Kind.Family.String(), Adaptive: l.Kind.Adaptive}
		p.adaptive = p.adaptive || l.Kind.Adaptive
		if l.Kind.Releases() || l.CountsRequests {
			info.Cost = 1
		} else if p.fixedCost == 0 || p.cfg.Reserve.Estimate != EstimateNone {
			info.Charged = true // the units vary by grant: recorded as taken
		}
		if !l.Kind.Releases() && !l.CountsRequests && p.fixedCost != 1 {
			info.Unit = upstream.UnitCost // a grant takes a request's cost, not one
		}
		var keys []string
		var idx []int
		switch l.Scope {
		case Global:
			keys = []string{"global"}
			idx = make([]int, max(len(hosts), len(tenants)))
		case Cluster:
			keys = []string{"cluster"}
			idx = make([]int, max(len(hosts), len(tenants)))
		case PerHost:
			idx = scopeIndex(hosts, l.Only, &keys)
		case PerTenant:
			idx = scopeIndex(tenants, l.Only, &keys)
		}
		info.Scopes = keys
		infos = append(infos, info)
		if identity(idx) || l.Scope == Global || l.Scope == Cluster {
			idx = nil // the key is the scope: no table to read per request
		}
		p.scopeOf = append(p.scopeOf, idx)
	}
	return infos
}

// identity reports whether idx maps each key to itself.
func identity(idx []int) bool {
	for i, s := range idx {
		if s != i {
			return false
		}
	}
	return true
}

// scope returns request r's scope at limiter li, or -1 when li does not
// cover r.
func (p *pipeline) scope(li int, r *request) int {
	if m := p.scopeOf[li]; m != nil {
		return m[p.scopeKey(li, r)]
	}
	return p.scopeKey(li, r)
}

// scopeIndex maps each of all (hosts or tenants) to its scope slot, or -1
// when only keys are limited and this one is not among them.
func scopeIndex(all, only []string, keys *[]string) []int {
	idx := make([]int, len(all))
	in := map[string]bool{}
	for _, k := range only {
		in[k] = true
	}
	for i, name := range all {
		if len(only) > 0 && !in[name] {
			idx[i] = -1
			continue
		}
		idx[i] = len(*keys)
		*keys = append(*keys, name)
	}
	return idx
}
