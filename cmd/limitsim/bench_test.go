package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunReferenceModel times `limitsim run` on the bundled
// reference-model scenario — load, build, simulate, analyse and the text
// summary — with b.N requests, and reports simulated requests per wall
// second and events per request.
func BenchmarkRunReferenceModel(b *testing.B) {
	benchmarkRun(b, "reference-model", false)
}

// BenchmarkRunReferenceModelReports is BenchmarkRunReferenceModel with every
// output of -o written (charts, reports, CSV).
func BenchmarkRunReferenceModelReports(b *testing.B) {
	benchmarkRun(b, "reference-model", true)
}

func benchmarkRun(b *testing.B, scenario string, reports bool) {
	n := max(b.N, 1000)
	sets := overrides{{Key: "run.requests", Value: int64(n)}, {Key: "run.seed", Value: int64(1)}, {Key: "run.duration"}}
	b.ReportAllocs()
	b.ResetTimer()
	_, rate, err := benchProduct(scenario, sets, reports, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "req/s")
}

// BenchmarkRunManyTenants times `limitsim run` on 10,000 tenants, each with
// its own token bucket, behind one shared semaphore (600 s at 1,000
// requests/s); BenchmarkRunOneTenant is the same traffic with one tenant
// and one bucket: the ratio of the two is the cost of the scopes.
func BenchmarkRunManyTenants(b *testing.B) { benchmarkScale(b, 10_000, "tenant", false) }

// BenchmarkRunManyTenantsReports is BenchmarkRunManyTenants with -o.
func BenchmarkRunManyTenantsReports(b *testing.B) { benchmarkScale(b, 10_000, "tenant", true) }

// BenchmarkRunManyHosts is the same traffic over 1,000 hosts, each with its
// own bucket and its own quota.
func BenchmarkRunManyHosts(b *testing.B) { benchmarkScale(b, 1_000, "host", false) }

// BenchmarkRunManyHostsReports is BenchmarkRunManyHosts with -o.
func BenchmarkRunManyHostsReports(b *testing.B) { benchmarkScale(b, 1_000, "host", true) }

// BenchmarkRunOneTenant is the one-scope baseline of BenchmarkRunManyTenants.
func BenchmarkRunOneTenant(b *testing.B) { benchmarkScale(b, 1, "tenant", false) }

// BenchmarkRunOneHost is the one-scope baseline of BenchmarkRunManyHosts:
// the same traffic to one host, with one bucket and one quota at the
// thousand hosts' total rates.
func BenchmarkRunOneHost(b *testing.B) { benchmarkScale(b, 1, "host", false) }

func benchmarkScale(b *testing.B, n int, scope string, reports bool) {
	path := filepath.Join(b.TempDir(), "scale.toml")
	if err := os.WriteFile(path, []byte(scaleScenario(n, scope)), 0o644); err != nil {
		b.Fatal(err)
	}
	sets := overrides{{Key: "run.seed", Value: int64(1)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := benchProduct(path, sets, reports, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// scaleScenario writes a scenario of n tenants or hosts of equal weight,
// each with its own token bucket of 1.2× its share of 1,000 requests/s.
func scaleScenario(n int, scope string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "name = \"scale-%s-%d\"\n[run]\nseed = 1\nduration = \"600s\"\nwarmup = \"30s\"\n", scope, n)
	s.WriteString("[workload]\narrival = \"poisson\"\nrate = 1000.0\n")
	if n > 1 {
		fmt.Fprintf(&s, "%ss = [\n", scope)
		for i := range n {
			fmt.Fprintf(&s, "  { name = \"%c%d\", weight = 1.0 },\n", scope[0], i)
		}
		s.WriteString("]\n")
	}
	fmt.Fprintf(&s, "[client]\nmax_waiting = 5000\n[[client.limiter]]\nname = \"per\"\nkind = \"token_bucket\"\nrate = %g\nburst = 5\n", 1200.0/float64(n))
	if n > 1 {
		fmt.Fprintf(&s, "scope = %q\n", scope)
	}
	s.WriteString("[[client.limiter]]\nname = \"conns\"\nkind = \"semaphore\"\npermits = 400\n")
	s.WriteString("[[upstream]]\nhost = \"*\"\nlatency = { dist = \"lognormal\", median = \"100ms\", sigma = 0.5 }\n")
	if scope == "host" {
		fmt.Fprintf(&s, "quota = { kind = \"token_bucket\", rate = %g, burst = 5 }\n", 2000.0/float64(n))
	}
	return s.String()
}

// BenchmarkRunLongHorizon times `limitsim run` over 30 days of one-second
// intervals at 0.05 requests/s: the cost of simulated time itself (a row,
// eight usage readings and a tick an interval), the series moving to its
// temporary file and the diagnoses reading it back. bench/README.md has
// its peak RSS, which stays flat as the days grow.
func BenchmarkRunLongHorizon(b *testing.B) { benchmarkLong(b, false) }

// BenchmarkRunLongHorizonReports is BenchmarkRunLongHorizon with -o: the
// charts and timeseries.csv read the spilled series back.
func BenchmarkRunLongHorizonReports(b *testing.B) { benchmarkLong(b, true) }

func benchmarkLong(b *testing.B, reports bool) {
	path := filepath.Join(b.TempDir(), "long.toml")
	scenario := `name = "long-horizon"
[run]
duration = "720h"
[workload]
rate = 0.05
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 4
[[upstream]]
host = "*"
latency = { dist = "constant", value = "100ms" }
`
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := benchProduct(path, overrides{{Key: "run.seed", Value: int64(1)}}, reports, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunFixVerified times `limitsim run` on the bundled failure
// scenarios with their fix verified (the default); BenchmarkRunFixUnverified
// the same with --no-verify: the ratio of the two is what verifying a fix
// costs.
func BenchmarkRunFixVerified(b *testing.B) { benchmarkFix(b) }

// BenchmarkRunFixUnverified is BenchmarkRunFixVerified with --no-verify.
func BenchmarkRunFixUnverified(b *testing.B) { benchmarkFix(b, "--no-verify") }

func benchmarkFix(b *testing.B, flags ...string) {
	names := []string{"fail-sustained-429", "fail-shared-quota", "fail-tenant-starvation", "fail-unbounded-waiting", "fail-thundering-herd", "fail-lock-held"}
	for b.Loop() {
		for _, name := range names {
			if code, _, errOut := cli(append([]string{"run", name, "--quiet"}, flags...)...); code != exitOK {
				b.Fatalf("%s: exit %d: %s", name, code, errOut)
			}
		}
	}
}
