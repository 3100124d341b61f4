package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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
		switch {
		case !t.required("rate"):
		case k.Whole:
			q.Rate, q.Per = t.serverRate("rate")
		default:
			q.Rate = t.limitRate("rate", 1, 0)
		}
	case "burst":
		if k.Whole {
			q.Burst = float64(t.integer("burst", 0, 0))
			d.atMost(t, "burst", int64(q.Burst), maxWhole)
			break
		}
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
		if !d.serverQuotaParam(t, q, key) && !d.envoyAdaptiveParam(t, q, key) {
			d.problem(t.key(key), "quota kind %s lists key %s, which nothing decodes", k.Name, key)
		}
	}
}

// serverQuotaParam decodes one key of the server quota kinds' own (nginx's
// nodelay and delay, limit_conn's conn, Envoy's bucket); false for a key it
// does not know.
func (d *decoder) serverQuotaParam(t *table, q *upstream.Quota, key string) bool {
	switch key {
	case "nodelay":
		q.NoDelay = t.boolean("nodelay", false)
	case "delay":
		q.Delay = t.integer("delay", 0, 0)
		d.atMost(t, "delay", q.Delay, maxWhole)
		if q.NoDelay && q.Delay > 0 {
			d.problem(t.key("delay"), "nodelay serves every request at once, so delay = %d says nothing; keep one of them", q.Delay)
		}
	case "conn":
		if t.required("conn") {
			q.Permits = t.integer("conn", 1, 1)
		}
	case "max_tokens":
		if t.required("max_tokens") {
			q.MaxTokens = t.integer("max_tokens", 1, 1)
			d.atMost(t, "max_tokens", q.MaxTokens, maxWhole)
		}
	case "tokens_per_fill":
		q.TokensPerFill = t.integer("tokens_per_fill", 1, 1)
		d.atMost(t, "tokens_per_fill", q.TokensPerFill, maxWhole)
	case "fill_interval":
		if t.required("fill_interval") {
			q.FillInterval = t.duration("fill_interval", time.Second, 0, true)
			d.atMost(t, "fill_interval", int64(q.FillInterval), int64(maxFillInterval))
		}
	default:
		return false
	}
	return true
}

// maxWhole bounds a server quota's counts (nginx's burst and delay,
// Envoy's tokens): far beyond any configuration, far from overflow.
const maxWhole = 1_000_000_000

// maxFillInterval bounds Envoy's fill_interval.
const maxFillInterval = 365 * 24 * time.Hour

// atMost reports key's value v of t when it is over hi.
func (d *decoder) atMost(t *table, key string, v, hi int64) {
	if v > hi {
		d.problem(t.key(key), "must be at most %d, got %d", hi, v)
	}
}

// serverRate reads a rate as nginx writes it, "50r/s" or "600r/m", or a
// whole number of requests per second: the rate per second and the unit
// it was written in.
func (t *table) serverRate(k string) (float64, time.Duration) {
	v, _ := t.get(k)
	n, per := int64(0), time.Second
	switch x := v.(type) {
	case int64:
		n = x
	case string:
		text := strings.TrimSpace(x)
		num, unit, ok := strings.Cut(text, "r/")
		if unit == "m" {
			per = time.Minute
		}
		var err error
		if n, err = strconv.ParseInt(num, 10, 64); err != nil || !ok || (unit != "s" && unit != "m") {
			t.d.problem(t.key(k), "%q is not a rate as nginx writes it (\"50r/s\", \"600r/m\": whole requests per second or minute)", x)
			return 1, time.Second
		}
	case float64:
		t.d.problem(t.key(k), "must be a whole number of requests per second (or \"50r/s\", \"600r/m\"), not the float %v", x)
		return 1, time.Second
	default:
		t.d.problem(t.key(k), "must be a rate such as \"50r/s\" or \"600r/m\", not %s", typeName(v))
		return 1, time.Second
	}
	if n < 1 || n > maxWhole {
		t.d.problem(t.key(k), "must be from 1 to %d requests per %s, got %d", maxWhole, map[time.Duration]string{time.Second: "second", time.Minute: "minute"}[per], n)
		return 1, time.Second
	}
	if per == time.Second {
		return float64(n), 0
	}
	return float64(n) / 60, per
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
			if k, _ := upstream.LookupQuota(q.Kind); k.Uncounted {
				d.problem(t.key("refused_counts"), "\"all\" counts refused requests past each quota's limit, which %s never does; use \"others\", or a %s or %s quota",
					q.Kind, kindname.QuotaFixedWindow, kindname.QuotaTokenBucket)
				break
			}
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
		out = append(out, d.quota(qt))
	}
	return out
}

// quota reads one quota table: its kind and the kind's keys
// (upstream.QuotaKinds). extra are the other keys the table may hold (a
// shared quota's name and upstreams), read by the caller.
func (d *decoder) quota(qt *table, extra ...string) Quota {
	var q upstream.Quota
	if qt.required("kind") {
		q.Kind = qt.enum("kind", "", upstream.QuotaKindNames()...)
	}
	valid := []string{"kind", "rate", "burst", "limit", "window", "permits", "schedule", "unit",
		"nodelay", "delay", "conn", "max_tokens", "tokens_per_fill", "fill_interval", "status",
		"sample_aggregate_percentile", "concurrency_limit_params", "min_rtt_calc_params"}
	if k, err := upstream.LookupQuota(q.Kind); err == nil {
		for _, key := range k.Keys {
			d.quotaParam(qt, &q, k, key)
		}
		q.Status = d.quotaStatus(qt, k)
		valid = append(append([]string{"kind"}, k.Keys...), "status")
	}
	qt.done(append(valid, extra...)...)
	return Quota(q)
}

// quotaStatus reads a quota's status: one of upstream.Statuses, 0 for the
// kind's default (which a resolved scenario leaves out).
func (d *decoder) quotaStatus(t *table, k upstream.QuotaKind) int {
	if t.refuseRange("status", "a status is a code the quota answers with, not a quantity") {
		return 0
	}
	status := t.integer("status", int64(k.DefaultStatus()), 0)
	if !slices.Contains(upstream.Statuses, int(status)) {
		d.problem(t.key("status"), "%d is not a status a quota refuses with (%s)", status, statusList(upstream.Statuses))
		return 0
	}
	if int(status) == k.DefaultStatus() {
		return 0
	}
	return int(status)
}

// statusList writes statuses as "429, 503 or 403".
func statusList(statuses []int) string {
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = strconv.Itoa(s)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// onLimit reads [client.on_limit]: the refusal statuses the client treats
// as a 429, nil for 429 alone (the default, left out of a resolved
// scenario).
func (d *decoder) onLimit(t *table) *OnLimit {
	defer t.done("statuses")
	v, ok := t.get("statuses")
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		d.problem(t.key("statuses"), "must be a non-empty array of statuses (%s), not %s", statusList(upstream.Statuses), typeName(v))
		return nil
	}
	var out []int
	for i, e := range arr {
		n, ok := e.(int64)
		switch {
		case !ok || !slices.Contains(upstream.Statuses, int(n)):
			d.problem(fmt.Sprintf("%s[%d]", t.key("statuses"), i), "must be %s, not %v", statusList(upstream.Statuses), e)
			return nil
		case slices.Contains(out, int(n)):
			d.problem(fmt.Sprintf("%s[%d]", t.key("statuses"), i), "%d is listed twice", n)
			return nil
		}
		out = append(out, int(n))
	}
	if slices.Equal(out, []int{429}) {
		return nil
	}
	return &OnLimit{Statuses: out}
}
