package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// Latency is an upstream's latency distribution in a scenario file: one
// of the families of upstream's table (nil when the file gives none).
type Latency struct{ upstream.Dist }

// distReader reads a distribution's keys from t for the families' own
// decoders: a count's (count true) or a latency's.
type distReader struct {
	t     *table
	count bool
	least int64
}

// Count reports whether r reads a count, and the count's least.
func (r distReader) Count() (int64, bool) { return r.least, r.count }

// Key returns k's full path.
func (r distReader) Key(k string) string { return r.t.key(k) }

// Has reports whether k is present.
func (r distReader) Has(k string) bool { return r.t.has(k) }

// Get returns k's value, noting k as read.
func (r distReader) Get(k string) (any, bool) { return r.t.get(k) }

// Required reports whether k is present, a problem when not.
func (r distReader) Required(k string) bool { return r.t.required(k) }

// Str reads a string.
func (r distReader) Str(k, def string) string { return r.t.str(k, def) }

// Enum reads one of allowed ("" when not).
func (r distReader) Enum(k string, allowed ...string) string { return r.t.enum(k, "", allowed...) }

// Float reads a finite number ≥ lo (> lo when open).
func (r distReader) Float(k string, def, lo float64, open bool) float64 {
	return r.t.float(k, def, lo, open)
}

// Integer reads an integer ≥ lo.
func (r distReader) Integer(k string, def, lo int64) int64 { return r.t.integer(k, def, lo) }

// Duration reads a duration string ≥ lo (> lo when open).
func (r distReader) Duration(k string, def, lo time.Duration, open bool) time.Duration {
	return r.t.duration(k, def, lo, open)
}

// ParseDuration reads a duration string as Duration does.
func (r distReader) ParseDuration(s string) (time.Duration, error) { return parseDuration(s) }

// Problem reports a problem at key, a full path.
func (r distReader) Problem(key, format string, args ...any) { r.t.d.problem(key, format, args...) }

// Intact reports whether every key's value was accepted whole.
func (r distReader) Intact(keys ...string) bool { return r.t.d.intact(keys...) }

// Rejected reports whether key's value was rejected.
func (r distReader) Rejected(key string) bool { return r.t.d.rejected[key] }

// Done reports the keys not read and not valid.
func (r distReader) Done(valid ...string) { r.t.done(valid...) }

// Tables reads an array of tables.
func (r distReader) Tables(k string) []upstream.Reader {
	ts := r.t.tables(k)
	out := make([]upstream.Reader, len(ts))
	for i, t := range ts {
		out[i] = distReader{t: t, count: r.count, least: r.least}
	}
	return out
}

// Sub reads a nested table, nil when k is absent.
func (r distReader) Sub(k string) upstream.Reader {
	t := r.t.sub(k)
	if t == nil {
		return nil
	}
	return distReader{t: t, count: r.count, least: r.least}
}

// latency reads a latency distribution table.
func (d *decoder) latency(t *table) Latency {
	return Latency{upstream.DecodeDist(distReader{t: t})}
}

// loadSamples reads the data files of an upstream's latency (key: its
// path), relative to the scenario's folder.
func (d *decoder) loadSamples(l *Latency, key string, resolve func(string) (string, error)) {
	l.Dist = upstream.LoadFiles(l.Dist, key, func(key, file string) ([]time.Duration, bool) {
		path, err := resolve(file)
		var vals []time.Duration
		if err == nil {
			vals, err = d.ld.column(path, true)
		}
		if err != nil {
			d.problem(key, "%v", err)
			return nil, false
		}
		return vals, true
	})
}

// durationEncoder writes a latency's values as a scenario file does.
var durationEncoder = upstream.Encoder{Value: func(d time.Duration) string { return tomlString(d.String()) }, Str: tomlString}

// MarshalTOML renders the distribution as the inline table a scenario file
// uses, so a resolved scenario reads back as it was run.
func (l Latency) MarshalTOML() ([]byte, error) {
	text, err := durationEncoder.Inline(l.Dist)
	return []byte(text), err
}

// DistReference renders the latency and count distribution tables of the
// scenario reference (docs/scenario.md) from upstream's table of families.
func DistReference() (latency, count string) {
	var b strings.Builder
	b.WriteString("| dist | keys |\n| --- | --- |\n")
	for _, f := range upstream.Families() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", f.Name, f.Doc)
	}
	latency = b.String()
	b.Reset()
	b.WriteString("| dist | keys |\n| --- | --- |\n")
	for _, f := range upstream.CountFamilies() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", f.Name, f.CountDoc)
	}
	return latency, b.String()
}
