package upstream

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxCount bounds a count's value: far beyond any provider's limit, well
// inside int64 nanoseconds.
const MaxCount = 1e12

// Reader reads a distribution's keys from one table of a scenario file,
// reporting each problem at its key (the scenario decoder implements it).
// Key gives a key's full path; Problem, Intact and Rejected take full
// paths, the other methods keys of the table.
type Reader interface {
	// Count reports whether the table is a count's (whole numbers where a
	// latency has durations), and the least a count's draw may be.
	Count() (least int64, ok bool)
	Key(k string) string
	Has(k string) bool
	// Get returns k's raw TOML value, noting k as read.
	Get(k string) (any, bool)
	// Required reports whether k is present, saying so when it is not.
	Required(k string) bool
	// Enum reads a string that must be one of allowed ("" when not).
	Enum(k string, allowed ...string) string
	Str(k, def string) string
	// Float reads a finite number ≥ lo (> lo when open).
	Float(k string, def, lo float64, open bool) float64
	// Integer reads an integer ≥ lo.
	Integer(k string, def, lo int64) int64
	// Duration reads a duration string ≥ lo (> lo when open).
	Duration(k string, def, lo time.Duration, open bool) time.Duration
	// ParseDuration reads a duration string as Duration does.
	ParseDuration(s string) (time.Duration, error)
	Problem(key, format string, args ...any)
	// Intact reports whether every key's value was accepted whole.
	Intact(keys ...string) bool
	// Rejected reports whether key's value was rejected.
	Rejected(key string) bool
	// Done reports every key not read and not among valid.
	Done(valid ...string)
	// Tables reads an array of tables; Sub a table (nil if it is none).
	Tables(k string) []Reader
	Sub(k string) Reader
}

// DecodeDist reads a distribution from r: its dist key picks the family,
// which reads the rest. It returns nil, having said why, when dist is
// missing or names no family r may take.
func DecodeDist(r Reader) Dist { return decodeDist(r, false) }

// decodeDist is DecodeDist; a nested distribution (a mixture's component)
// cannot be a composite one.
func decodeDist(r Reader, nested bool) Dist {
	if !r.Required("dist") {
		r.Done("dist")
		return nil
	}
	_, count := r.Count()
	fs := families
	if count {
		fs = CountFamilies()
	}
	var allowed []string
	for _, f := range fs {
		if !nested || !f.Composite {
			allowed = append(allowed, f.Name)
		}
	}
	name := r.Enum("dist", allowed...)
	for _, f := range fs {
		if f.Name == name && name != "" {
			return f.zero.Decode(r)
		}
	}
	// Every key of every family is taken, so that only the dist is wrong.
	keys := []string{"dist"}
	for _, f := range families {
		if count && f.Count == 0 {
			continue
		}
		for _, k := range f.zero.Keys(count) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	r.Done(keys...)
	return nil
}

// positive reads a required value above 0: a duration (1ms when missing
// or rejected) or a count (1).
func positive(r Reader, k string) time.Duration {
	if _, ok := r.Count(); ok {
		return count(r, k, 0)
	}
	if !r.Required(k) {
		return time.Millisecond
	}
	return r.Duration(k, time.Millisecond, 0, true)
}

// count reads a count of at least lo (above 0 when lo is 0), rounded to a
// whole number: 1 when missing or rejected.
func count(r Reader, k string, lo float64) time.Duration {
	if !r.Required(k) {
		return 1
	}
	f := r.Float(k, 1, lo, lo == 0)
	if f > MaxCount {
		r.Problem(r.Key(k), "must be at most %g, got %v", float64(MaxCount), f)
		return 1
	}
	return time.Duration(math.Round(f))
}

// valueText writes a value as problems quote it: a duration, or a count.
func valueText(r Reader, v time.Duration) string {
	if _, ok := r.Count(); ok {
		return strconv.FormatInt(int64(v), 10)
	}
	return v.String()
}

// Encoder renders a distribution's values as a scenario file writes them.
type Encoder struct {
	// Value writes a duration, or a count's value.
	Value func(time.Duration) string
	// Str writes a string.
	Str func(string) string
}

// Inline writes d as an inline table: { dist = "…", key = value, … }.
func (e Encoder) Inline(d Dist) (string, error) {
	f, ok := FamilyOf(d)
	if !ok {
		return "", fmt.Errorf("no encoding for dist %q", Name(d))
	}
	parts := append([]string{"dist = " + e.Str(f.Name)}, d.Encode(e)...)
	return "{ " + strings.Join(parts, ", ") + " }", nil
}

// number writes a float as a scenario file does.
func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// LoadFiles returns d with the data files it names read (an empirical
// distribution's samples): load reads file, a problem at key when it
// cannot (false). key is d's own path.
func LoadFiles(d Dist, key string, load func(key, file string) ([]time.Duration, bool)) Dist {
	if l, ok := d.(interface {
		loadFiles(key string, load func(key, file string) ([]time.Duration, bool)) Dist
	}); ok {
		return l.loadFiles(key, load)
	}
	return d
}
