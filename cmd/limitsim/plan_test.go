package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// Two instances share a 100/s quota; constant latency, ample demand. The
// highest per-instance rate with under 1% of 429s is 50/s: the planner
// must find it.
const twoInstances = `name = "two"
[run]
duration = "60s"
warmup = "10s"
[workload]
arrival = "poisson"
rate = 300.0
[client]
instances = 2
acquire_timeout = "1s"
[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 10.0
burst = 1
[[upstream]]
host = "*"
latency = { dist = "constant", value = "20ms" }
quota = { kind = "token_bucket", rate = 100.0, burst = 5 }
`

func writeScenario(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "two.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanFindsTheQuotaShare(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	args := []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40:60:5", "--constraint", "rate_429<0.01",
		"--objective", "max:client.limiter.bucket.rate", "--json"}
	code, serial, errOut := cli(append(args, "--workers", "1")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(serial, `"recommended": {
    "client.limiter.bucket.rate": 50
  }`) {
		t.Fatalf("recommended is not 50/s each:\n%s", serial)
	}
	// Parallel output is byte for byte the serial one.
	if _, parallel, _ := cli(append(args, "--workers", "3")...); parallel != serial {
		t.Fatal("--workers 3 changed the output")
	}
}

func TestPlanInfeasibleAndBadGrids(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	code, out, errOut := cli("plan", sc, "--sweep", "client.limiter.bucket.rate=80,90", "--constraint", "rate_429<0.01")
	if code != exitOK || !strings.Contains(out, "no point meets every constraint; the closest to holding: rate_429<0.01") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	for _, bad := range [][]string{
		{"--sweep", "client.limiter.bucket.rate=10:20:0"},
		{"--sweep", "client.limiter.bucket.rate=20:10:1"},
		{"--sweep", "client.limiter.bucket.rate=1:1000:1", "--sweep", "client.instances=1:100:1"},
	} {
		if code, _, _ := cli(append([]string{"plan", sc}, bad...)...); code != exitInvalid {
			t.Errorf("%v: exit %d, want %d", bad, code, exitInvalid)
		}
	}
	if code, _, errOut := cli("plan", sc, "--sweep", "client.limiter.nosuch.rate=1,2"); code != exitInvalid || !strings.Contains(errOut, "nosuch") {
		t.Errorf("an unknown swept key: exit %d: %s", code, errOut)
	}
}

// A search bisects instead of running the grid: the largest rate with
// under 1% of 429s (50/s each) and the smallest rate reaching 60/s of
// goodput (30/s each), each in a handful of runs.
func TestPlanSearch(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	for _, c := range []struct {
		args []string
		want float64
	}{
		{[]string{"--search", "client.limiter.bucket.rate=10:90", "--constraint", "rate_429<0.01"}, 50},
		{[]string{"--search", "client.limiter.bucket.rate=10:90", "--objective", "min:client.limiter.bucket.rate", "--constraint", "goodput_rps>=60"}, 30},
	} {
		code, out, errOut := cli(append([]string{"plan", sc, "--json"}, c.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		var res planning.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if got := res.Recommended["client.limiter.bucket.rate"]; got != c.want {
			t.Errorf("%v: recommended %v, want %v", c.args, got, c.want)
		}
		if n := len(res.Points); n > 10 {
			t.Errorf("%v: %d runs for a bisection over 80 values", c.args, n)
		}
	}
	if code, _, _ := cli("plan", sc, "--search", "client.limiter.bucket.rate=10:90"); code != exitUsage {
		t.Errorf("a search without a constraint: exit %d", code)
	}
}

// Plans declared in the file: `plan` sweeps the file's [[sweep]] blocks
// when no --sweep is given, `compare` compares the base with each
// [[variant]], and `run` runs the base scenario and says so.
func TestPlansDeclaredInTheFile(t *testing.T) {
	sc := writeScenario(t, twoInstances+`
[[variant]]
name = "fair-share"
set = ["client.limiter.bucket.rate=50"]

[[sweep]]
key = "client.limiter.bucket.rate"
values = [40, 50, 60]
`)
	code, out, errOut := cli("plan", sc, "--constraint", "rate_429<0.01", "--objective", "max:client.limiter.bucket.rate")
	if code != exitOK || !strings.Contains(out, "recommended: --set client.limiter.bucket.rate=50") {
		t.Fatalf("plan from the file's sweeps: exit %d: %s %s", code, out, errOut)
	}
	code, out, errOut = cli("compare", sc)
	if code != exitOK || !strings.Contains(out, "two/fair-share") {
		t.Fatalf("compare with the file's variants: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut = cli("run", sc); code != exitOK || !strings.Contains(errOut, "running the base scenario") {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// A file of variants alone is not said to have sweeps.
	if code, _, errOut = cli("run", "fail-retry-storm", "--quiet"); code != exitOK || !strings.Contains(errOut, "running the base scenario; its [[variant]] blocks for `limitsim compare`\n") {
		t.Fatalf("run fail-retry-storm: exit %d: %s", code, errOut)
	}
}

// Shards run disjoint slices of the grid; merged, they print exactly what
// one run of the whole plan prints, however each spelt the scenario's path.
// A missing or foreign part is refused: another plan's, or one run with
// another --set or over other values of the same keys.
func TestShardsMergeToTheSingleRun(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	planArgs := func(path string, more ...string) []string {
		return append([]string{"plan", path, "--sweep", "client.limiter.bucket.rate=40:60:5", "--sweep", "client.instances=1,2",
			"--constraint", "rate_429<0.01", "--objective", "max:goodput_rps", "--json"}, more...)
	}
	args := planArgs(sc)
	code, single, errOut := cli(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(single, `"scenario": "two"`) {
		t.Fatalf("the plan names its scenario by the path given, not its name:\n%s", single)
	}
	dir := t.TempDir()
	part := func(name string, args ...string) string {
		t.Helper()
		code, out, errOut := cli(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	respelt := filepath.Join(filepath.Dir(sc), ".", "..", filepath.Base(filepath.Dir(sc)), filepath.Base(sc))
	var parts []string
	for i := range 3 {
		path := sc
		if i == 1 {
			path = respelt
		}
		parts = append(parts, part(fmt.Sprintf("part%d", i), planArgs(path, "--shard", fmt.Sprintf("%d/3", i))...))
	}
	// The merged plan is the single run's, but for the robustness check,
	// which needs the scenario and so is not run by merge.
	var whole map[string]json.RawMessage
	if err := json.Unmarshal([]byte(single), &whole); err != nil || whole["robustness"] == nil {
		t.Fatalf("the single run has no robustness (%v)", err)
	}
	var rb planning.Robustness
	if err := json.Unmarshal(whole["robustness"], &rb); err != nil {
		t.Fatal(err)
	}
	delete(whole, "robustness")
	code, merged, errOut := cli(append([]string{"merge", "--json"}, parts[2], parts[0], parts[1])...)
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(merged), &got); err != nil {
		t.Fatal(err)
	}
	// The cost: the single run's less its robustness check, which merge
	// does not run.
	var wholeCost, mergedCost planning.Cost
	if json.Unmarshal(whole["cost"], &wholeCost) != nil || json.Unmarshal(got["cost"], &mergedCost) != nil {
		t.Fatalf("no cost in the plans:\n%s\n%s", single, merged)
	}
	if mergedCost.Runs != wholeCost.Runs-rb.Runs || mergedCost.RunsFull != wholeCost.RunsFull-rb.Runs || mergedCost.Requests != wholeCost.Requests-rb.Requests || mergedCost.Runs == 0 {
		t.Errorf("merged cost %+v, the single run's %+v less its robustness runs %d", mergedCost, wholeCost, rb.Runs)
	}
	delete(whole, "cost")
	delete(got, "cost")
	if got["fingerprint"] == nil || whole["fingerprint"] != nil {
		t.Errorf("the merge carries no fingerprint, or the single run one:\n%s", merged)
	}
	delete(got, "fingerprint") // for plan --from-merged
	if code != exitOK || fmt.Sprint(got) != fmt.Sprint(whole) || !strings.Contains(merged, `"warnings"`) {
		t.Fatalf("merge (exit %d, %s) differs from the single run:\n%s\nvs\n%s", code, errOut, merged, single)
	}
	foreign := map[string]string{
		"another --set": part("set", planArgs(sc, "--shard", "1/3", "--set", "client.acquire_timeout=2s")...),
		"other values":  part("values", "plan", sc, "--sweep", "client.limiter.bucket.rate=45:65:5", "--sweep", "client.instances=1,2", "--constraint", "rate_429<0.01", "--objective", "max:goodput_rps", "--shard", "1/3"),
	}
	// A part edited by hand to claim another shard is refused.
	data, err := os.ReadFile(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, shard := range []string{"0/0", "1/1", "5/3", "1/4"} {
		edited := strings.Replace(string(data), `"shard": "1/3"`, `"shard": "`+shard+`"`, 1)
		foreign["shard "+shard] = filepath.Join(dir, "edited.json")
		if err := os.WriteFile(foreign["shard "+shard], []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := cli("merge", parts[0], foreign["shard "+shard], parts[2]); code != exitInvalid {
			t.Errorf("a part claiming shard %s: exit %d: %s", shard, code, errOut)
		}
		delete(foreign, "shard "+shard)
	}
	for what, p := range foreign {
		if code, _, errOut := cli("merge", parts[0], p, parts[2]); code != exitInvalid || !strings.Contains(errOut, "belongs to another plan") {
			t.Errorf("a part with %s: exit %d: %s", what, code, errOut)
		}
	}
	// A scenario that loads only with the swept key (its bucket has no
	// rate of its own) shards as it plans.
	norate := writeScenario(t, strings.Replace(twoInstances, "rate = 10.0\nburst = 1\n", "burst = 1\n", 1))
	if code, _, errOut := cli("plan", norate, "--sweep", "client.limiter.bucket.rate=30,40", "--constraint", "rate_429<1", "--shard", "0/2"); code != exitOK {
		t.Errorf("a shard of a scenario that loads only with its swept key: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli("merge", parts[0], parts[1]); code != exitInvalid || !strings.Contains(errOut, "a shard is missing") {
		t.Fatalf("a missing shard: exit %d: %s", code, errOut)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	if code, out, _ := cli(append(args, "--shard", "/3")...); code != exitOK || !strings.Contains(out, `"shard": "1/3"`) {
		t.Fatalf("index from JOB_COMPLETION_INDEX: exit %d", code)
	}
}

// The Kubernetes manifest in the docs runs a valid shard: its command line,
// for one index, prints that shard of a plan, and its completions match
// the shard count.
func TestKubernetesManifestRunsAShard(t *testing.T) {
	data, err := os.ReadFile("../../docs/k8s/plan-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var line, completions string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "args: "); ok {
			line = v
		}
		if v, ok := strings.CutPrefix(l, "completions: "); ok {
			completions = v
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(line), &args); err != nil || len(args) != 1 {
		t.Fatalf("args %q: %v", line, err)
	}
	cmd := args[0]
	if !strings.Contains(cmd, "-o /out/shard-$JOB_COMPLETION_INDEX") {
		t.Fatalf("the manifest's command %q does not write each shard into a folder of its own, where it resumes", cmd)
	}
	// The volume is a temporary folder; the shell expands the index.
	vol := t.TempDir()
	cmd = strings.ReplaceAll(strings.ReplaceAll(cmd, "/out/", vol+"/"), "$JOB_COMPLETION_INDEX", "2")
	words := strings.Fields(strings.ReplaceAll(cmd, "'", ""))
	if words[0] != "limitsim" || !strings.Contains(cmd, "--shard /"+completions) {
		t.Fatalf("the manifest's command %q does not shard by its %s completions", cmd, completions)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	code, out, errOut := cli(words[1:]...)
	if code != exitOK || !strings.Contains(out, `"shard": "2/`+completions+`"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	part, err := os.ReadFile(filepath.Join(vol, "shard-2", "part.json"))
	if err != nil || string(part) != out {
		t.Fatalf("the shard's folder holds not its part (%v):\n%s", err, part)
	}
	// A pod that replaces one that died runs the same command: it
	// continues the shard from its journal.
	os.WriteFile(filepath.Join(vol, "shard-2", incompleteMarker), nil, 0o644)
	code, again, errOut := cli(words[1:]...)
	if code != exitOK || again != out || !strings.Contains(errOut, "runs read from the journal") {
		t.Fatalf("the same command again: exit %d: %s", code, errOut)
	}
}

// plan -o writes the plan (JSON, markdown and HTML with its charts) and
// the scenario as configured at the recommended point, which loads and
// runs; the reports give every point's health and why it is not feasible.
func TestPlanReport(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := cli("plan", sc, "--sweep", "client.limiter.bucket.rate=40:60:10", "--sweep", "client.instances=1,2",
		"--constraint", "rate_429<0.01", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"plan.json", "plan.md", "plan.html", "plan-rate_429.png", "plan-goodput_rps.svg", "recommended.toml"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "plan.md"))
	if err != nil || !strings.Contains(string(md), "**Robustness:** holds at 10% more load") {
		t.Errorf("plan.md does not say how the recommendation held (%v)", err)
	}
	page, err := os.ReadFile(filepath.Join(out, "plan.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="verdict"><strong>Recommended:</strong> <code>--set client.instances=2 --set client.limiter.bucket.rate=50</code>`,
		"<th>success ratio</th><th>timeouts</th><th>rejected</th><th>feasible</th>", "no: rate_429 is "} {
		if !strings.Contains(string(page), want) {
			t.Errorf("plan.html lacks %q", want)
		}
	}
	for _, want := range []string{"**Recommended:** `--set client.instances=2 --set client.limiter.bucket.rate=50`",
		"| success ratio | timeouts | rejected | feasible |", "no: rate_429 is "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("plan.md lacks %q", want)
		}
	}
	rec := filepath.Join(out, "recommended.toml")
	if code, _, errOut := cli("run", rec, "--assert", "rate_429<0.01", "--assert", "goodput_rps>99"); code != exitOK {
		t.Fatalf("the recommended scenario: exit %d: %s", code, errOut)
	}
}

// The 95% confidence intervals of replications cover the true value about
// 95% of the time: the offered rate of Poisson arrivals at 50/s, over 300
// groups of 5 replications (coverage below 91% means the interval is too
// narrow: a normal quantile used for 4 degrees of freedom covers about 88%).
func TestReplicationIntervalsCover(t *testing.T) {
	sc := writeScenario(t, `name = "cover"
[run]
duration = "20s"
[workload]
arrival = "poisson"
rate = 50.0
[[upstream]]
host = "*"
latency = { dist = "constant", value = "1ms" }
`)
	scn, err := load(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	const groups = 300
	for g := range groups {
		scn.Run.Seed = uint64(1000 + 5*g)
		cfg, err := scn.Build()
		if err != nil {
			t.Fatal(err)
		}
		var xs []float64
		for rep := range 5 {
			out, err := client.RunReplication(cfg, rep, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, float64(out.Results.Requests.Arrived)/20)
		}
		s := metrics.SpreadOf(xs)
		if math.Abs(s.Mean-50) <= s.CI95 {
			covered++
		}
	}
	if share := float64(covered) / groups; share < 0.91 {
		t.Fatalf("the 95%% intervals covered the true rate in %.0f%% of %d groups", 100*share, groups)
	}
}

// The planner sweeps and constrains the keys of a cost-metered API like any
// other: on the language-model template with its client counting tokens,
// the fastest token bucket whose 429s stay under 1% is found on the grid,
// and a constraint reads the tokens each host admitted per second. The
// quota is 2,666.67 tokens/s: 2,600 holds, 2,800 and above overdraw it.
// The template sheds its excess after a 30 s acquisition timeout, a
// critical finding at every point: --allow-findings lets the planner
// recommend one all the same.
func TestPlanSweepsTokenKeys(t *testing.T) {
	code, out, errOut := cli("plan", "api-llm-tokens", "--set", "client.limiter.rpm.unit=cost", "--set", "client.limiter.rpm.burst=144000",
		"--set", "client.reserve.estimate=fixed", "--sweep", "client.limiter.rpm.rate=2200:3000:200", "--sweep", "client.reserve.fixed=0,4096",
		"--constraint", "rate_429<0.01", "--constraint", "upstreams[llm.example].cost.charged_per_s<2700", "--allow-findings", "--json")
	plan := planJSON(t, code, out, errOut)
	if plan.Recommended["client.limiter.rpm.rate"] != 2600 {
		t.Errorf("recommended %v, want the bucket at 2,600 tokens/s", plan.Recommended)
	}
}

// One quota of a published pair is swept by its position, and a
// constraint reads the 429s that quota gave by its position in
// rejected_by: raising the tokens-per-minute quota of the language-model
// template (quota 1) finds the least rate on the grid at which the token
// quota refuses nothing, on fresh seeds and a longer run too: 8,000
// tokens/s. 4,000, about what two requests a second ask for, refuses
// nothing on the plan's own seed but hundreds on a fresh one, and is set
// aside (3,000 refuses a third of the attempts).
func TestPlanSweepsOneQuotaOfSeveral(t *testing.T) {
	code, out, errOut := cli("plan", "api-llm-tokens", "--set", "run.duration=10m", "--set", "run.warmup=1m",
		"--sweep", "upstream.*.quota.1.rate=2000,3000,4000,8000", "--constraint", "upstreams[llm.example].rejected_by[1].count<1",
		"--objective", "min:upstream.*.quota.1.rate", "--json")
	plan := planJSON(t, code, out, errOut)
	if plan.Recommended["upstream.*.quota.1.rate"] != 8000 || !strings.Contains(out, "the best point, upstream.*.quota.1.rate=4000, fails even at the plan's own load") {
		t.Errorf("recommended %v, want the token quota at 8,000/s, the least on the grid that refuses nothing on fresh seeds, 4,000 set aside:\n%s", plan.Recommended, out)
	}
}

// planJSON reads the recommendation of a `plan --json` that must have
// succeeded.
func planJSON(t *testing.T, code int, out, errOut string) (plan struct {
	Recommended map[string]float64 `json:"recommended"`
}) {
	t.Helper()
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// A point whose run measured no steady state (its warm-up outlasts its
// requests) has only empty figures: the planner reports it as an error,
// never as the best point, whatever its zeros would score.
func TestPlanSkipsPointsWithNoSteadyState(t *testing.T) {
	code, out, errOut := cli("plan", "reference-model", "--set", "run.requests=1500", "--set", "run.warmup=12s",
		"--sweep", "workload.rate=400,100", "--objective", "min:request_s.p99", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Points []struct {
			Params   map[string]float64 `json:"params"`
			Feasible bool               `json:"feasible"`
			Error    string             `json:"error"`
		} `json:"points"`
		Recommended map[string]float64 `json:"recommended"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 || res.Points[0].Feasible || !strings.HasPrefix(res.Points[0].Error, "no steady state: the run ended at") ||
		!res.Points[1].Feasible || res.Recommended["workload.rate"] != 100 {
		t.Fatalf("400/s (its 1,500 requests over before the warm-up) must be an error and 100/s recommended:\n%s", out)
	}
	// With replications, the error names the one that had none.
	code, out, errOut = cli("plan", "reference-model", "--set", "run.seed=3", "--set", "run.requests=2000", "--set", "run.warmup=13.5s",
		"--sweep", "workload.rate=150", "--replications", "3", "--json")
	if code != exitOK || !strings.Contains(out, `"error": "no steady state in replication 2: the last request arrived at`) {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
}

// A point's replications run at once on the workers the points leave idle
// (all of them in a search, one point at a time): the plan prints the same
// bytes on one worker as on three, for a search and for a grid of fewer
// points than workers.
func TestPlanReplicationsAtOnce(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	for _, args := range [][]string{
		{"plan", sc, "--search", "client.limiter.bucket.rate=10:90", "--constraint", "rate_429<0.01", "--replications", "3", "--json"},
		{"plan", sc, "--sweep", "client.limiter.bucket.rate=45,55", "--constraint", "rate_429<0.01", "--replications", "4", "--json"},
	} {
		code, serial, errOut := cli(append(args, "--workers", "1")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if _, parallel, _ := cli(append(args, "--workers", "3")...); parallel != serial {
			t.Errorf("%v: --workers 3 changed the output", args[2])
		}
	}
}

// A plan stopped by a signal exits 130 (143 for SIGTERM, as Kubernetes
// sends it), marks plan.json incomplete, leaves INCOMPLETE in the folder
// and writes no recommended.toml: one an earlier plan wrote is removed.
func TestInterruptedPlanExitsAndRecommendsNothing(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--constraint", "rate_429<0.01", "-o", out, "--quiet"}
	if code, _, errOut := cli(args[:len(args)-1]...); code != exitOK {
		t.Fatalf("the whole plan: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "recommended.toml")); err != nil {
		t.Fatal(err)
	}
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated} {
		st := new(session)
		st.signal.Store(int32(sig))
		st.interrupt.Store(true)
		var stdout, stderr bytes.Buffer
		if code := run(args[:len(args)-1], &stdout, &stderr, st); code != want {
			t.Fatalf("%v: exit %d, want %d: %s", sig, code, want, stderr.String())
		}
		if !strings.Contains(stdout.String(), "INCOMPLETE") || strings.Contains(stdout.String(), "recommended:") {
			t.Errorf("%v: the text does not say the plan is incomplete, or recommends:\n%s", sig, stdout.String())
		}
		var res planning.Result
		data, err := os.ReadFile(filepath.Join(out, "plan.json"))
		if err != nil || json.Unmarshal(data, &res) != nil || res.Complete || res.Recommended != nil {
			t.Fatalf("%v: plan.json: %v, complete %v, recommended %v", sig, err, res.Complete, res.Recommended)
		}
		if _, err := os.Stat(filepath.Join(out, "recommended.toml")); !os.IsNotExist(err) {
			t.Errorf("%v: recommended.toml remains (%v)", sig, err)
		}
		if _, err := os.Stat(filepath.Join(out, incompleteMarker)); err != nil {
			t.Errorf("%v: %v", sig, err)
		}
	}
	// A whole plan written again into the folder clears the marker.
	if code, _, errOut := cli(args[:len(args)-1]...); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, incompleteMarker)); !os.IsNotExist(err) {
		t.Errorf("a complete plan left %s (%v)", incompleteMarker, err)
	}
}
