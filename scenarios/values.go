package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DurationShaped reports whether s is written as a duration, numbers with
// units ("1h30m", "3000000h"), whether or not a duration holds its value.
func DurationShaped(s string) bool { return wellFormedDuration.MatchString(strings.TrimSpace(s)) }

// durationFix rewrites a duration written with spaces or unit words
// ("1.5 s", "5min", "2 minutes 30 seconds") as Go reads it, if that parses.
func durationFix(s string) (string, bool) {
	var b strings.Builder
	rest := durationPart.ReplaceAllStringFunc(strings.TrimSpace(s), func(part string) string {
		m := durationPart.FindStringSubmatch(part)
		unit := m[2]
		if u, ok := unitWords[strings.ToLower(unit)]; ok {
			unit = u
		}
		b.WriteString(m[1] + unit)
		return ""
	})
	fix := b.String()
	if strings.TrimSpace(rest) != "" || fix == strings.TrimSpace(s) {
		return "", false
	}
	if _, err := time.ParseDuration(fix); err != nil {
		return "", false
	}
	return fix, true
}

// parseDuration parses "200ms"-style text, naming the valid units.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err == nil {
		return d, nil
	}
	msg := err.Error()
	if fix, ok := durationFix(s); ok {
		return 0, fmt.Errorf("%q is not a duration (did you mean %q?)", s, fix)
	}
	switch {
	case exponent.MatchString(strings.TrimSpace(s)):
		return 0, fmt.Errorf("%q: a duration is written without an exponent (\"1500ms\", not \"1.5e3ms\")", s)
	case strings.Contains(msg, "unknown unit"):
		return 0, fmt.Errorf("%q has an unknown unit (valid units: %s)", s, durationUnits)
	case strings.Contains(msg, "missing unit"):
		return 0, fmt.Errorf("%q needs a unit (valid units: %s)", s, durationUnits)
	case wellFormedDuration.MatchString(strings.TrimSpace(s)):
		return 0, fmt.Errorf("%q is too long: durations must be under about 292 years", s)
	}
	return 0, fmt.Errorf("%q is not a duration like \"200ms\" or \"1m30s\"", s)
}

// duration reads a duration string ≥ lo (> lo when open).
func (t *table) duration(k string, def, lo time.Duration, open bool) time.Duration {
	v, ok := t.get(k)
	if !ok {
		return def
	}
	s, ok := v.(string)
	if !ok {
		if _, num := v.(int64); num {
			t.d.problem(t.key(k), "must be a duration string with a unit, such as \"%vs\"", v)
		} else if f, num := v.(float64); num {
			t.d.problem(t.key(k), "must be a duration string with a unit, such as \"%vs\"", strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			t.d.problem(t.key(k), "must be a duration string such as \"200ms\", not %s", typeName(v))
		}
		return def
	}
	dur, err := parseDuration(s)
	if err != nil {
		t.d.problem(t.key(k), "%v", err)
		return def
	}
	if dur < lo || (open && dur == lo) {
		if dur < 0 {
			t.d.problem(t.key(k), "must not be negative, got %v", dur)
		} else if open {
			t.d.problem(t.key(k), "must be greater than %v", lo)
		} else {
			t.d.problem(t.key(k), "must be at least %v, got %v", lo, dur)
		}
		return def
	}
	return dur
}

// jitter reads a random duration: "2s", "uniform(1s,5s)", "exponential(500ms)"
// or "constant(2s)". A plain duration means constant, or uniform(0, d) when
// plainIsUpTo (resume_jitter = "500ms" is "up to 500 ms").
func (t *table) jitter(k string, def string, plainIsUpTo bool) Jitter {
	s := t.str(k, def)
	j, err := parseJitter(s, plainIsUpTo)
	if err != nil {
		t.d.problem(t.key(k), "%v", err)
		j, _ = parseJitter(def, plainIsUpTo)
	}
	return j
}

func parseJitter(s string, plainIsUpTo bool) (Jitter, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		d, err := parseDuration(s)
		if err != nil {
			return Jitter{}, fmt.Errorf("%v (or uniform(a,b), exponential(mean), constant(d))", err)
		}
		if d < 0 {
			return Jitter{}, fmt.Errorf("must not be negative, got %v", d)
		}
		if plainIsUpTo && d > 0 {
			return Jitter{Kind: "uniform", A: 0, B: d, Text: s}, nil
		}
		return Jitter{Kind: "constant", A: d, Text: s}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return Jitter{}, fmt.Errorf("%q: missing closing parenthesis", s)
	}
	kind := strings.TrimSpace(s[:open])
	var args []time.Duration
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		d, err := parseDuration(a)
		if err != nil {
			return Jitter{}, err
		}
		if d < 0 {
			return Jitter{}, fmt.Errorf("%q: durations must not be negative", s)
		}
		args = append(args, d)
	}
	switch {
	case kind == "uniform" && len(args) == 2:
		if args[1] < args[0] {
			return Jitter{}, fmt.Errorf("%q: uniform(a,b) needs a ≤ b", s)
		}
		return Jitter{Kind: "uniform", A: args[0], B: args[1], Text: s}, nil
	case kind == "exponential" && len(args) == 1:
		if args[0] <= 0 {
			return Jitter{}, fmt.Errorf("%q: the mean must be positive", s)
		}
		return Jitter{Kind: "exponential", A: args[0], Text: s}, nil
	case kind == "constant" && len(args) == 1:
		return Jitter{Kind: "constant", A: args[0], Text: s}, nil
	}
	return Jitter{}, fmt.Errorf("%q: expected uniform(a,b), exponential(mean), constant(d) or a duration", s)
}

const durationUnits = "ns, us (or µs), ms, s, m, h"

// wellFormedDuration matches text that is a duration in form; if Go cannot
// parse it, it overflowed.
var wellFormedDuration = regexp.MustCompile(`^[-+]?([0-9]+(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// durationPart is one number and unit of a duration, spaces allowed.
var durationPart = regexp.MustCompile(`([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Zµμ]+)`)

// unitWords are unit spellings people write, by the unit Go reads.
var unitWords = map[string]string{
	"sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
	"usec": "us", "micros": "us", "microsecond": "us", "microseconds": "us",
	"nsec": "ns", "nanos": "ns", "nanosecond": "ns", "nanoseconds": "ns",
}

// exponent is a number written with an exponent, 1e30 or 1.5E-3, which
// Go's durations do not read.
var exponent = regexp.MustCompile(`^[-+]?[0-9.]+[eE][-+]?[0-9]+`)
