package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

// SharedQuota is a quota several upstreams count together (a top-level
// [[quota]]): one hourly quota spanning every endpoint of an API, while
// each endpoint keeps its own quotas. A request to a host it counts must
// pass it and the host's own quotas; one refused by any takes from none
// (unless the host's refused_counts says otherwise).
type SharedQuota struct {
	Name string
	// Upstreams are the hosts that count it; nil: every host.
	Upstreams []string
	Quota     Quota
}

// SharedQuotas are the scenario's shared quotas, written as an array of
// inline tables (which reads back as the [[quota]] blocks did).
type SharedQuotas []SharedQuota

// MarshalTOML renders the shared quotas as an array of inline tables: the
// name, the upstreams when not every host, then the quota's own keys.
func (qs SharedQuotas) MarshalTOML() ([]byte, error) {
	parts := make([]string, len(qs))
	for i, q := range qs {
		b, err := q.Quota.MarshalTOML()
		if err != nil {
			return nil, fmt.Errorf("quota %s: %w", q.Name, err)
		}
		head := "name = " + tomlString(q.Name)
		if q.Upstreams != nil {
			names := make([]string, len(q.Upstreams))
			for j, u := range q.Upstreams {
				names[j] = tomlString(u)
			}
			head += ", upstreams = [" + strings.Join(names, ", ") + "]"
		}
		parts[i] = "{ " + head + ", " + strings.TrimPrefix(string(b), "{ ")
	}
	return []byte("[" + strings.Join(parts, ", ") + "]"), nil
}

// sharedQuotas reads the top-level [[quota]] blocks.
func (d *decoder) sharedQuotas(t *table) SharedQuotas {
	qts := t.tables("quota")
	if len(qts) > maxListLength {
		d.problem("quota", "has %d entries; at most %d", len(qts), maxListLength)
		return nil
	}
	var out SharedQuotas
	for _, qt := range qts {
		var q SharedQuota
		q.Name = qt.name()
		if qt.has("upstreams") {
			q.Upstreams = qt.strings("upstreams")
			if len(q.Upstreams) == 0 && qt.emptyArray("upstreams") {
				d.problem(qt.key("upstreams"), "an empty list: name the hosts that count this quota, or leave the key out for every host")
			}
		}
		q.Quota = d.quota(qt, "name", "upstreams")
		if k, err := upstream.LookupQuota(q.Quota.Kind); err == nil && k.Gate {
			d.problem(qt.key("kind"), "%s is a filter in front of one server: put it in that [[upstream]]'s quota; a [[quota]] is shared by several", q.Quota.Kind)
		}
		out = append(out, q)
	}
	return out
}

// checkShared checks the shared quotas' names and the hosts they count,
// and the request cost against those that count cost.
func (d *decoder) checkShared(sc *Scenario, n *names) {
	seen := map[string]bool{}
	var logBytes float64
	for i, q := range sc.Quotas {
		key := fmt.Sprintf("quota[%d]", i)
		if q.Name != "" {
			if seen[q.Name] && d.intact(key+".name") {
				d.problem(key+".name", "duplicate quota name %q", q.Name)
			}
			seen[q.Name] = true
		}
		if n.hostsKnown && d.intact(key+".upstreams") {
			d.scopeNames(key+".upstreams", "host", q.Upstreams, n.hosts, n.hostNames)
		}
		d.sharedRefusals(sc, q, key)
		if quotaExactLog(q.Quota.Kind) && d.intact(key+".limit") {
			logBytes += exactLogBytes(q.Quota.Limit)
			if logBytes > maxLogBytes {
				d.problem(key+".limit", "an exact sliding window of %d would remember %.3g GiB of instants with the shared quotas before it (limit 1 GiB)", q.Quota.Limit, logBytes/(1<<30))
				return
			}
		}
		uq := upstream.Quota(q.Quota)
		if !uq.CountsCost() || !d.intact(key, "workload.cost") {
			continue
		}
		field := ".limit"
		if k, _ := upstream.LookupQuota(q.Quota.Kind); k.Has("burst") {
			field = ".burst"
		}
		reserve := extraCost{}
		for j, u := range sc.Upstreams {
			if u.ResponseReserve > reserve.n && q.counts(u.Host) {
				reserve = extraCost{u.ResponseReserve, fmt.Sprintf("upstream[%d].response_reserve", j)}
			}
		}
		d.checkCost(sc, key+field, "quota "+q.Name, uq.Size(), reserve, "")
	}
}

// sharedRefusals checks the shared quota q (at key) against the hosts
// that count it with refused_counts = "all", which counts refused
// requests past every quota's limit: a kind that never counts a refusal,
// or an exact log of admissions, cannot.
func (d *decoder) sharedRefusals(sc *Scenario, q SharedQuota, key string) {
	k, err := upstream.LookupQuota(q.Quota.Kind)
	if err != nil || !(k.Uncounted || k.ExactLog) {
		return
	}
	for i, u := range sc.Upstreams {
		if u.RefusedCounts == "all" && q.counts(u.Host) && d.intact(key+".kind") {
			d.problem(fmt.Sprintf("upstream[%d].refused_counts", i), "\"all\" counts refused requests past each quota's limit, which the shared quota %s (%s) cannot; use \"others\", or a %s or %s quota",
				q.Name, q.Quota.Kind, kindname.QuotaFixedWindow, kindname.QuotaTokenBucket)
		}
	}
}

// counts reports whether the quota counts host's requests ("*": some
// host it counts may be served by the upstream of every host).
func (q SharedQuota) counts(host string) bool {
	return q.Upstreams == nil || host == "*" || slices.Contains(q.Upstreams, host)
}

// shared returns the shared quotas for the model, each with the indices
// of the workload's hosts it counts.
func (sc *Scenario) shared() []upstream.SharedConfig {
	var out []upstream.SharedConfig
	for _, q := range sc.Quotas {
		c := upstream.SharedConfig{Name: q.Name, Quota: upstream.Quota(q.Quota)}
		for i, h := range sc.Workload.Hosts {
			if q.Upstreams == nil || slices.Contains(q.Upstreams, h.Name) {
				c.Hosts = append(c.Hosts, i)
			}
		}
		out = append(out, c)
	}
	return out
}
