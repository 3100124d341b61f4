package scenarios

import (
	"github.com/limitsim/limitsim/logs"
)

// LogMapping is the [log] table: how `limitsim replay` reads an access
// log for this scenario, each key as the --log-* flag of its name reads
// it (a flag given overrides its key). Other commands ignore it.
type LogMapping struct {
	Format      string    `toml:"format,omitempty"`
	Time        string    `toml:"time,omitempty"`
	TimeFormat  string    `toml:"time_format,omitempty"`
	Host        string    `toml:"host,omitempty"`
	Status      string    `toml:"status,omitempty"`
	Latency     string    `toml:"latency,omitempty"`
	LatencyUnit string    `toml:"latency_unit,omitempty"`
	Tenant      string    `toml:"tenant,omitempty"`
	Cost        string    `toml:"cost,omitempty"`
	Method      string    `toml:"method,omitempty"`
	Path        string    `toml:"path,omitempty"`
	Unmatched   string    `toml:"unmatched,omitempty"` // draw or refuse
	Remaining   string    `toml:"remaining,omitempty"`
	Reset       string    `toml:"reset,omitempty"`
	Reorder     *Duration `toml:"reorder,omitempty"` // nil: the reader's default; 0: none
}

var logKeys = []string{"format", "time", "time_format", "host", "status", "latency", "latency_unit", "tenant", "cost", "method", "path", "unmatched", "remaining", "reset", "reorder"}

// logMapping reads the [log] table (nil when absent).
func (d *decoder) logMapping(t *table) *LogMapping {
	if t == nil {
		return nil
	}
	m := &LogMapping{Format: t.enum("format", "", "auto", "clf", "json", "csv"),
		Time: t.str("time", ""), TimeFormat: t.str("time_format", ""), Host: t.str("host", ""),
		Status: t.str("status", ""), Latency: t.str("latency", ""), LatencyUnit: t.enum("latency_unit", "", "s", "ms"),
		Tenant: t.str("tenant", ""), Cost: t.str("cost", ""), Method: t.str("method", ""), Path: t.str("path", ""),
		Unmatched: t.enum("unmatched", "", "draw", "refuse"), Remaining: t.str("remaining", ""), Reset: t.str("reset", "")}
	for _, k := range []string{"time", "time_format", "host", "status", "latency", "tenant", "cost", "method", "path", "remaining", "reset"} {
		if t.has(k) && t.str(k, "") == "" { // "" would read as the key left out
			d.problem(t.key(k), "is empty: name a field of the log, or leave the key out for its default")
		}
	}
	if err := logs.CheckTimeFormat(m.TimeFormat); err != nil {
		d.problem(t.key("time_format"), "unknown format %q (valid: clf, rfc3339, unix, unix_ms, or a Go layout such as 2006-01-02 15:04:05)", m.TimeFormat)
	}
	if t.has("reorder") {
		r := Duration(t.duration("reorder", 0, 0, false))
		m.Reorder = &r
	}
	t.done(logKeys...)
	return m
}

// Mapping is the table as the log reader's mapping.
func (m *LogMapping) Mapping() logs.Mapping {
	return logs.Mapping{Time: m.Time, TimeFormat: m.TimeFormat, Host: m.Host, Status: m.Status, Latency: m.Latency,
		LatencyUnit: m.LatencyUnit, Tenant: m.Tenant, Cost: m.Cost, Method: m.Method, Path: m.Path, Remaining: m.Remaining, Reset: m.Reset}
}
