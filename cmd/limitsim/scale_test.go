package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// folderSize is the total size of the files in dir.
func folderSize(t *testing.T, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

// Ten thousand tenants and a thousand hosts, each with its own limiter,
// give an output folder under 5 MiB that still holds every entity:
// metrics.json lists the 20 worst with the totals, tenants.csv and
// scopes.csv list all of them, timeseries.csv keeps 20 hosts' columns, and
// `limitsim report DIR` redraws from the complete lists.
func TestManyEntitiesOutputBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 10,000 tenants")
	}
	for _, c := range []struct {
		n     int
		scope string
	}{{10_000, "tenant"}, {1_000, "host"}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "scale.toml")
		if err := os.WriteFile(path, []byte(scaleScenario(c.n, c.scope)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		if code, _, stderr := cli("run", path, "--quiet", "--set", "run.duration=60s", "--set", "run.warmup=5s", "-o", out); code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.scope, code, stderr)
		}
		if size := folderSize(t, out); size > 5<<20 {
			t.Errorf("%d %ss: output folder %d bytes, over 5 MiB", c.n, c.scope, size)
		}
		data, err := os.ReadFile(filepath.Join(out, "metrics.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Tenants      []json.RawMessage `json:"tenants"`
			TenantsTotal int               `json:"tenants_total"`
			Limiters     []struct {
				Scopes      []json.RawMessage `json:"scopes"`
				ScopesTotal int               `json:"scopes_total"`
			} `json:"limiters"`
			Upstreams []json.RawMessage `json:"upstreams"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Limiters[0].Scopes) != 20 || m.Limiters[0].ScopesTotal != c.n {
			t.Errorf("%s: metrics.json lists %d of %d scopes, want 20 of %d", c.scope, len(m.Limiters[0].Scopes), m.Limiters[0].ScopesTotal, c.n)
		}
		csvLines := func(name string) int {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			return strings.Count(string(b), "\n")
		}
		if got := csvLines("scopes.csv"); got != c.n+1 {
			t.Errorf("%s: scopes.csv has %d lines, want %d", c.scope, got, c.n+1)
		}
		switch c.scope {
		case "tenant":
			if len(m.Tenants) != 20 || m.TenantsTotal != c.n || csvLines("tenants.csv") != c.n+1 {
				t.Errorf("tenants: metrics.json lists %d of %d, tenants.csv %d lines", len(m.Tenants), m.TenantsTotal, csvLines("tenants.csv"))
			}
			r, _, _, err := report.ReadRun(out)
			if err != nil || len(r.Tenants) != c.n || len(r.Limiters[0].Scopes) != c.n {
				t.Errorf("report DIR reads back %d tenants and %d scopes (err %v), want %d", len(r.Tenants), len(r.Limiters[0].Scopes), err, c.n)
			}
		case "host":
			if len(m.Upstreams) != c.n {
				t.Errorf("hosts: upstreams[] lists %d, want every one of %d", len(m.Upstreams), c.n)
			}
			head, _, _ := strings.Cut(func() string { b, _ := os.ReadFile(filepath.Join(out, "timeseries.csv")); return string(b) }(), "\n")
			if got := strings.Count(head, ".responses_429"); got != 20 {
				t.Errorf("hosts: timeseries.csv has %d hosts' columns, want 20", got)
			}
		}
		if code, _, stderr := cli("report", out); code != exitOK {
			t.Errorf("%s: report DIR: exit %d: %s", c.scope, code, stderr)
		}
	}
}
