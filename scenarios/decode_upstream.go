package scenarios

import (
	"math"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/upstream"
)

// quotaParam decodes one key of a server quota of kind k; the quota kinds
// table (upstream.QuotaKinds) says which keys each kind reads, in order.
func (d *decoder) quotaParam(t *table, q *upstream.Quota, k upstream.QuotaKind, key string) {
	switch key {
	case "rate":
		if t.required("rate") {
			q.Rate = t.limitRate("rate", 1, 0)
		}
	case "burst":
		q.Burst = t.float("burst", math.Max(1, q.Rate), 1, false)
	case "limit":
		if t.required("limit") {
			q.Limit = t.integer("limit", 1, 1)
		}
		if k.ExactLog && q.Limit > models.MaxExactLog {
			d.problem(t.key("limit"), "%d is too large for an exact log", q.Limit)
		}
	case "window":
		if t.required("window") {
			q.Window = t.duration("window", time.Second, 0, true)
		}
	case "permits":
		if t.required("permits") {
			q.Permits = t.integer("permits", 1, 1)
		}
	case "unit":
		if t.enum("unit", "requests", "requests", upstream.UnitCost) == upstream.UnitCost {
			q.Unit = upstream.UnitCost
		}
	case "schedule":
		for i, st := range t.tables("schedule") {
			var step upstream.RateStep
			if st.required("at") {
				step.At = st.duration("at", 0, 0, false)
			}
			if st.required("rate") {
				step.Rate = st.limitRate("rate", 1, 0)
			}
			st.done("at", "rate")
			if i > 0 && step.At <= q.Schedule[i-1].At {
				d.problem(st.key("at"), "(%v) must come after the previous step's (%v)", step.At, q.Schedule[i-1].At)
			}
			q.Schedule = append(q.Schedule, step)
		}
	default:
		d.problem(t.key(key), "quota kind %s lists key %s, which nothing decodes", k.Name, key)
	}
}

func (d *decoder) upstream(t *table) Upstream {
	u := Upstream{RetryAfter: "1s", RejectLatency: Duration(5 * time.Millisecond)}
	if t.required("host") {
		u.Host = t.str("host", "")
		if u.Host == "" && d.intact(t.key("host")) { // not a string: said so
			d.problem(t.key("host"), "must name a host, or \"*\" for every host without its own block")
		}
	}
	if t.required("latency") {
		if lt := t.sub("latency"); lt != nil {
			u.Latency = d.latency(lt)
		}
	}
	u.LatencySchedule = d.latencySchedule(t)
	u.Quota = d.quotas(t)
	u.RetryAfter = t.str("retry_after", "1s")
	if ra := u.RetryAfter; ra != "" && ra != "reset" {
		if dur, err := parseDuration(ra); err != nil {
			d.problem(t.key("retry_after"), "%v (or \"\" for no header, \"reset\" for the quota's reset)", err)
		} else if dur < 0 {
			d.problem(t.key("retry_after"), "must not be negative")
		}
	}
	u.RejectLatency = Duration(t.duration("reject_latency", 5*time.Millisecond, 0, false))
	u.Workers = t.smallInt("workers", 0, 0, 1<<30)
	if t.has("response_cost") {
		c := d.cost(t, "response_cost", 0, 0)
		u.ResponseCost = &c
	}
	u.ResponseReserve = t.integer("response_reserve", 0, 0)
	if rc := t.enum("refused_counts", "none", "none", "others", "all"); rc != "none" {
		u.RefusedCounts = rc
	}
	if u.RefusedCounts == "all" && d.intact(t.key("quota")) {
		for _, q := range u.Quota {
			if quotaExactLog(q.Kind) {
				d.problem(t.key("refused_counts"), "\"all\" counts refused requests past each quota's limit, which a %s quota (an exact log of admissions) cannot; use \"others\", or a %s or %s quota",
					q.Kind, kindname.QuotaFixedWindow, kindname.QuotaTokenBucket)
				break
			}
		}
	}
	if len(u.Quota) == 0 && d.intact(t.key("quota")) {
		t.noEffect("the upstream has no quota, so it never refuses a request", map[string]bool{
			"retry_after": u.RetryAfter != "1s", "reject_latency": u.RejectLatency != Duration(5*time.Millisecond),
			"refused_counts": u.RefusedCounts != "", "response_reserve": u.ResponseReserve != 0})
	}
	t.done("host", "latency", "latency_schedule", "quota", "retry_after", "reject_latency", "workers", "response_cost", "refused_counts", "response_reserve")
	return u
}

// latencySchedule reads an upstream's [[upstream.latency_schedule]] steps,
// each after the one before.
func (d *decoder) latencySchedule(t *table) []LatencyStep {
	var schedule []LatencyStep
	for i, st := range t.tables("latency_schedule") {
		var step LatencyStep
		if st.required("at") {
			step.At = Duration(st.duration("at", 0, 0, false))
		}
		if st.required("latency") {
			if lt := st.sub("latency"); lt != nil {
				step.Latency = d.latency(lt)
			}
		}
		st.done("at", "latency")
		if i > 0 && step.At <= schedule[i-1].At {
			d.problem(st.key("at"), "(%v) must come after the previous step's (%v)", time.Duration(step.At), time.Duration(schedule[i-1].At))
		}
		schedule = append(schedule, step)
	}
	return schedule
}

// quotas reads an upstream's quota: one as a table, or several as an array
// of tables, each of its kind's keys (upstream.QuotaKinds).
func (d *decoder) quotas(t *table) []Quota {
	var out []Quota
	var qts []*table
	if v, ok := t.get("quota"); ok {
		switch v.(type) {
		case []any, []map[string]any:
			qts = t.tables("quota")
			if len(qts) == 0 {
				d.problem(t.key("quota"), "an empty list: give one quota or several, or leave the key out for none")
			}
		default:
			qts = []*table{t.sub("quota")}
		}
	}
	for _, qt := range qts {
		var q upstream.Quota
		if qt.required("kind") {
			q.Kind = qt.enum("kind", "", upstream.QuotaKindNames()...)
		}
		valid := []string{"kind", "rate", "burst", "limit", "window", "permits", "schedule", "unit"}
		if k, err := upstream.LookupQuota(q.Kind); err == nil {
			for _, key := range k.Keys {
				d.quotaParam(qt, &q, k, key)
			}
			valid = append([]string{"kind"}, k.Keys...)
		}
		qt.done(valid...)
		out = append(out, Quota(q))
	}
	return out
}
