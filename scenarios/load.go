package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/upstream"
)

// Limits on what a scenario may ask for, so that no input can make the
// loader or a run allocate without bound.
const (
	maxFileBytes  = 4 << 20  // a scenario file
	maxDataBytes  = 64 << 20 // a trace or samples file
	maxListLength = 10000    // hosts, tenants, limiters, paths, upstreams
	maxInstances  = 10000
	maxCount      = 1 << 40 // requests, permits, queue sizes
)

// Load reads and validates the scenario file at path.
func Load(path string) (*Scenario, error) {
	data, err := readBounded(path, maxFileBytes)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	// Check the type before opening: opening a FIFO would block.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes is over the %d-byte limit", path, st.Size(), limit)
	}
	// Room for the whole file from the start: reading a large trace into
	// a buffer grown by doubling would copy it many times over and hold
	// up to twice its size.
	buf := bytes.NewBuffer(make([]byte, 0, min(st.Size(), limit)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, limit+1))
	return buf.Bytes(), err
}

// Parse validates scenario text; file names it in messages and anchors
// relative trace and samples paths ("" anchors them in the working directory).
func Parse(file string, data []byte) (*Scenario, error) { return parseWith(nil, file, data, nil) }

// displayName is how problems name file ("<scenario>" for text without one).
func displayName(file string) string {
	if file == "" {
		return "<scenario>"
	}
	return file
}

// decodeTree reads scenario text into its generic TOML tree; a syntax
// error names the file, the line and the column.
func decodeTree(file string, data []byte) (map[string]any, error) {
	if line := tooDeep(string(data)); line > 0 {
		return nil, Problems{{File: displayName(file), Line: line, Msg: fmt.Sprintf("arrays and inline tables nested more than %d deep", maxNesting)}}
	}
	var tree map[string]any
	if _, err := toml.Decode(string(data), &tree); err != nil {
		return nil, syntaxError(displayName(file), data, err)
	}
	return tree, nil
}

// parseTree decodes and checks the TOML tree of file (data is its text,
// for line numbers). A problem with a key an override set, or in a table
// it created (overridden: resolved key path → override), names the
// override instead of a line.
//
// It only reads tree, which a Loader shares between the loads of a text:
// whole between those without overrides, and but for the tables the
// overrides reach between the others (TestParseTreeLeavesTheTree).
func parseTree(l *Loader, file string, data []byte, tree map[string]any, overridden map[string]Override) (*Scenario, error) {
	d := &decoder{file: displayName(file), src: string(data), ld: l}
	sc := &Scenario{File: file, src: data}
	d.scenario(sc, d.table("", tree))
	d.crossCheck(sc)
	if len(d.probs) == 0 {
		d.loadData(sc, filepath.Dir(file))
	}
	if len(d.probs) == 0 {
		d.checkPlans(sc, data)
	}
	sc.Warnings = append(sc.Warnings, d.idle...)
	if len(d.probs) > 0 {
		for i, p := range d.probs {
			if o, table, ok := overrideOf(overridden, p.Key); ok {
				d.probs[i].File, d.probs[i].Line = "--set", 0
				if table == "" {
					d.probs[i].Msg += fmt.Sprintf(" (set by %s)", o)
				} else { // the key itself may be another override's, or a default
					d.probs[i].Msg += fmt.Sprintf(" (in %s, which the file does not have: --set %s made it)", printable(table), o)
				}
			}
		}
		return nil, d.probs.sorted()
	}
	return sc, nil
}

// syntaxError turns a TOML parse error into file:line with the column, the
// line as written and a caret under the error.
func syntaxError(file string, data []byte, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return Problems{{File: file, Msg: escaped(err.Error())}}
	}
	// Place the error by its byte offset: the parser's own column is one
	// line off for an error at the start of a line (a duplicate key).
	src := string(data)
	off := min(max(0, pe.Position.Start+bomLength(src)), len(src))
	// "got 'x'" spans the blanks before x: point at x.
	spanEnd := min(len(src), off+pe.Position.Len)
	for off+1 < spanEnd && (src[off] == ' ' || src[off] == '\t') {
		off++
	}
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[start:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += start
	}
	line := strings.Count(src[:start], "\n") + 1
	text := strings.TrimSuffix(src[start:end], "\r")
	before := src[start:off]
	if len(before) > len(text) {
		before = text // the error is at the line break
	}
	// The caret line repeats the tabs before the caret, so it lines up
	// however wide the terminal draws a tab.
	pad := []rune(before)
	for i, r := range pad {
		if r != '\t' {
			pad[i] = ' '
		}
	}
	msg := fmt.Sprintf("syntax error at column %d: %s\n    %s\n    %s^", len(pad)+1, escaped(pe.Message), visible(text), string(pad))
	return Problems{{File: file, Line: line, Msg: msg}}
}

// visible draws a line of the file for the terminal with one rune for each
// of its runes, so that a caret still lines up: tabs stay, control characters
// become their Unicode control pictures (U+2400–U+2421), other unprintable
// runes and invalid bytes U+FFFD.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r != utf8.RuneError && strconv.IsPrint(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune(0x2421)
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}

// escaped writes unprintable runes of a message as Go escapes (\x1b).
func escaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r != utf8.RuneError && strconv.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// bomLength is the length of the byte-order mark BurntSushi/toml drops
// before parsing, from which its offsets count.
func bomLength(src string) int {
	switch {
	case strings.HasPrefix(src, "\xff\xfe"), strings.HasPrefix(src, "\xfe\xff"):
		return 2
	case strings.HasPrefix(src, "\xef\xbb\xbf"):
		return 3
	}
	return 0
}

var topKeys = []string{"name", "description", "run", "workload", "client", "upstream", "variant", "sweep"}

func (d *decoder) scenario(sc *Scenario, t *table) {
	sc.Name = t.name()
	sc.Description = t.str("description", "")
	d.run(&sc.Run, t.sub("run"))
	d.workload(&sc.Workload, t.sub("workload"))
	d.client(&sc.Client, t.sub("client"))
	if t.required("upstream") {
		ups := t.tables("upstream")
		if len(ups) > maxListLength {
			d.problem("upstream", "has %d entries; at most %d", len(ups), maxListLength)
			ups = nil
		}
		for _, u := range ups {
			sc.Upstreams = append(sc.Upstreams, d.upstream(u))
		}
	}
	sc.Variants = d.variants(t)
	sc.Sweeps = d.sweeps(t)
	t.done(topKeys...)
}

// name reads the required key "name": a string usable as one path element
// and in reports.
func (t *table) name() string {
	if !t.required("name") {
		return ""
	}
	v, _ := t.get("name")
	s := t.str("name", "")
	if _, ok := v.(string); ok { // otherwise str said so
		if err := safeName(s); err != nil {
			t.d.problem(t.key("name"), "%v", err)
		}
	}
	return s
}

// safeName accepts names usable as one path element and in reports.
func safeName(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if len(s) > 100 {
		return errors.New("must be at most 100 characters")
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("%q may use only letters, digits, '-', '_' and '.'", s)
		}
	}
	if s == "." || s == ".." {
		return fmt.Errorf("%q is not a usable name", s)
	}
	return nil
}

func (d *decoder) run(r *RunSettings, t *table) {
	r.Seed, r.Replications, r.Interval = 1, 1, Duration(time.Second)
	r.MaxEvents, r.MaxLiveRequests, r.MaxEventsPerInstant = DefaultMaxEvents, DefaultMaxLiveRequests, DefaultMaxEventsPerInstant
	if t == nil {
		d.problem("run", "is required: give run.requests or run.duration")
		return
	}
	r.Seed = uint64(t.integer("seed", 1, 0))
	r.Requests = t.integer("requests", 0, 1)
	if r.Requests > maxCount {
		d.problem("run.requests", "must be at most %d", int64(maxCount))
	}
	r.Duration = Duration(t.duration("duration", 0, 0, true))
	r.Warmup = Duration(t.duration("warmup", 0, 0, false))
	r.Interval = Duration(t.duration("interval", time.Second, time.Millisecond, false))
	r.Replications = t.smallInt("replications", 1, 1, 1000)
	r.MaxEvents = t.integer("max_events", DefaultMaxEvents, 1)
	r.MaxLiveRequests = t.integer("max_live_requests", DefaultMaxLiveRequests, 1)
	if r.MaxLiveRequests > MaxLiveRequestsLimit {
		d.problem(t.key("max_live_requests"), "must be at most %d (each live request may hold a few scheduled events, and the event queue holds at most 2^28), got %d", MaxLiveRequestsLimit, r.MaxLiveRequests)
		r.MaxLiveRequests = DefaultMaxLiveRequests
	}
	r.MaxEventsPerInstant = t.integer("max_events_per_instant", DefaultMaxEventsPerInstant, 1)
	if !t.has("requests") && !t.has("duration") {
		d.problem("run", "needs run.requests, run.duration, or both")
	}
	t.done("seed", "requests", "duration", "warmup", "interval", "replications", "max_events", "max_live_requests", "max_events_per_instant")
}

var arrivalKinds = []string{"poisson", "constant", "backlog", "onoff", "ramp", "trace"}

// Arrival rates run from one in about 32 years to one a nanosecond: a
// slower rate's gaps pass the last instant a run can reach, a faster one's
// share their nanoseconds.
const minArrivalRate, maxArrivalRate = 1e-9, 1e9

// arrivalRate reads a rate of arrivals per second: greater than 0 (at
// least 0 for rate_to, where 0 ends the ramp's arrivals) and within
// [minArrivalRate, maxArrivalRate].
func (t *table) arrivalRate(k string, def float64) float64 {
	v := t.float(k, def, 0, k != "rate_to")
	if t.has(k) && v > 0 && (v < minArrivalRate || v > maxArrivalRate) {
		t.d.problem(t.key(k), "(%v arrivals per second) must be between %v (one in about 32 years) and %v (one a nanosecond)", v, minArrivalRate, maxArrivalRate)
		return def
	}
	return v
}

// cycleFits checks that an on/off cycle, on + off, is a duration: each
// may be, and their sum overflow into a negative period.
func (t *table) cycleFits(on, off Duration) {
	if on > 0 && off > 0 && on > math.MaxInt64-off {
		t.d.problem(t.key("off"), "on + off (%v + %v) is longer than a duration holds (about 292 years)", time.Duration(on), time.Duration(off))
	}
}

var workloadKeys = []string{"arrival", "rate", "rate_to", "ramp", "on", "off", "trace", "cost", "hosts", "host_order", "tenants"}

// arrivalKeys are the workload keys each arrival process reads.
var arrivalKeys = map[string][]string{
	"poisson": {"rate"}, "constant": {"rate"}, "onoff": {"rate", "on", "off"},
	"ramp": {"rate", "rate_to", "ramp"}, "trace": {"trace"}, "backlog": nil,
}

// The keys of a weighted entry (hosts, tenants), shared by every entry and
// never written: a scenario may list ten thousand tenants.
var (
	weightedKeys      = []string{"name", "weight"}
	entryArrivalKeys  = []string{"name", "weight", "arrival", "rate", "on", "off"}
	steadyArrivalKeys = []string{"name", "weight", "arrival", "rate"}
)

// plainWeighted decodes an entry of a weighted list that holds a valid
// name and at most a valid weight, and nothing else: what the full decoding
// below gives such an entry, with no problem, read from the entry's map in
// one pass. Ten thousand tenants' entries are mostly such; any other entry
// (ok false) takes the full decoding, which finds its problems.
func plainWeighted(v any) (w Weighted, ok bool) {
	m, _ := v.(map[string]any)
	name, hasName := m["name"].(string)
	if !hasName || safeName(name) != nil {
		return w, false
	}
	w.Name, w.Weight = name, 1
	switch len(m) {
	case 1:
		return w, true
	case 2:
		switch x := m["weight"].(type) {
		case float64:
			w.Weight = x
		case int64:
			w.Weight = float64(x)
		default: // another key, or not a number
			return w, false
		}
		return w, w.Weight > 0 && !math.IsInf(w.Weight, 0)
	}
	return w, false
}

func (d *decoder) weighted(t *table, k string, arrivals bool) []Weighted {
	own := 0
	idleWeights, idleWeight := 0, (*table)(nil) // tenants bringing their own arrivals with a weight written, and the first
	entries := t.list(k)
	out := make([]Weighted, 0, entries.len())
	seen := make(map[string]bool, entries.len())
	// An entry that is no table is reported first, before the problems
	// inside the entries, as for every other list.
	notTables := map[int]*table{}
	for i := range entries.len() {
		if _, ok := entries.at(i).(map[string]any); !ok {
			notTables[i] = entries.table(i)
		}
	}
	for i := range entries.len() {
		if w, ok := plainWeighted(entries.at(i)); ok && !seen[w.Name] {
			seen[w.Name] = true
			out = append(out, w)
			continue
		}
		e := notTables[i]
		if e == nil {
			e = entries.table(i)
		}
		w, ownArrivals, idle := d.weightedEntry(e, arrivals, seen)
		if ownArrivals {
			own++
		}
		if idle {
			if idleWeights++; idleWeight == nil {
				idleWeight = e
			}
		}
		out = append(out, w)
	}
	if len(out) > maxListLength {
		d.problem(t.key(k), "has %d entries; at most %d", len(out), maxListLength)
	}
	if own > 0 && own < len(out) {
		d.problem(t.key(k), "either every tenant brings its own arrival rate or none does (%d of %d do)", own, len(out))
	}
	if idleWeights > 0 { // one warning, however many tenants
		text := fmt.Sprintf("%s has no effect: the tenant brings its own arrivals (rate), so no weight shares out workload.rate", idleWeight.key("weight"))
		if idleWeights > 1 {
			text += fmt.Sprintf("; nor do the weights of %d more such tenants", idleWeights-1)
		}
		d.idle = append(d.idle, metrics.Warning{Text: text})
	}
	return out
}

// weightedEntry decodes entry e of a weighted list (hosts, or tenants when
// arrivals is set) in full, reporting its problems; seen holds the names
// of the entries before it. ownArrivals says the tenant brings its own
// arrival rate, idle that it also has a weight written, which then has no
// effect.
func (d *decoder) weightedEntry(e *table, arrivals bool, seen map[string]bool) (w Weighted, ownArrivals, idle bool) {
	if w.Name = e.name(); w.Name != "" {
		if seen[w.Name] && !d.rejected[e.key("name")] {
			d.problem(e.key("name"), "duplicate name %q", w.Name)
		}
		seen[w.Name] = true
	}
	w.Weight = e.float("weight", 1, 0, true)
	valid := weightedKeys
	if arrivals {
		valid = entryArrivalKeys
		if e.has("rate") || e.has("arrival") {
			ownArrivals = true
			idle = e.has("weight") && w.Weight != 1
			w.Arrival = e.enum("arrival", "poisson", "poisson", "constant", "onoff")
			if e.required("rate") {
				w.Rate = e.arrivalRate("rate", 1)
			}
			if w.Arrival == "onoff" {
				if e.required("on") {
					w.On = Duration(e.duration("on", time.Second, 0, true))
				}
				if e.required("off") {
					w.Off = Duration(e.duration("off", time.Second, 0, true))
				}
				e.cycleFits(w.On, w.Off)
			}
		}
		e.known = entryArrivalKeys
		e.ctx = d.arrivalCtx(w.Arrival)
		switch {
		case e.bad["arrival"]:
		case w.Arrival == "onoff":
		case w.Rate > 0 || e.has("arrival"):
			valid = steadyArrivalKeys
		default:
			valid = steadyArrivalKeys
			e.ctx = "without arrival = \"onoff\" (on and off need it)"
		}
	}
	e.done(valid...)
	return w, ownArrivals, idle
}

func (d *decoder) workload(w *Workload, t *table) {
	w.Arrival, w.Cost, w.HostOrder = "poisson", Cost{N: 1}, "random"
	w.Hosts = []Weighted{{Name: "default", Weight: 1}}
	w.Tenants = []Weighted{{Name: "default", Weight: 1}}
	if t == nil {
		d.problem("workload", "is required")
		return
	}
	w.Arrival = t.enum("arrival", "poisson", arrivalKinds...)
	if t.has("tenants") {
		w.Tenants = d.weighted(t, "tenants", true)
		if len(w.Tenants) == 0 && !d.rejected[t.key("tenants")] { // not an array: said so
			d.problem(t.key("tenants"), "must list at least one tenant")
		}
	}
	switch {
	case w.OwnArrivals():
		for _, k := range []string{"arrival", "rate"} {
			if _, ok := t.get(k); ok {
				d.problem(t.key(k), "must not be set when every tenant brings its own arrival rate")
			}
		}
		w.Arrival = ""
	case w.Arrival == "backlog" || w.Arrival == "trace":
	default:
		if t.required("rate") {
			w.Rate = t.arrivalRate("rate", 0)
		}
	}
	switch w.Arrival {
	case "ramp":
		if t.required("rate_to") {
			w.RateTo = t.arrivalRate("rate_to", 0)
		}
		w.Ramp = Duration(t.duration("ramp", 0, 0, true))
	case "onoff":
		if t.required("on") {
			w.On = Duration(t.duration("on", 0, 0, true))
		}
		if t.required("off") {
			w.Off = Duration(t.duration("off", 0, 0, true))
		}
		t.cycleFits(w.On, w.Off)
	case "trace":
		if t.required("trace") {
			w.Trace = t.str("trace", "")
		}
	}
	w.Cost = d.cost(t, "cost", 1, 1)
	if t.has("hosts") {
		w.Hosts = d.weighted(t, "hosts", false)
		if len(w.Hosts) == 0 && !d.rejected[t.key("hosts")] { // not an array: said so
			d.problem(t.key("hosts"), "must list at least one host")
		}
	}
	w.HostOrder = t.enum("host_order", "random", "random", "round_robin")
	valid := []string{"arrival", "cost", "hosts", "host_order", "tenants"}
	switch {
	case t.bad["arrival"]:
		valid = workloadKeys
	case w.OwnArrivals():
		valid = []string{"cost", "hosts", "host_order", "tenants"}
	default:
		valid = append(valid, arrivalKeys[w.Arrival]...)
	}
	t.known, t.ctx = workloadKeys, fmt.Sprintf("with arrival = %q", w.Arrival)
	if w.OwnArrivals() {
		t.ctx = "when every tenant brings its own arrival rate"
	}
	t.done(valid...)
}

func (d *decoder) client(c *Client, t *table) {
	c.Instances, c.Ingest = 1, "tasks"
	c.On429 = On429{Pause: "host", PauseCheck: "entry", PauseEnd: "longest", HonorRetryAfter: true}
	c.On429.Fallback, _ = parseJitter("uniform(1s,5s)", false)
	c.On429.ResumeJitter, _ = parseJitter("0s", true)
	c.Retry = Retry{Attempts: 1, Backoff: "exponential", Base: Duration(time.Second), Cap: Duration(30 * time.Second), Jitter: "full"}
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
		mw := t.smallInt("max_waiting", 0, 0, maxCount)
		c.MaxWaiting = &mw
		if c.Ingest == "queue" {
			t.noEffect("with ingest = \"queue\" the queue and its workers bound what waits (queue_capacity, workers)", map[string]bool{"max_waiting": true})
		}
	}
	c.AcquireTimeout = Duration(t.duration("acquire_timeout", 0, 0, false))
	c.RequestTimeout = Duration(t.duration("request_timeout", 0, 0, false))
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
		d.retry(&c.Retry, r)
	}
	if t.bad["ingest"] {
		t.seen.add("queue_capacity", "queue_full", "workers")
	}
	t.done("instances", "instance_weights", "ingest", "queue_capacity", "queue_full", "workers", "max_waiting", "acquire_timeout",
		"request_timeout", "limiter", "path", "on_429", "retry", "headers", "reserve")
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
		pt.done("name", "weight", "limiters")
		c.Paths = append(c.Paths, p)
	}
	return true
}

// on429 reads [client.on_429]. pauseAtZero: the rate-limit headers pause
// the host too (headers.pause_at_zero), so there are host pauses to check
// and to wait out whatever pause says.
func (d *decoder) on429(c *On429, o *table, pauseAtZero bool) {
	c.Pause = o.enum("pause", "host", "host", "caller", "none")
	c.PauseCheck = o.enum("pause_check", "entry", "entry", "send")
	c.PauseEnd = o.enum("pause_end", "longest", "longest", "latest")
	c.HonorRetryAfter = o.boolean("honor_retry_after", true)
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

// retry reads [client.retry].
func (d *decoder) retry(c *Retry, r *table) {
	c.Attempts = r.smallInt("attempts", 1, 1, 100)
	c.Backoff = r.enum("backoff", "exponential", "none", "constant", "exponential")
	c.Base = Duration(r.duration("base", time.Second, 0, false))
	c.Cap = Duration(r.duration("cap", 30*time.Second, 0, false))
	c.Jitter = r.enum("jitter", "full", "none", "full", "equal", "decorrelated")
	c.Budget = r.float("budget", 0, 0, false)
	c.BudgetWindow = Duration(r.duration("budget_window", 10*time.Second, time.Millisecond, false))
	if c.Budget == 0 && !r.has("budget_window") {
		c.BudgetWindow = 0 // no budget: nothing to window (a window written stays, and is warned of)
	}
	c.Tokens = r.float("tokens", 0, 0, false)
	c.TokenRatio = r.float("token_ratio", 0.1, 0, false)
	if c.Tokens == 0 && !r.has("token_ratio") {
		c.TokenRatio = 0 // no retry throttling: nothing to give back (likewise)
	}
	if c.Attempts == 1 {
		r.noEffect("attempts is 1, so no request is retried", map[string]bool{
			"backoff": c.Backoff != "exponential", "base": c.Base != Duration(time.Second), "cap": c.Cap != Duration(30*time.Second),
			"jitter": c.Jitter != "full", "budget": c.Budget != 0, "tokens": c.Tokens != 0})
	}
	if c.Budget == 0 {
		r.noEffect("budget is 0: there is no retry budget to window", map[string]bool{"budget_window": c.BudgetWindow != Duration(10*time.Second)})
	}
	if c.Tokens == 0 {
		// A ratio of 0 is not written out (scenario.toml would not warn).
		r.noEffect("tokens is 0: retries are not throttled", map[string]bool{"token_ratio": c.TokenRatio != 0 && c.TokenRatio != 0.1})
	}
	r.done("attempts", "backoff", "base", "cap", "jitter", "budget", "budget_window", "tokens", "token_ratio")
}

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
		if i > 0 && step.At <= u.LatencySchedule[i-1].At {
			d.problem(st.key("at"), "(%v) must come after the previous step's (%v)", time.Duration(step.At), time.Duration(u.LatencySchedule[i-1].At))
		}
		u.LatencySchedule = append(u.LatencySchedule, step)
	}
	// One quota as a table, or several as an array of tables: all enforced.
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
		u.Quota = append(u.Quota, Quota(q))
	}
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

// overrideOf finds the override a problem at key comes from: the one that
// set key, or the one that created the table key is in (table: its path;
// overridden holds it followed by ".*").
func overrideOf(overridden map[string]Override, key string) (o Override, table string, ok bool) {
	if o, ok := overridden[key]; ok {
		return o, "", true
	}
	for k := key; ; {
		if o, ok := overridden[k+".*"]; ok {
			return o, k, true
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			return Override{}, "", false
		}
		k = k[:i]
	}
}
