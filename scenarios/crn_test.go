package scenarios

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/sim/client"
)

// traceRoutes runs sc with a trace of its first n requests and returns
// each one's row name ("host api, tenant beta"), by request number,
// without the path (which the policy chooses).
func traceRoutes(t *testing.T, sc *Scenario, n int) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := sc.Simulate(client.Options{Trace: &buf, TraceSelect: client.TraceSelect{Requests: n}}); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`"name":"request (\d+) \(([^)]*)\)"`)
	routes := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(buf.String(), -1) {
		name, _, _ := strings.Cut(m[2], ", path ")
		routes[m[1]] = name
	}
	if len(routes) != n {
		t.Fatalf("the trace names %d requests, want %d", len(routes), n)
	}
	return routes
}

// Common random numbers: a policy with more client instances or more
// request paths draws each arrival's instance and path from streams of
// their own, so every arrival still goes to the same host and tenant.
// Drawn from the routing stream, one extra draw per arrival re-dealt
// every later arrival's host and tenant.
func TestRoutingIndependentOfInstancesAndPaths(t *testing.T) {
	const n = 3000
	load := func(extra string, sets ...string) *Scenario {
		t.Helper()
		src, err := bundled.ReadFile("examples/composed-limits.toml")
		if err != nil {
			t.Fatal(err)
		}
		var sets2 []Override
		for _, s := range sets {
			o, err := ParseOverride(s)
			if err != nil {
				t.Fatal(err)
			}
			sets2 = append(sets2, o)
		}
		sc, err := ParseWith("composed-limits.toml", append(src, extra...), sets2)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	base := traceRoutes(t, load(""), n)
	twoPaths := `
[[client.path]]
name = "interactive"
weight = 1.0
limiters = ["per_tenant", "global", "per_host"]

[[client.path]]
name = "batch"
weight = 1.0
limiters = ["per_tenant", "global", "per_host"]
`
	for what, sc := range map[string]*Scenario{
		"client.instances=3":        load("", "client.instances=3"),
		"two paths":                 load(twoPaths),
		"two paths, four instances": load(twoPaths, "client.instances=4"),
	} {
		got := traceRoutes(t, sc, n)
		moved := 0
		for seq, r := range base {
			if got[seq] != r {
				moved++
			}
		}
		if moved > 0 {
			t.Errorf("%s: %d of %d requests went to another host or tenant than with one instance and one path", what, moved, n)
		}
	}
}
