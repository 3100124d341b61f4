package main

import (
	"encoding/json"
	"fmt"
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
	// One run has no interval: the verdict says so, and no cell is starred
	// or marked.
	code, txt, _ := cli("compare", "fail-sustained-429", "token-bucket")
	if code != exitOK || !strings.Contains(txt, "rate_429") || !strings.Contains(txt, "\ntoken-bucket vs fail-sustained-429 (one run, no interval): ") ||
		strings.Contains(txt, " *\n") || strings.Contains(txt, "(≠)  ") || !strings.Contains(txt, "no * and no (≠)") {
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
	for _, want := range []string{"fail-thundering-herd/jitter", "| rate_429 |", "| request_p99_s |", "Thundering herd after a pause", "compare-429-rate.png", "no * and no (≠)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
	// The verdict comes first.
	if !strings.HasPrefix(string(md), "# limitsim comparison\n\n- fail-thundering-herd/jitter vs fail-thundering-herd (one run, no interval): ") {
		t.Errorf("compare.md does not open with the verdict:\n%.300s", md)
	}
	html, err := os.ReadFile(filepath.Join(out, "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	verdict, key := strings.Index(string(html), "<li>fail-thundering-herd/jitter vs fail-thundering-herd (one run"), strings.Index(string(html), "no * and no (≠)")
	if verdict < 0 || key < 0 || verdict > strings.Index(string(html), "<table>") {
		t.Errorf("compare.html: the verdict at %d, the key at %d", verdict, key)
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

// comparedVerdicts is what the verdict tests read of `compare --json`.
type comparedVerdicts struct {
	Differences  []difference      `json:"differences"`
	Threshold    float64           `json:"threshold"`
	Replications int               `json:"replications"`
	Verdicts     []versusJSON      `json:"verdicts"`
	Starred      map[string]string `json:"starred"`
	BestOverall  string            `json:"best_overall"`
}

// compareJSON runs `compare ARGS --json --quiet` and decodes the verdicts.
func compareJSON(t *testing.T, args ...string) (comparedVerdicts, string) {
	t.Helper()
	code, out, errOut := cli(append(append([]string{"compare"}, args...), "--json", "--quiet")...)
	if code != exitOK {
		t.Fatalf("compare %v: exit %d: %s", args, code, errOut)
	}
	var c comparedVerdicts
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	return c, out
}

// verdictOn is the verdict of run on metric in c.
func verdictOn(t *testing.T, c comparedVerdicts, run, metric string) verdictJSON {
	t.Helper()
	for _, v := range c.Verdicts {
		for _, m := range v.Metrics {
			if v.Run == run && m.Metric == metric {
				return m
			}
		}
	}
	t.Fatalf("no verdict of %s on %s", run, metric)
	return verdictJSON{}
}

// overallOf is the overall verdict of run in c.
func overallOf(c comparedVerdicts, run string) string {
	for _, v := range c.Verdicts {
		if v.Run == run {
			return v.Overall
		}
	}
	return ""
}

// tokenBucketWithVariants writes the bundled token-bucket scenario (80/s
// offered, a bucket of 90/s) with [[variant]] blocks, each NAME=KEY=VALUE,
// and returns its path.
func tokenBucketWithVariants(t *testing.T, variants ...string) string {
	t.Helper()
	src, err := scenarios.ExampleSource("token-bucket")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		name, set, _ := strings.Cut(v, "=")
		src = fmt.Appendf(src, "\n[[variant]]\nname = %q\nset = [%q]\n", name, set)
	}
	path := filepath.Join(t.TempDir(), "tb.toml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Through the command line: a variant that changes nothing is
// indistinguishable on every metric, and ties the base, so nothing is
// starred; one whose bucket cuts goodput by a fifth is worse, and the
// reverse comparison better, with the faster bucket's goodput starred and
// the faster bucket best overall.
func TestCompareVerdictsThroughTheCLI(t *testing.T) {
	sc := tokenBucketWithVariants(t, "same=client.limiter.conns.permits=40", "slow=client.limiter.quota.rate=64")
	c, out := compareJSON(t, sc, "--replications", "3")
	if c.Threshold != 0.01 || c.Replications != 3 || len(c.Verdicts) != 2 {
		t.Fatalf("threshold %v, replications %d, %d verdicts", c.Threshold, c.Replications, len(c.Verdicts))
	}
	for _, m := range c.Verdicts[0].Metrics {
		if m.Verdict != "indistinguishable" || m.Diff != 0 {
			t.Errorf("the same policy: %s %s (%g)", m.Metric, m.Verdict, m.Diff)
		}
	}
	if overallOf(c, "token-bucket/same") != "indistinguishable" || !strings.Contains(out, `"line": "token-bucket/same vs token-bucket: indistinguishable on every metric"`) {
		t.Errorf("the same policy's line: %+v", c.Verdicts[0])
	}
	if g := verdictOn(t, c, "token-bucket/slow", "goodput_rps"); g.Verdict != "worse" || *g.Relative > -0.1 || g.Better != "higher" || !g.Significant {
		t.Errorf("the slow bucket's goodput: %+v", g)
	}
	if len(c.Starred) != 0 || c.BestOverall != "" {
		t.Errorf("starred %v, best overall %q: the base and the same policy tie", c.Starred, c.BestOverall)
	}
	// The reverse: the slow bucket first.
	slow := tokenBucketWithVariants(t, "fast=client.limiter.quota.rate=90")
	c, _ = compareJSON(t, slow, "--set", "client.limiter.quota.rate=64", "--replications", "3")
	if g := verdictOn(t, c, "token-bucket/fast", "goodput_rps"); g.Verdict != "better" || *g.Relative < 0.1 {
		t.Errorf("the fast bucket's goodput: %+v", g)
	}
	if c.Starred["goodput_rps"] != "token-bucket/fast" || c.BestOverall != "token-bucket/fast" || overallOf(c, "token-bucket/fast") != "better" {
		t.Errorf("starred %v, best overall %q", c.Starred, c.BestOverall)
	}
	code, txt, _ := cli("compare", slow, "--set", "client.limiter.quota.rate=64", "--replications", "3", "--quiet")
	if code != exitOK || !strings.HasPrefix(txt, "token-bucket/fast vs token-bucket: better goodput (+") || !strings.Contains(txt, "best overall: token-bucket/fast") ||
		!strings.Contains(txt, "(≠) *") || !strings.Contains(txt, "* best of the row") {
		t.Errorf("exit %d: %s", code, txt)
	}
}

// A bucket 0.5% faster than the one that binds gives significantly more
// goodput, yet inside the 1% threshold: indistinguishable, unless
// --threshold is lower. A threshold that is not a percentage is refused.
func TestCompareThresholdFlag(t *testing.T) {
	sc := tokenBucketWithVariants(t, "nudge=client.limiter.quota.rate=64.32")
	args := []string{sc, "--set", "client.limiter.quota.rate=64", "--replications", "5"}
	c, _ := compareJSON(t, args...)
	g := verdictOn(t, c, "token-bucket/nudge", "goodput_rps")
	if g.Verdict != "indistinguishable" || !g.Significant || g.BeyondThreshold || *g.Relative <= 0.001 {
		t.Errorf("0.5%% more goodput at a 1%% threshold: %+v", g)
	}
	if c.Starred["goodput_rps"] != "" {
		t.Errorf("goodput starred inside the threshold: %v", c.Starred)
	}
	c, _ = compareJSON(t, append(args, "--threshold", "0.1%")...)
	if g := verdictOn(t, c, "token-bucket/nudge", "goodput_rps"); c.Threshold != 0.001 || g.Verdict != "better" || !g.BeyondThreshold {
		t.Errorf("0.5%% more goodput at a 0.1%% threshold: %v, %+v", c.Threshold, g)
	}
	for _, bad := range []string{"1", "-1%", "lots", ""} {
		if code, _, errOut := cli("compare", "token-bucket", "sliding-window", "--threshold", bad); code != exitUsage || !strings.Contains(errOut, `for "--threshold" flag: threshold`) {
			t.Errorf("--threshold %q: exit %d: %s", bad, code, errOut)
		}
	}
}

// A bucket so slow that no 429 comes back, at half the goodput, is better
// on the 429 rate but starred nowhere and not best overall: the verdict
// is mixed. `differences` still names it best on the 429 rate, as it
// always has.
func TestCompareFewer429sWithHalfTheGoodput(t *testing.T) {
	sc := tokenBucketWithVariants(t, "timid=client.limiter.quota.rate=50")
	args := []string{sc, "--set", "workload.rate=120", "--set", "client.limiter.quota.rate=110", "--replications", "3"}
	c, _ := compareJSON(t, args...)
	if r := verdictOn(t, c, "token-bucket/timid", "rate_429"); r.Verdict != "better" || r.Baseline < 0.01 || r.Value != 0 {
		t.Errorf("the timid bucket's 429 rate: %+v", r)
	}
	if g := verdictOn(t, c, "token-bucket/timid", "goodput_rps"); g.Verdict != "worse" {
		t.Errorf("the timid bucket's goodput: %+v", g)
	}
	if c.Starred["rate_429"] != "" || c.BestOverall != "" || overallOf(c, "token-bucket/timid") != "mixed" {
		t.Errorf("starred %v, best overall %q, overall %q", c.Starred, c.BestOverall, overallOf(c, "token-bucket/timid"))
	}
	i := slices.IndexFunc(c.Differences, func(d difference) bool { return d.Metric == "rate_429" })
	if i < 0 || c.Differences[i].Best != "token-bucket/timid" {
		t.Errorf("differences: %+v", c.Differences)
	}
	code, txt, _ := cli(append([]string{"compare"}, append(args, "--quiet")...)...)
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "rate_429 ") && strings.Contains(l, "*") {
			t.Errorf("exit %d: the 429 rate is starred: %s", code, l)
		}
	}
}

// The JSON keeps what it printed before verdicts: runs, then differences
// with the same eight metrics in the same order, then the new fields.
func TestCompareJSONKeepsItsFields(t *testing.T) {
	c, out := compareJSON(t, "token-bucket", "sliding-window")
	var names []string
	for _, d := range c.Differences {
		names = append(names, d.Metric)
	}
	if !slices.Equal(names, differenceMetrics) || len(differenceMetrics) != 8 {
		t.Errorf("differences: %v", names)
	}
	order := []string{`"runs": [`, `"differences": [`, `"threshold": 0.01`, `"replications": 1`, `"verdicts": [`, `"starred": {}`}
	at := 0
	for _, key := range order {
		i := strings.Index(out, "\n  "+key)
		if i < at {
			t.Fatalf("%s is not after the fields before it", key)
		}
		at = i
	}
	if strings.Contains(out, `"best_overall"`) || strings.Contains(out, `"ci95"`) || strings.Contains(out, `"paired"`) {
		t.Errorf("one run printed an interval, a pairing or a best run overall")
	}
}

// Two files whose scenarios share a name are told apart in compare's
// rows and verdicts, as in replay's: the second is name-2.
func TestCompareNamesAlikeScenariosApart(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct{ file, rate string }{{"a.toml", "30.0"}, {"b.toml", "60.0"}} {
		body := "name = \"provider\"\n[run]\nduration = \"5s\"\n[workload]\nrate = " + f.rate + "\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"
		if err := os.WriteFile(filepath.Join(dir, f.file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errText := cli("compare", filepath.Join(dir, "a.toml"), filepath.Join(dir, "b.toml"), "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if !strings.Contains(out, "provider-2 vs provider (") || !strings.Contains(out, "provider  provider-2") {
		t.Errorf("the second run is not named provider-2:\n%s", out)
	}
}
