package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Common random numbers: two runs that differ only in a limiter see the
// same arrivals, interval by interval, so a comparison measures the policy,
// not the noise.
func TestCompareOnCommonRandomNumbers(t *testing.T) {
	series := func(sets []scenarios.Override) ([]float64, int64) {
		sc, err := load("token-bucket", sets)
		if err != nil {
			t.Fatal(err)
		}
		out, err := sc.Simulate(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Series.Column("arrivals"), out.Results.Requests.Arrived
	}
	a, na := series(nil)
	b, nb := series([]scenarios.Override{{Key: "client.limiter.quota.rate", Value: 40.0}})
	// The slower run drains longer: its extra intervals have no arrivals.
	n := min(len(a), len(b))
	rest := append(slices.Clone(a[n:]), b[n:]...)
	if na != nb || !slices.Equal(a[:n], b[:n]) || slices.ContainsFunc(rest, func(v float64) bool { return v != 0 }) {
		t.Fatalf("a limiter change moved the arrivals: %d vs %d arrived", na, nb)
	}
}

// The comparison names the better run per metric and carries every run's
// full results.
func TestCompareJSON(t *testing.T) {
	code, out, errOut := cli("compare", "fail-sustained-429", "token-bucket", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Runs []struct {
			Name    string  `json:"name"`
			Rate429 float64 `json:"rate_429"`
		} `json:"runs"`
		Differences []difference `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 2 || c.Runs[0].Name != "fail-sustained-429" || c.Runs[0].Rate429 < 0.1 {
		t.Fatalf("runs %+v", c.Runs)
	}
	for _, d := range c.Differences {
		if d.Metric == "rate_429" && d.Best != "token-bucket" {
			t.Fatalf("best 429 rate: %q", d.Best)
		}
		if d.Metric == "offered_rps" && d.Best != "" {
			t.Fatalf("offered load has no better direction, yet %q is marked best", d.Best)
		}
	}
	if code, _, _ := cli("compare", "token-bucket"); code != exitUsage {
		t.Fatalf("one scenario: exit %d", code)
	}
	code, txt, _ := cli("compare", "fail-sustained-429", "token-bucket")
	if code != exitOK || !strings.Contains(txt, "rate_429") || !strings.Contains(txt, " *") {
		t.Fatalf("table: %s", txt)
	}
}

// With replications, each value carries its confidence interval and each
// later run its paired difference from the first: the FIFO crawler's
// shorter wait tail is a significant difference, its equal success count
// is not.
func TestCompareReplicationsPaired(t *testing.T) {
	code, out, errOut := cli("compare", "seed-crawler", "seed-crawler-fifo", "--replications", "4", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Differences []difference `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, d := range c.Differences {
		if len(d.CI95) != 2 || len(d.Paired) != 1 {
			t.Fatalf("%s: ci95 %v, paired %v", d.Metric, d.CI95, d.Paired)
		}
		switch d.Metric {
		case "worst_wait_p99_s":
			found++
			if p := d.Paired[0]; !p.Significant || p.Diff >= 0 {
				t.Errorf("the FIFO bucket's p99 wait: %+v, want a significant decrease", p)
			}
		case "succeeded":
			found++
			if d.Paired[0].Significant {
				t.Errorf("equal success counts called significant: %+v", d.Paired[0])
			}
		}
	}
	if found != 2 {
		t.Fatal("metrics missing from the comparison")
	}
}

// compare -o writes the comparison report: the table and every run's
// headline in compare.md and compare.html, and the overlay charts, one
// colour per run.
func TestCompareReport(t *testing.T) {
	src, err := scenarios.ExampleSource("fail-thundering-herd")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "herd.toml")
	src = append(src, []byte("\n[[variant]]\nname = \"jitter\"\nset = [\"client.on_429.resume_jitter=5s\"]\n")...)
	if err := os.WriteFile(sc, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, errOut := cli("compare", sc, "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	md, err := os.ReadFile(filepath.Join(out, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fail-thundering-herd/jitter", "| rate_429 |", "Thundering herd after a pause", "compare-429-rate.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
	for _, f := range []string{"compare.html", "compare-429-rate.png", "compare-goodput.svg", "compare-wait-cdf.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A later replication that measured no steady state is named on the run
// the comparison reports, with its diagnosis: its zeros are in the means,
// and a run with such zeros is never marked best.
func TestCompareNamesReplicationsWithNoSteadyState(t *testing.T) {
	code, out, errOut := cli("compare", "reference-model", "seed-crawler", "--set", "run.requests=2000", "--set", "run.warmup=1h",
		"--replications", "2", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Runs []struct {
			Name      string              `json:"name"`
			Warnings  []string            `json:"warnings"`
			Diagnoses []metrics.Diagnosis `json:"diagnoses"`
		} `json:"runs"`
		Differences []difference `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		named := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "replication 2 of 2: the run ended at ") })
		diagnosed := slices.ContainsFunc(r.Diagnoses, func(d metrics.Diagnosis) bool { return d.Code == "no_steady_state" })
		if len(r.Warnings) < 2 || !named || !diagnosed {
			t.Errorf("%s: warnings %q, diagnoses %v", r.Name, r.Warnings, r.Diagnoses)
		}
	}
	// Neither measured anything: neither is the best at anything.
	for _, d := range c.Differences {
		if d.Best != "" {
			t.Errorf("%s: %s marked best with no steady state", d.Metric, d.Best)
		}
	}
}

// The replications of a comparison run at once, one a processor; what it
// prints does not depend on how many there are, and neither does `run`
// with replications.
func TestReplicationsSameOnAnyProcessors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, args := range [][]string{
		{"compare", "seed-crawler", "seed-crawler-fifo", "token-bucket", "--replications", "3", "--json", "--quiet"},
		{"run", "handling-429", "--set", "run.replications=5", "--json", "--quiet"},
	} {
		var outs []string
		for _, procs := range []int{1, 2, 5} {
			runtime.GOMAXPROCS(procs)
			code, out, errOut := cli(args...)
			if code != exitOK {
				t.Fatalf("%v on %d processors: exit %d: %s", args, procs, code, errOut)
			}
			outs = append(outs, out)
		}
		if outs[1] != outs[0] || outs[2] != outs[0] {
			t.Errorf("%v: the output depends on the number of processors", args[:2])
		}
	}
}
