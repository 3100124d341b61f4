package logs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// fieldSet is one parsed line's fields by name.
type fieldSet interface {
	get(name string) ([]byte, bool)
}

// resolved is a mapping with its defaults filled in for a format: which
// fields must be present (named by the user) and which may be absent.
type resolved struct {
	Mapping
	statusOptional, latencyOptional bool
	timeGrain                       time.Duration     // a layout's grain coarser than a second (a minute for 2006-01-02 15:04), else 0
	names                           map[string]string // hosts and tenants seen, each one string (see text)
	match                           func(method, path []byte) int32
}

// maxInterned bounds the host and tenant names kept so that each is
// allocated once.
const maxInterned = 1 << 12

// resolve fills in the mapping's defaults for format f.
func resolve(m Mapping, f Format, match func(method, path []byte) int32) resolved {
	out := resolved{Mapping: m}
	if f == FormatCLF {
		if out.Method == "" {
			out.Method = "method"
		}
		if out.Path == "" {
			out.Path = "path"
		}
		if out.Time == "" {
			out.Time = "time_local"
		}
		if out.TimeFormat == "" {
			out.TimeFormat = "clf"
		}
	} else if out.Time == "" {
		out.Time = "time"
	}
	if grain, _ := layoutGrain(out.TimeFormat); grain > time.Second { // checked by NewReader
		out.timeGrain = grain
	}
	if out.Status == "" {
		out.Status, out.statusOptional = "status", true
	}
	if out.Latency == "" {
		out.Latency, out.latencyOptional = "request_time", true
	}
	if out.Method != "" || out.Path != "" {
		out.match = match
	}
	return out
}

// fill reads the mapped fields of fs into rec.
func (m *resolved) fill(fs fieldSet, rec *Record) error {
	raw, ok := fs.get(m.Time)
	if !ok {
		return fmt.Errorf("no time field %q", m.Time)
	}
	t, prec, err := parseTime(raw, m.TimeFormat)
	if err != nil {
		return fmt.Errorf("time %q: %w", clip(raw), err)
	}
	rec.Time, rec.Precision = t, max(prec, m.timeGrain)
	if rec.Host, err = m.text(fs, m.Host, "host", false); err != nil {
		return err
	}
	if rec.Tenant, err = m.text(fs, m.Tenant, "tenant", true); err != nil {
		return err
	}
	if err := m.status(fs, rec); err != nil {
		return err
	}
	if err := m.latency(fs, rec); err != nil {
		return err
	}
	if m.match != nil {
		m.request(fs, rec)
	}
	return m.extras(fs, rec)
}

// request classes the record by its method and URL path (either absent:
// nil) through the caller's match.
func (m *resolved) request(fs fieldSet, rec *Record) {
	var method, path []byte
	if m.Method != "" {
		if raw, ok := fs.get(m.Method); ok && len(raw) > 0 && string(raw) != "-" {
			method = raw
		}
	}
	if m.Path != "" {
		if raw, ok := fs.get(m.Path); ok {
			path = URLPath(raw)
		}
	}
	rec.Match = m.match(method, path)
}

// URLPath is the path of a request target (RFC 9112, section 3.2): raw
// without its query string or fragment, and, in the absolute form
// (http://host/path), without its scheme and host; nil for none ("" or
// "-"). It returns a slice of raw.
func URLPath(raw []byte) []byte {
	if i := bytes.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if at := bytes.Index(raw, []byte("://")); at > 0 && raw[0] != '/' {
		rest := raw[at+3:]
		if i := bytes.IndexByte(rest, '/'); i >= 0 {
			raw = rest[i:]
		} else {
			raw = raw[at+1 : at+2] // the host's root, "/"
		}
	}
	if len(raw) == 0 || string(raw) == "-" {
		return nil
	}
	return raw
}

// text reads a text field that the mapping names (or "" when it names
// none). A field that logs no value ("-", as CLF's $remote_user of an
// anonymous request, or empty) reads as "" when none is true; else an
// empty one is a bad line.
func (m *resolved) text(fs fieldSet, name, what string, none bool) (string, error) {
	if name == "" {
		return "", nil
	}
	raw, ok := fs.get(name)
	if ok && none && (len(raw) == 0 || string(raw) == "-") {
		return "", nil
	}
	if !ok || len(raw) == 0 {
		return "", fmt.Errorf("no %s field %q", what, name)
	}
	if s, ok := m.names[string(raw)]; ok { // no allocation for the lookup
		return s, nil
	}
	s := string(raw)
	if len(m.names) < maxInterned {
		if m.names == nil {
			m.names = map[string]string{}
		}
		m.names[s] = s
	}
	return s, nil
}

func (m *resolved) status(fs fieldSet, rec *Record) error {
	raw, ok := fs.get(m.Status)
	if !ok {
		if m.statusOptional {
			return nil
		}
		return fmt.Errorf("no status field %q", m.Status)
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 100 || n > 599 {
		return fmt.Errorf("status %q is not an HTTP status", clip(raw))
	}
	rec.Status = n
	return nil
}

// latency reads the latency field: none when it is absent and optional
// (the default request_time), or logs no value ("-", empty); the sum of
// the times it lists, for nginx's $upstream_response_time of a request
// passed to several servers.
func (m *resolved) latency(fs fieldSet, rec *Record) error {
	raw, ok := fs.get(m.Latency)
	if !ok {
		if m.latencyOptional {
			return nil
		}
		return fmt.Errorf("no latency field %q", m.Latency)
	}
	d, has, err := parseLatencies(raw, m.LatencyUnit)
	if err != nil {
		return fmt.Errorf("latency %q: %w", clip(raw), err)
	}
	rec.Latency, rec.HasLatency = d, has
	return nil
}

// parseLatencies reads a latency, or the sum of several separated by
// commas or colons, as nginx logs $upstream_response_time: "0.012,
// 0.034" for two servers tried, "0.100 : 0.020" across an internal
// redirect. A part that logs no value ("-") adds nothing; has is false
// when none does.
func parseLatencies(raw []byte, unit string) (d time.Duration, has bool, err error) {
	if i := bytes.IndexAny(raw, ",:"); i < 0 {
		if len(raw) == 0 || string(raw) == "-" {
			return 0, false, nil
		}
		d, err := parseLatency(raw, unit)
		return d, err == nil, err
	}
	for part := range bytes.FieldsFuncSeq(raw, func(r rune) bool { return r == ',' || r == ':' }) {
		part = bytes.TrimSpace(part)
		if len(part) == 0 || string(part) == "-" {
			continue
		}
		one, err := parseLatency(part, unit)
		if err != nil {
			return 0, false, err
		}
		if d += one; d >= maxLatency {
			return 0, false, errLatency
		}
		has = true
	}
	return d, has, nil
}

// extras reads the cost and the rate-limit headers, when mapped.
func (m *resolved) extras(fs fieldSet, rec *Record) error {
	if m.Cost != "" {
		n, err := m.count(fs, m.Cost, "cost")
		if err != nil {
			return err
		}
		rec.Cost = max(n, 1)
	}
	if m.Remaining != "" {
		if raw, ok := fs.get(m.Remaining); ok && len(raw) > 0 && string(raw) != "-" {
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("remaining %q is not a count", clip(raw))
			}
			rec.Remaining = n
		}
	}
	if m.Reset != "" {
		if raw, ok := fs.get(m.Reset); ok && len(raw) > 0 && string(raw) != "-" {
			d, err := parseLatency(raw, "s")
			if err != nil {
				return fmt.Errorf("reset %q: %w", clip(raw), err)
			}
			rec.Reset = d
		}
	}
	return nil
}

// count reads a whole number ≥ 0.
func (m *resolved) count(fs fieldSet, name, what string) (int64, error) {
	raw, ok := fs.get(name)
	if !ok {
		return 0, fmt.Errorf("no %s field %q", what, name)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a whole number ≥ 0", what, clip(raw))
	}
	return n, nil
}

// maxLatency bounds a latency: a day.
const maxLatency = 24 * time.Hour

var errLatency = errors.New("not a latency ≥ 0 below a day (seconds, or a duration such as 120ms)")

// parseLatency reads seconds (or milliseconds, unit "ms"), or a Go
// duration.
func parseLatency(raw []byte, unit string) (time.Duration, error) {
	scale := time.Second
	if unit == "ms" {
		scale = time.Millisecond
	}
	if d, ok := parseDecimal(raw, scale); ok {
		if d >= maxLatency {
			return 0, errLatency
		}
		return d, nil
	}
	s := string(raw)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		scale := float64(time.Second)
		if unit == "ms" {
			scale = float64(time.Millisecond)
		}
		if !(f >= 0 && f*scale < float64(maxLatency)) {
			return 0, errLatency
		}
		return time.Duration(f*scale + 0.5), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d >= maxLatency {
		return 0, errLatency
	}
	return d, nil
}

// parseDecimal reads a plain decimal number of units of scale, digits
// with an optional fraction (nginx's "0.269"), exactly and without
// allocating; ok is false for anything else (a sign, an exponent, more
// fraction digits than nanoseconds hold, or past a day), which
// parseLatency then reads through strconv.
func parseDecimal(raw []byte, scale time.Duration) (time.Duration, bool) {
	whole, i := int64(0), 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		if whole = whole*10 + int64(raw[i]-'0'); whole > int64(maxLatency/scale) {
			return 0, false
		}
	}
	if i == 0 {
		return 0, false
	}
	d := time.Duration(whole) * scale
	if i == len(raw) {
		return d, true
	}
	if raw[i] != '.' {
		return 0, false
	}
	for unit := scale / 10; i+1 < len(raw); unit /= 10 {
		i++
		c := raw[i]
		if c < '0' || c > '9' || unit == 0 {
			return 0, false
		}
		d += time.Duration(c-'0') * unit
	}
	return d, true
}

// clip shortens a field for an error message.
func clip(raw []byte) string {
	suffix := ""
	if len(raw) > 40 {
		raw, suffix = raw[:40], "…"
	}
	return string(bytes.ToValidUTF8(raw, []byte("?"))) + suffix
}
