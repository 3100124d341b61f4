package scenarios

import (
	"fmt"
	"slices"
	"time"
)

func (d *decoder) client(c *Client, t *table) {
	c.Instances, c.Ingest = 1, "tasks"
	c.On429 = On429{Pause: "host", PauseCheck: "entry", PauseEnd: "longest", HonorRetryAfter: true}
	c.On429.Fallback, _ = parseJitter("uniform(1s,5s)", false)
	c.On429.ResumeJitter, _ = parseJitter("0s", true)
	c.Retry = Retry{Attempts: 1, Backoff: "exponential", Base: Duration(time.Second), Cap: Duration(30 * time.Second), Jitter: "full"}
	if t != nil && writtenSDK(t) != "" {
		// An SDK spaces its retries with its own back-off and reads no
		// Retry-After: no host pause, unless [client.on_429] says so.
		c.On429.Pause, c.On429.HonorRetryAfter = "none", false
	}
	if t == nil {
		return // every client key has a default
	}
	c.Instances = t.smallInt("instances", 1, 1, maxInstances)
	if t.has("instance_weights") {
		c.InstanceWeights = t.floats("instance_weights")
		if n := len(c.InstanceWeights); n != c.Instances && !t.bad["instances"] {
			d.problem(t.key("instance_weights"), "has %d weights for %d instances: give one per instance", n, c.Instances)
		}
	}
	c.Ingest = t.enum("ingest", "tasks", "queue", "tasks")
	if c.Ingest == "queue" {
		qc := t.smallInt("queue_capacity", 500, 0, maxCount)
		c.QueueCapacity = &qc
		c.QueueFull = t.enum("queue_full", "block", "block", "reject")
		c.Workers = t.smallInt("workers", 16, 1, 1<<20)
	} else if !t.bad["ingest"] {
		for _, k := range []string{"queue_capacity", "queue_full", "workers"} {
			if t.has(k) {
				t.seen.add(k)
				d.problem(t.key(k), "applies only with ingest = \"queue\" (ingest is %q)", c.Ingest)
			}
		}
	}
	if t.has("max_waiting") {
		d.clientMaxWaiting(c, t)
	}
	c.AcquireTimeout = Duration(t.duration("acquire_timeout", 0, 0, false))
	c.RequestTimeout = Duration(t.duration("request_timeout", 0, 0, false))
	if c.RequestTimeout > 0 && c.AcquireTimeout > c.RequestTimeout {
		// An acquisition starts no earlier than its request, so the
		// request's deadline always comes first. (At equal values the
		// first acquisition's give-up is counted as an acquire timeout.)
		t.noEffect(fmt.Sprintf("it is longer than client.request_timeout (%v), which ends the request first", time.Duration(c.RequestTimeout)),
			map[string]bool{"acquire_timeout": true})
	}
	if !d.limitersAndPaths(c, t) {
		return
	}
	if h := t.sub("headers"); h != nil {
		c.Headers = &Headers{PauseAtZero: h.boolean("pause_at_zero", false), SlowBelow: h.integer("slow_below", 0, 0)}
		h.done("pause_at_zero", "slow_below")
	}
	if r := t.sub("reserve"); r != nil {
		c.Reserve = &Reserve{Estimate: r.enum("estimate", "p90", "fixed", "p50", "p90")}
		if c.Reserve.Estimate == "fixed" {
			if r.required("fixed") {
				c.Reserve.Fixed = r.integer("fixed", 0, 0)
			}
		} else {
			c.Reserve.Fixed = r.integer("fixed", 0, 0)
		}
		r.done("estimate", "fixed")
	}
	if o := t.sub("on_429"); o != nil {
		d.on429(&c.On429, o, c.Headers != nil && c.Headers.PauseAtZero)
	}
	if r := t.sub("retry"); r != nil {
		d.retry(&c.Retry, r, time.Duration(c.RequestTimeout))
	}
	if o := t.sub("on_limit"); o != nil {
		c.OnLimit = d.onLimit(o)
	}
	if t.bad["ingest"] {
		t.seen.add("queue_capacity", "queue_full", "workers")
	}
	t.done("instances", "instance_weights", "ingest", "queue_capacity", "queue_full", "workers", "max_waiting", "acquire_timeout",
		"request_timeout", "limiter", "path", "on_429", "retry", "headers", "reserve", "on_limit")
}

// limitersAndPaths reads [[client.limiter]] and [[client.path]]; false
// when a list is too long to read.
func (d *decoder) limitersAndPaths(c *Client, t *table) bool {
	names := map[string]bool{}
	lts, pts := t.tables("limiter"), t.tables("path")
	for _, list := range []struct {
		key string
		n   int
	}{{"limiter", len(lts)}, {"path", len(pts)}} {
		if list.n > maxListLength {
			d.problem(t.key(list.key), "has %d entries; at most %d", list.n, maxListLength)
			return false
		}
	}
	for _, lt := range lts {
		l := d.limiter(lt)
		if l.Name != "" {
			if names[l.Name] && !d.rejected[lt.key("name")] {
				d.problem(lt.key("name"), "duplicate limiter name %q", l.Name)
			}
			names[l.Name] = true
		}
		c.Limiters = append(c.Limiters, l)
	}
	for _, pt := range pts {
		var p Path
		p.Name = pt.name()
		p.Weight = pt.float("weight", 1, 0, true)
		if pt.required("limiters") {
			p.Limiters = pt.strings("limiters")
		}
		if pt.has("cost") {
			c := d.cost(pt, "cost", 1, 1)
			p.Cost = &c
		}
		if pt.has("method") {
			p.Method = d.method(pt)
		}
		pt.done("name", "weight", "limiters", "cost", "method")
		c.Paths = append(c.Paths, p)
	}
	return true
}

// httpMethods are the methods a path may name (RFC 9110, section 9, and
// PATCH, RFC 5789), as HTTP writes them: in capitals.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

// method reads a path's method: one of httpMethods.
func (d *decoder) method(t *table) string {
	m := t.str("method", "")
	if v, _ := t.get("method"); v == any(m) && !slices.Contains(httpMethods, m) {
		d.unknownName(t.key("method"), "HTTP method", m, httpMethods)
		return ""
	}
	return m
}

// on429 reads [client.on_429]. pauseAtZero: the rate-limit headers pause
// the host too (headers.pause_at_zero), so there are host pauses to check
// and to wait out whatever pause says.
func (d *decoder) on429(c *On429, o *table, pauseAtZero bool) {
	c.Pause = o.enum("pause", c.Pause, "host", "caller", "none")
	c.PauseCheck = o.enum("pause_check", "entry", "entry", "send")
	c.PauseEnd = o.enum("pause_end", "longest", "longest", "latest")
	c.HonorRetryAfter = o.boolean("honor_retry_after", c.HonorRetryAfter)
	c.Fallback = o.jitter("fallback", "uniform(1s,5s)", false)
	c.ResumeJitter = o.jitter("resume_jitter", "0s", true)
	o.done("pause", "pause_check", "pause_end", "honor_retry_after", "fallback", "resume_jitter")
	if o.bad["pause"] || c.Pause == "host" {
		return
	}
	o.noEffect(fmt.Sprintf("pause is %q, so a 429 never pauses the host", c.Pause), map[string]bool{"pause_end": c.PauseEnd != "longest"})
	if !pauseAtZero {
		o.noEffect(fmt.Sprintf("pause is %q and the rate-limit headers pause no host (headers.pause_at_zero), so there is no host pause to check", c.Pause),
			map[string]bool{"pause_check": c.PauseCheck != "entry"})
	}
	if c.Pause == "none" {
		o.noEffect("pause is \"none\": a retry waits out the Retry-After, or else the retry back-off, never the fallback pause",
			map[string]bool{"fallback": c.Fallback.Kind != "uniform" || c.Fallback.A != time.Second || c.Fallback.B != 5*time.Second})
		if !pauseAtZero {
			o.noEffect("pause is \"none\" and the rate-limit headers pause no host, so no pause ends for the jitter to spread",
				map[string]bool{"resume_jitter": !c.ResumeJitter.IsZero()})
		}
	}
}

// retry reads [client.retry]; requestTimeout is client.request_timeout
// (0: none), which an attempt timeout must be shorter than to act.
func (d *decoder) retry(c *Retry, r *table, requestTimeout time.Duration) {
	if r.has("sdk") {
		c.SDK = r.enum("sdk", "", sdkNames...)
	}
	def := sdkDefaults(c.SDK)
	c.Attempts = r.smallInt("attempts", int64(def.Attempts), 1, 100)
	c.Backoff = r.enum("backoff", "exponential", "none", "constant", "exponential")
	c.Base = Duration(r.duration("base", time.Duration(def.Base), 0, false))
	c.Cap = Duration(r.duration("cap", time.Duration(def.Cap), 0, false))
	c.Jitter = r.enum("jitter", "full", "none", "full", "equal", "decorrelated")
	if r.has("multiplier") {
		c.Multiplier = r.float("multiplier", 2, 0, true)
	}
	c.Budget = r.float("budget", 0, 0, false)
	c.BudgetWindow = Duration(r.duration("budget_window", 10*time.Second, time.Millisecond, false))
	if c.Budget == 0 && !r.has("budget_window") {
		c.BudgetWindow = 0 // no budget: nothing to window (a window written stays, and is warned of)
	}
	c.AttemptTimeout = Duration(r.duration("attempt_timeout", 0, 0, false))
	if requestTimeout > 0 && time.Duration(c.AttemptTimeout) >= requestTimeout {
		r.noEffect(fmt.Sprintf("it is not shorter than client.request_timeout (%v), which ends the request first", requestTimeout),
			map[string]bool{"attempt_timeout": true})
	}
	c.Tokens = r.float("tokens", def.Tokens, 0, false)
	c.TokenRatio = r.float("token_ratio", def.TokenRatio, 0, false)
	if c.Tokens == 0 && !r.has("token_ratio") {
		c.TokenRatio = 0 // no retry throttling: nothing to give back (likewise)
	}
	if c.SDK != "" {
		d.retrySDK(c, r)
	}
	if c.Attempts == 1 {
		r.noEffect("attempts is 1, so no request is retried", map[string]bool{
			"backoff": c.Backoff != "exponential", "base": c.Base != def.Base, "cap": c.Cap != def.Cap,
			"jitter": c.Jitter != "full", "budget": c.Budget != 0, "tokens": c.Tokens != def.Tokens, "multiplier": c.Multiplier != 0})
	}
	if c.Budget == 0 {
		r.noEffect("budget is 0: there is no retry budget to window", map[string]bool{"budget_window": c.BudgetWindow != Duration(10*time.Second)})
	}
	if c.Tokens == 0 {
		// A ratio of 0 is not written out (scenario.toml would not warn).
		r.noEffect("tokens is 0: retries are not throttled", map[string]bool{"token_ratio": c.TokenRatio != 0 && c.TokenRatio != 0.1})
	}
	if c.Backoff != "exponential" {
		r.noEffect(fmt.Sprintf("backoff is %q: nothing grows", c.Backoff), map[string]bool{"multiplier": c.Multiplier != 0})
	}
	r.done("sdk", "attempts", "backoff", "base", "cap", "jitter", "multiplier", "budget", "budget_window", "tokens", "token_ratio", "attempt_timeout")
}

// clientMaxWaiting reads client.max_waiting, the bound on the requests an
// instance has waiting on limiters.
func (d *decoder) clientMaxWaiting(c *Client, t *table) {
	mw := t.smallInt("max_waiting", 0, 0, maxCount)
	if mw == 0 {
		// The bound is checked before any limiter, so 0 refuses every
		// request, not only those that would wait.
		d.problem(t.key("max_waiting"), "must be at least 1: 0 would refuse every request, as the bound is checked before any limiter is taken; to refuse only requests that would wait, give each limiter max_waiting = 0")
	}
	c.MaxWaiting = &mw
	if c.Ingest == "queue" {
		t.noEffect("with ingest = \"queue\" the queue and its workers bound what waits (queue_capacity, workers)", map[string]bool{"max_waiting": true})
	}
}
