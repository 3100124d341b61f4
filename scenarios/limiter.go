package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
)

// limiter reads one [[client.limiter]] table: the keys every limiter has,
// then its kind's keys as the kinds table (models.Kinds) declares them.
func (d *decoder) limiter(t *table) Limiter {
	l := Limiter{Scope: "global"}
	l.Name = t.name()
	if t.required("kind") {
		l.Kind = t.enum("kind", "", models.KindNames()...)
	}
	l.Scope = t.enum("scope", "global", "global", "host", "tenant", "cluster")
	valid := []string{"name", "kind", "scope", "max_waiting"}
	if l.Scope == "cluster" {
		valid = append(valid, d.clusterStore(t, &l)...)
	}
	if l.Scope == "host" {
		valid = append(valid, "hosts")
		l.Hosts = t.strings("hosts")
		if t.emptyArray("hosts") {
			d.problem(t.key("hosts"), "lists no host: name the hosts the limiter is for, or leave hosts out for every host")
		}
	}
	if l.Scope == "tenant" {
		valid = append(valid, "tenants")
		l.Tenants = t.strings("tenants")
		if t.emptyArray("tenants") {
			d.problem(t.key("tenants"), "lists no tenant: name the tenants the limiter is for, or leave tenants out for every tenant")
		}
	}
	if t.has("max_waiting") {
		l.MaxWaiting = models.AtMost(t.smallInt("max_waiting", 0, 0, maxCount))
	}
	allKeys := limiterKeys()
	if kind, err := models.LookupKind(l.Kind); err == nil {
		if !kind.Releases() {
			valid = append(valid, "unit")
			if t.enum("unit", "cost", "cost", "requests") == "requests" {
				l.Unit = "requests"
			}
		}
		for _, key := range kind.Keys {
			d.limiterKey(t, &l.Params, kind, key)
		}
		valid = append(valid, kind.KeyNames()...)
	}
	t.known = allKeys
	t.ctx = fmt.Sprintf("with kind = %q, scope = %q", l.Kind, l.Scope)
	if t.bad["kind"] || t.bad["scope"] || l.Kind == "" {
		valid = allKeys // the choice is wrong: its keys are not
	}
	t.done(valid...)
	return l
}

// maxStoreErrors is the greatest share of store calls that can fail.
const maxStoreErrors = 1.0

// KeyMax is the greatest value key (as --set names it) may have, and
// whether it has one: a share's 1 (a bucket's initial_fill, a cluster
// limiter's store_errors), the most instances.
func KeyMax(key string) (float64, bool) {
	if key == "client.instances" {
		return maxInstances, true
	}
	if rest, ok := strings.CutPrefix(key, "client.limiter."); ok {
		if _, field, ok := strings.Cut(rest, "."); ok {
			if field == "store_errors" {
				return maxStoreErrors, true
			}
			return models.KeyMax(field)
		}
	}
	return 0, false
}

// clusterStore reads the keys of a limiter with scope = "cluster": one
// limit for every instance, kept in a shared store (GCRA, as
// go-redis/redis_rate keeps it in Redis). It returns the keys it reads.
func (d *decoder) clusterStore(t *table, l *Limiter) []string {
	l.StoreRTT = t.jitter("store_rtt", "1ms", false)
	l.StoreErrors = t.float("store_errors", 0, 0, false)
	if l.StoreErrors > maxStoreErrors {
		d.problem(t.key("store_errors"), "is a probability: at most %v, got %v", maxStoreErrors, l.StoreErrors)
	}
	l.OnStoreError = t.enum("on_store_error", "allow", "allow", "deny")
	l.SyncInterval = Duration(t.duration("sync_interval", 0, time.Millisecond, false))
	if l.Kind != "" && l.Kind != kindname.GCRA && !t.bad["kind"] {
		d.problem(t.key("scope"), "\"cluster\" keeps a GCRA in the shared store, as go-redis/redis_rate does: use kind = %q (kind is %q)", kindname.GCRA, l.Kind)
	}
	return []string{"store_rtt", "store_errors", "on_store_error", "sync_interval"}
}

// limiterKey reads one key of a limiter of kind k into p: required or
// defaulted, in range, then checked against the keys read before it, all
// as key declares.
func (d *decoder) limiterKey(t *table, p *models.Params, k models.Kind, key models.Key) {
	if key.OnlyWritten && !t.has(key.Name) {
		return
	}
	if !key.Required || t.required(key.Name) {
		def := key.Default
		if key.DefaultOf != nil {
			def = key.DefaultOf(p, k)
		}
		switch f := key.Field(p).(type) {
		case *float64:
			*f = d.number(t, key, k, def.(float64))
		case **float64:
			v := d.number(t, key, k, def.(float64))
			*f = &v
		case *int64:
			*f = t.integer(key.Name, def.(int64), key.Min.(int64))
		case *time.Duration:
			*f = t.duration(key.Name, def.(time.Duration), key.Min.(time.Duration), key.Open)
		case *models.Jitter:
			*f = t.jitter(key.Name, def.(string), key.UpTo).model()
		default:
			// TestEveryKindKeyDecodes keeps the kinds table and this switch in step.
			d.problem(t.key(key.Name), "limiter kind %s declares key %s of a type nothing decodes (%T)", k.Name, key.Name, f)
		}
	}
	if key.Check != nil {
		if at, msg := key.Check(p, k); msg != "" {
			d.problem(t.key(at), "%s", msg)
		}
	}
}

// number reads a number key: finite, in its range, and valid as the key
// says (else the default, with a problem).
func (d *decoder) number(t *table, key models.Key, k models.Kind, def float64) float64 {
	v := t.float(key.Name, def, key.Min.(float64), key.Open)
	if key.Valid != nil && t.has(key.Name) {
		if msg := key.Valid(v, k); msg != "" {
			d.problem(t.key(key.Name), "%s", msg)
			return def
		}
	}
	return v
}

// limitRate reads a quota's rate: at least models.MinRate (a problem is
// reported, and def returned, otherwise; lo is the bound float checks,
// open).
func (t *table) limitRate(k string, def, lo float64) float64 {
	v := t.float(k, def, lo, true)
	if msg := models.RateTooSlow(v); t.has(k) && msg != "" {
		t.d.problem(t.key(k), "%s", msg)
		return def
	}
	return v
}

// limiterKeys is every key a limiter table can hold: the common keys, then
// each kind's parameter keys in the kinds table's order.
func limiterKeys() []string {
	keys := []string{"name", "kind", "scope", "unit", "hosts", "tenants", "max_waiting"}
	for _, k := range models.Kinds() {
		for _, key := range k.Keys {
			if !slices.Contains(keys, key.Name) {
				keys = append(keys, key.Name)
			}
		}
	}
	return keys
}
