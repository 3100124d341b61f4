package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/limitsim/limitsim/report/metrics"
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

// openRegular opens the regular file at path, and returns what it is.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	// Check the type before opening: opening a FIFO would block.
	if st, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
// it created (see overriding; nil: no overrides), names the override
// instead of a line; one with a key of the file names it where the file
// has it, before any entry above it was removed.
//
// It only reads tree, which a Loader shares between the loads of a text:
// whole between those without overrides, and but for the tables the
// overrides reach between the others (TestParseTreeLeavesTheTree).
func parseTree(l *Loader, file string, data []byte, tree map[string]any, ov *overriding) (*Scenario, error) {
	d := &decoder{file: displayName(file), src: string(data), ld: l}
	sc := &Scenario{File: file, src: data}
	d.scenario(sc, d.table("", tree))
	d.crossCheck(sc)
	if len(d.probs) == 0 && len(d.ranges) > 0 {
		d.checkRangeEnds(file, data, tree)
		sc.Ranges = d.spelledRanges(tree)
	}
	if len(d.probs) == 0 {
		d.loadData(sc, filepath.Dir(file))
	}
	if len(d.probs) == 0 {
		d.checkPlans(sc, data)
	}
	sc.Warnings = append(sc.Warnings, d.idle...)
	if len(d.probs) > 0 {
		for i, p := range d.probs {
			if o, table, ok := ov.of(p.Key); ok {
				d.probs[i].File, d.probs[i].Line, d.probs[i].Key = o.flag(), 0, ov.spell(p.Key)
				if table == "" {
					d.probs[i].Msg += fmt.Sprintf(" (set by %s)", o)
				} else { // the key itself may be another override's, or a default
					d.probs[i].Msg += fmt.Sprintf(" (in %s, which the file does not have: %s %s made it)", printable(table), o.flag(), o)
				}
			} else {
				if k := ov.fileKey(p.Key); k != p.Key {
					if d.lines == nil {
						d.lines = indexKeys(d.src)
					}
					d.probs[i].Key, d.probs[i].Line = k, d.lines.lineOf(k)
				}
				d.probs[i].Msg += ov.named(p.Msg)
			}
		}
		return nil, d.probs.sorted()
	}
	return sc, nil
}

var topKeys = []string{"name", "description", "run", "workload", "client", "upstream", "quota", "variant", "sweep", "log"}

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
	sc.Quotas = d.sharedQuotas(t)
	sc.Variants = d.variants(t)
	sc.Sweeps = d.sweeps(t)
	sc.Log = d.logMapping(t.sub("log"))
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
	if t != nil {
		t.certain = true // the run's own settings, not the world's
	}
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
