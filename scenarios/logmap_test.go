package scenarios

import (
	"strings"
	"testing"
)

const logScenario = `name = "logged"
[run]
duration = "1s"
[workload]
rate = 1.0
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
[log]
format = "json"
time = "ts"
time_format = "unix_ms"
tenant = "key"
method = "verb"
path = "url"
unmatched = "refuse"
reorder = "0s"
`

// The [log] table is read, checked and written back in the scenario as
// run.
func TestLogTable(t *testing.T) {
	sc, err := Parse("logged.toml", []byte(logScenario))
	if err != nil {
		t.Fatal(err)
	}
	m := sc.Log
	if m == nil || m.Format != "json" || m.Time != "ts" || m.TimeFormat != "unix_ms" || m.Tenant != "key" || m.Reorder == nil || *m.Reorder != 0 {
		t.Fatalf("log %+v", m)
	}
	if got := m.Mapping(); got.Tenant != "key" || got.TimeFormat != "unix_ms" || got.Method != "verb" || got.Path != "url" || m.Unmatched != "refuse" {
		t.Errorf("mapping %+v", got)
	}
	resolved, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("again.toml", []byte(resolved))
	if err != nil || again.Log == nil || *again.Log.Reorder != 0 || again.Log.Time != "ts" || again.Log.Path != "url" || again.Log.Unmatched != "refuse" {
		t.Errorf("the scenario as run loses the [log] table: %v\n%s", err, resolved)
	}
	for bad, want := range map[string]string{
		`time_format = "unix_ms"`: `logged.toml:12: log.time_format: unknown format "yesterday"`,
		`format = "json"`:         `log.format: unknown value "jsonn"`,
		`tenant = "key"`:          `log.tennant`,
		`unmatched = "refuse"`:    `log.unmatched: unknown value "skip"`,
	} {
		text := strings.Replace(logScenario, bad, map[string]string{`time_format = "unix_ms"`: `time_format = "yesterday"`, `format = "json"`: `format = "jsonn"`,
			`tenant = "key"`: `tennant = "key"`, `unmatched = "refuse"`: `unmatched = "skip"`}[bad], 1)
		if _, err := Parse("logged.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", bad, err, want)
		}
	}
}
