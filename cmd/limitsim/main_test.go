package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
	"github.com/spf13/cobra"
)

func cli(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e, new(session))
	return code, o.String(), e.String()
}

func TestRunBundledScenario(t *testing.T) {
	code, out, errOut := cli("run", "../../scenarios/examples/seed-crawler.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"seed-crawler (seed 1): complete", "bucket", "Little's Law", "a.example"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// By name, as a bundled example.
	if code, _, errOut := cli("run", "token-bucket"); code != 0 {
		t.Fatalf("bundled by name: exit %d: %s", code, errOut)
	}
}

func TestRunJSONAndOutputs(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := cli("run", "--json", "../../scenarios/examples/token-bucket.toml", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	for _, k := range []string{"elapsed_s", "requests", "throughput", "limiters", "in_flight", "upstreams", "little", "queue"} {
		if _, ok := r[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil || !bytes.Equal(file, []byte(out)) {
		t.Fatalf("metrics.json differs from --json output (err %v)", err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "t_s,arrivals,starts") || strings.Count(string(csv), "\n") < 100 {
		t.Fatalf("timeseries.csv: %v %.80q", err, csv)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.*[0-9]")); len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
	for _, f := range []string{"scenario.toml", "report.md", "report.html", "saturation.png", "saturation.svg", "throughput.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The resolved scenario runs again to the same bytes.
	code, again, errOut := cli("run", "--json", filepath.Join(dir, "scenario.toml"))
	if code != 0 || again != out {
		t.Fatalf("rerunning scenario.toml: exit %d, same JSON %v: %s", code, again == out, errOut)
	}
	// The report redraws from the files alone.
	os.Remove(filepath.Join(dir, "report.md"))
	if code, _, errOut := cli("report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := cli("report", t.TempDir()); code != 2 {
		t.Fatal("report of an empty directory should exit 2")
	}
	// A folder whose files are not a run's is refused
	// (TestReportRefusesFilesNotARuns); one a stopped run left is drawn,
	// with a word.
	if err := os.WriteFile(filepath.Join(dir, incompleteMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("report", dir); code != exitOK || !strings.Contains(errOut, "carries "+incompleteMarker) {
		t.Errorf("report of an incomplete folder: exit %d: %s", code, errOut)
	}
}

// A run without -o leaves the series' columns that only the written or
// charted series reads empty (the interval percentiles, the hosts'
// counts and quota columns): its JSON, diagnoses included, is the JSON of
// the same run with -o, where every column is filled. The scenarios are
// ones whose diagnoses read the series: a quota exhausted (each host's
// paused column), a thundering herd and sustained 429s.
func TestRunWithoutOutputsKeepsTheResults(t *testing.T) {
	for name, code := range map[string]string{"api-hourly-quota": "quota_exhausted", "fail-thundering-herd": "thundering_herd", "handling-429": "sustained_429"} {
		file := "../../scenarios/examples/" + name + ".toml"
		exit, plain, errOut := cli("run", "--json", file)
		if exit != 0 {
			t.Fatalf("%s: exit %d: %s", name, exit, errOut)
		}
		exit, full, errOut := cli("run", "--json", file, "-o", t.TempDir())
		if exit != 0 {
			t.Fatalf("%s -o: exit %d: %s", name, exit, errOut)
		}
		if plain != full {
			t.Errorf("%s: the JSON without -o differs from the JSON with it", name)
		}
		if !strings.Contains(plain, `"code": "`+code+`"`) {
			t.Errorf("%s: no %s diagnosis in %.300s", name, code, plain)
		}
	}
}

func TestInvalidScenarioExits2(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("name = \"x\"\n[run]\nduration = \"10s\"\n[workload]\nrate_limt = 5\n"), 0o644)
	code, _, errOut := cli("run", bad)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut, "bad.toml:5: workload.rate_limt: unknown key (did you mean rate?)") {
		t.Fatalf("message: %s", errOut)
	}
	if code, _, _ := cli("validate", bad); code != 2 {
		t.Fatalf("validate exit %d, want 2", code)
	}
	if code, _, _ := cli("run", filepath.Join(t.TempDir(), "missing.toml")); code != 2 {
		t.Fatal("missing file should exit 2")
	}
}

func TestDeadlockExits3(t *testing.T) {
	code, _, errOut := cli("run", "fail-deadlock")
	if code != 3 || !strings.Contains(errOut, "deadlock cycle") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestValidateAndScenarios(t *testing.T) {
	code, out, _ := cli("validate", "../../scenarios/examples/fail-deadlock.toml")
	if code != 0 || !strings.Contains(out, "lock-order cycle") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
	code, out, _ = cli("scenarios")
	if code != 0 || !strings.Contains(out, "seed-crawler") || !strings.Contains(out, "fail-thundering-herd") {
		t.Fatalf("scenarios: exit %d\n%s", code, out)
	}
	code, out, _ = cli("scenarios", "show", "seed-crawler")
	if code != 0 || !strings.Contains(out, `kind = "polling_bucket"`) {
		t.Fatalf("show: exit %d", code)
	}
	if code, _, _ := cli("scenarios", "show", "nope"); code != 2 {
		t.Fatal("unknown example should exit 2")
	}
	if code, _, _ := cli("frobnicate"); code != 1 {
		t.Fatal("unknown command should exit 1")
	}
}

// traceEvent is one event of a --trace file.
type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	ID   uint64          `json:"id"`
	Args json.RawMessage `json:"args"`
}

func readTrace(t *testing.T, args ...string) []traceEvent {
	t.Helper()
	file := filepath.Join(t.TempDir(), "trace.json")
	if code, _, errOut := cli(append([]string{"run"}, append(args, "--quiet", "--trace", file)...)...); code != 0 && code != exitModel {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	return tr.TraceEvents
}

// The trace of the thundering herd holds what Perfetto needs to tell the
// story: a row per request (named with its host), spans for limiter waits,
// pauses and attempts, an instant at every 429, an arrow from each
// attempt answered 429 to the retry it caused, held permits as async spans
// that open and close in pairs, run-wide counter tracks and the pauses.
func TestTrace(t *testing.T) {
	evs := readTrace(t, "fail-thundering-herd", "--trace-requests", "1500", "--trace-from", "0s")
	kinds := map[string]int{}
	flows := map[uint64]string{}
	permits := map[uint64]int{}
	rows := 0
	for _, e := range evs {
		if e.Tid > 1500 {
			t.Fatalf("request %d traced beyond the limit of 1500", e.Tid)
		}
		switch e.Ph {
		case "X":
			if e.Dur < 0 || e.Ts < 0 {
				t.Fatalf("bad span %+v", e)
			}
			kinds[strings.SplitN(e.Name, " ", 2)[0]]++
		case "M":
			if e.Name == "thread_name" {
				rows++
				if !strings.Contains(string(e.Args), "host ") {
					t.Fatalf("a request's row does not name its host: %s", e.Args)
				}
			}
		case "s", "f":
			flows[e.ID] += e.Ph
		case "b":
			permits[e.ID]++
		case "e":
			permits[e.ID]--
		}
		kinds["ph:"+e.Ph+":"+e.Name]++
	}
	for _, k := range []string{"attempt", "paused", "limiter"} {
		if kinds[k] == 0 {
			t.Errorf("no %q spans in the trace", k)
		}
	}
	if rows != 1500 {
		t.Errorf("%d request rows, want 1500", rows)
	}
	if kinds["ph:i:429"] == 0 || kinds["ph:C:in flight"] == 0 || kinds["ph:i:pause default"] == 0 {
		t.Errorf("missing 429 instants, in-flight counters or pause instants: %v", kinds)
	}
	retries := 0
	for id, f := range flows {
		if f != "sf" {
			t.Fatalf("flow %d is %q, want one start then one finish", id, f)
		}
		retries++
	}
	if retries == 0 {
		t.Error("no arrow from an attempt answered 429 to its retry")
	}
	for id, n := range permits {
		if n != 0 {
			t.Fatalf("permit span %d opened %d more times than closed", id, n)
		}
	}
}

// Without --trace-from, the trace follows the requests from two intervals
// before the first critical finding set in, as the run without a trace
// found it (the same seed, so the same run): sustained 429s set in after
// the warm-up, so no request arriving before it is traced, and the first
// traced arrive within the two intervals before. The run's results are
// those of a run without a trace.
func TestTraceFollowsTheFirstCriticalFinding(t *testing.T) {
	const name = "fail-sustained-429"
	sc, err := load(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	report.Analyze(out.Results, out.Series)
	code, at, ok := report.FirstCriticalOnset(out.Results, out.Series)
	out.Series.Close()
	if !ok || at < out.Results.WarmupS || at == 0 {
		t.Fatalf("first critical onset %s at %vs (warm-up %vs)", code, at, out.Results.WarmupS)
	}
	from := (at - 2*out.Results.IntervalS) * 1e6 // µs
	evs := readTrace(t, name, "--trace-requests", "200")
	earliest := math.Inf(1)
	for _, e := range evs {
		if e.Pid != 0 && e.Ph == "X" {
			earliest = math.Min(earliest, e.Ts)
		}
	}
	if earliest < from-1 || earliest > at*1e6 {
		t.Errorf("the trace starts at %v µs; want from %v µs, before %s set in at %v µs", earliest, from, code, at*1e6)
	}
	// Given, --trace-from wins; with no critical finding (a healthy run)
	// the trace starts at the beginning.
	for _, args := range [][]string{{name, "--trace-from", "0s"}, {"seed-crawler"}} {
		earliest := math.Inf(1)
		for _, e := range readTrace(t, append(args, "--trace-requests", "50")...) {
			if e.Pid != 0 && e.Ph == "X" {
				earliest = math.Min(earliest, e.Ts)
			}
		}
		if earliest > 1e6 {
			t.Errorf("%v: the trace starts at %v µs, not at the beginning", args, earliest)
		}
	}
}

// --trace-from follows only requests arriving from that instant, and
// --trace-outcome only those ending so: every row written ends in a 429.
func TestTraceSelection(t *testing.T) {
	evs := readTrace(t, "fail-thundering-herd", "--trace-from", "30s", "--trace-outcome", "429", "--trace-requests", "50")
	first := map[int]float64{}
	last := map[int]string{}
	rows := 0
	for _, e := range evs {
		if e.Pid == 0 {
			continue
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			rows++
		}
		if e.Ph == "X" {
			if v, ok := first[e.Tid]; !ok || e.Ts < v {
				first[e.Tid] = e.Ts
			}
			if strings.HasPrefix(e.Name, "attempt") {
				last[e.Tid] = e.Name
			}
		}
	}
	if rows != 50 {
		t.Fatalf("%d requests written, want 50", rows)
	}
	for tid, ts := range first {
		if ts < 30e6 {
			t.Fatalf("request %d starts at %v µs, before --trace-from 30s", tid, ts)
		}
		if !strings.HasSuffix(last[tid], "→ 429") {
			t.Fatalf("request %d's last attempt is %q, not a 429", tid, last[tid])
		}
	}
	for _, bad := range [][]string{{"--trace-outcome", "ok,boom"}, {"--trace-from", "soon"}} {
		code, _, errOut := cli(append([]string{"run", "token-bucket", "--trace", filepath.Join(t.TempDir(), "x.json")}, bad...)...)
		if code != exitUsage || !strings.Contains(errOut, bad[0]) {
			t.Errorf("%v: exit %d, %s", bad, code, errOut)
		}
	}
}

// One bad file per class of problem: each exits 2 before simulating, with
// the file, the line and the key in the message.
func TestBadInputsExitCodes(t *testing.T) {
	base := "name = \"t\"\n[run]\nduration = \"10s\"\n[workload]\nrate = 10.0\n[client]\n[[client.limiter]]\nname = \"b\"\nkind = \"token_bucket\"\nrate = 5.0\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"
	cases := []struct{ name, old, new, want string }{
		{"syntax", "rate = 10.0", "rate = = 10.0", "bad.toml:5: syntax error at column"},
		{"unknown key", "rate = 10.0", "rate = 10.0\nrtae = 3", "bad.toml:6: workload.rtae: unknown key (did you mean rate?)"},
		{"wrong case", "rate = 10.0", "Rate = 10.0", "bad.toml:5: workload.Rate: unknown key (did you mean rate?)"},
		{"float for integer", "kind = \"token_bucket\"\nrate = 5.0", "kind = \"semaphore\"\npermits = 2.5", "bad.toml:10: client.limiter[0].permits: must be an integer, not the float 2.5"},
		{"nan", "rate = 10.0", "rate = nan", "bad.toml:5: workload.rate: must be a finite number"},
		{"zero rate", "rate = 5.0", "rate = 0.0", "bad.toml:10: client.limiter[0].rate: must be greater than 0"},
		{"unit", "duration = \"10s\"", "duration = \"10 parsecs\"", "valid units: ns, us (or µs), ms, s, m, h"},
		{"contradiction", "duration = \"10s\"", "duration = \"10s\"\nwarmup = \"20s\"", "run.warmup: (20s) must be shorter than run.duration (10s)"},
		{"burst below cost", "rate = 10.0", "rate = 10.0\ncost = 9", "client.limiter[0].burst: (5) is below one request's cost (workload.cost = 9)"},
		{"overflow", "duration = \"10s\"", "duration = \"100000000h\"", "too long"},
		{"projected work", "duration = \"10s\"\n[workload]\nrate = 10.0", "duration = \"100000h\"\n[workload]\nrate = 1e9", "projects"},
		{"unsafe name", "name = \"t\"", "name = \"../t\"", "bad.toml:1: name:"},
		{"absolute data path", "rate = 10.0", "arrival = \"trace\"\ntrace = \"/etc/passwd\"", "must be a relative path inside the scenario's folder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(base, c.old, c.new, 1)
			if src == base {
				t.Fatalf("edit %q not applied", c.old)
			}
			file := filepath.Join(t.TempDir(), "bad.toml")
			os.WriteFile(file, []byte(src), 0o644)
			code, out, errOut := cli("run", file)
			if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant %q", code, out, errOut, c.want)
			}
		})
	}
}

// A bug that panics is caught at the top: exit 70, no goroutine dump.
func TestPanicIsAnInternalError(t *testing.T) {
	var e bytes.Buffer
	code := run([]string{"scenarios"}, nil, &e, new(session)) // writing to a nil writer panics
	if code != 70 || !strings.Contains(e.String(), "internal error") || strings.Contains(e.String(), "goroutine ") {
		t.Fatalf("exit %d: %s", code, e.String())
	}
}

// --set overrides a key without editing the file: the run and the
// scenario as run show it, and a bad override is an invalid input naming
// the override.
func TestSetOverrides(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := cli("run", "fail-shared-quota", "--json", "-o", dir,
		"--set", "client.limiter.bucket.rate=9", "--set", "client.limiter.bucket.burst=9")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Rate429 float64 `json:"rate_429"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Rate429 != 0 {
		t.Fatalf("429 rate %v with the buckets at 9/s (err %v)", r.Rate429, err)
	}
	sc, err := os.ReadFile(filepath.Join(dir, "scenario.toml"))
	if err != nil || !strings.Contains(string(sc), "rate = 9.0") {
		t.Fatalf("scenario.toml does not record the override (err %v)", err)
	}
	code, _, errOut = cli("run", "fail-shared-quota", "--set", "client.limiter.nosuch.rate=9")
	if code != exitInvalid || !strings.Contains(errOut, `--set: client.limiter.nosuch.rate: no client.limiter with name "nosuch"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if code, _, _ := cli("run", "fail-shared-quota", "--set", "norate"); code != exitUsage {
		t.Fatalf("--set without = : exit %d, want %d", code, exitUsage)
	}
}

// --assert gates a run: exit 5 and the failing assertion with its value
// when one does not hold, exit 0 when all hold.
func TestAssertions(t *testing.T) {
	code, _, errOut := cli("run", "fail-sustained-429", "--assert", "rate_429<0.01", "--assert", "goodput_rps>1")
	if code != exitAssert || !strings.Contains(errOut, "assertion failed: rate_429<0.01: got 0.21") || strings.Contains(errOut, "goodput_rps") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli("run", "token-bucket", "--assert", "rate_429<0.01", "--assert", "limiters[quota].utilisation>0.8"); code != exitOK {
		t.Fatalf("holding assertions: exit %d: %s", code, errOut)
	}
	if code, _, _ := cli("run", "token-bucket", "--assert", "rate_429 ~ 1"); code != exitUsage {
		t.Fatalf("malformed assertion: exit %d, want %d", code, exitUsage)
	}
	// A path that names no figure is bad input: a misspelt field is refused
	// before the run, an entry the run does not have after it; neither is
	// an assertion that did not hold.
	if code, _, errOut := cli("run", "token-bucket", "--assert", "limiters[quota].wait_s.p999<1"); code != exitUsage || !strings.Contains(errOut, `no field "p999"`) {
		t.Fatalf("misspelt field: exit %d: %s", code, errOut)
	}
	code, _, errOut = cli("run", "token-bucket", "--assert", "limiters[qouta].wait_s.p99<1", "--assert", "rate_429>0.5")
	if code != exitInvalid || !strings.Contains(errOut, `no entry "qouta"`) {
		t.Fatalf("unknown entry: exit %d: %s", code, errOut)
	}
}

// A plan's objective and constraints are paths too: a misspelt field is
// refused before any point runs, an entry no point's results have after
// the points, with exit 2 rather than "no point meets every constraint".
func TestPlanRefusesPathsThatNameNothing(t *testing.T) {
	sweep := []string{"plan", "token-bucket", "--set", "run.duration=20s", "--sweep", "client.limiter.quota.rate=60,80"}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--constraint", "nope<1"}, exitUsage, `no field "nope" in the results`},
		{[]string{"--objective", "max:limiters[quota].wait_s.p999"}, exitUsage, `no field "p999"`},
		{[]string{"--constraint", "limiters[qouta].wait_s.p99<1"}, exitInvalid, `no entry "qouta"`},
		{[]string{"--search", "client.limiter.quota.rate=60:80", "--constraint", "limiters[qouta].wait_s.p99<1"}, exitInvalid, `no entry "qouta"`},
	}
	for _, c := range cases {
		args := append(slices.Clone(sweep), c.args...)
		if c.args[0] == "--search" {
			args = append([]string{"plan", "token-bucket", "--set", "run.duration=20s"}, c.args...)
		}
		if code, _, errOut := cli(args...); code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, errOut)
		}
	}
}

// bench times the product path on the reference model: its line carries
// the run's own figures, and a missing reference folder is an invalid
// input.
func TestBench(t *testing.T) {
	code, out, errOut := cli("bench", "-n", "5000")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"impl=limitsim scenario=reference-model n=5000 seed=1 completed=", "events_per_req=", "req_per_s="} {
		if !strings.Contains(out, want) {
			t.Errorf("bench line lacks %q: %s", want, out)
		}
	}
	if code, _, _ := cli("bench", "-n", "100", "--compare", t.TempDir()); code != exitInvalid {
		t.Errorf("--compare without go_baseline/: exit %d, want %d", code, exitInvalid)
	}
}

// commandPaths lists every command of the command line, subcommands
// included ("fit latency"), as the root declares them.
func commandPaths() []string {
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.Hidden {
				paths = append(paths, strings.TrimPrefix(sub.CommandPath(), "limitsim "))
				walk(sub)
			}
		}
	}
	walk(newRootCommand(&environment{stdout: io.Discard, stderr: io.Discard, session: new(session)}))
	return paths
}

// version, help COMMAND and completion scripts for bash, zsh and fish
// name every command.
func TestVersionHelpCompletion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, _ := cli(args...); code != exitOK || !strings.HasPrefix(out, "limitsim ") || !strings.Contains(out, "(go") {
			t.Fatalf("%v: exit %d: %q", args, code, out)
		}
	}
	if code, out, _ := cli("help", "plan"); code != exitOK || !strings.Contains(out, "--sweep") || !strings.Contains(out, "--objective") {
		t.Fatalf("help plan: exit %d: %s", code, out)
	}
	paths := commandPaths()
	if len(paths) < 16 || !slices.Contains(paths, "fit latency") || !slices.Contains(paths, "scenarios show") {
		t.Fatalf("commands: %v", paths)
	}
	// Every command's help, asked any way, is on stdout with exit 0: what
	// it does, its usage, every flag spelt with two dashes, and an example.
	for _, c := range paths {
		if c == "help" || strings.HasPrefix(c, "completion") {
			continue
		}
		words := strings.Fields(c)
		for _, args := range [][]string{append([]string{"help"}, words...), append(slices.Clone(words), "--help"), append(slices.Clone(words), "-h")} {
			code, out, errOut := cli(args...)
			if code != exitOK || errOut != "" || !strings.Contains(out, "Usage:\n  limitsim "+c) || !strings.Contains(out, "Examples:\n  limitsim ") {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
			if regexp.MustCompile(`\n\s+-[a-z][a-z]`).MatchString(out) {
				t.Fatalf("%v spells a flag with one dash: %s", args, out)
			}
		}
	}
	if code, out, _ := cli("run", "--help"); code != exitOK || !strings.Contains(out, "--trace-outcome list") || strings.Contains(out, "(default [])") {
		t.Fatalf("run --help: exit %d: %s", code, out)
	}
	for _, args := range [][]string{{"help", "nosuch"}, {"nosuch"}, {"fit"}, {"fit", "nosuch", "x"}, {"scenarios", "show"}} {
		if code, out, _ := cli(args...); code != exitUsage || out != "" {
			t.Fatalf("%v: exit %d, stdout %q", args, code, out)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, _ := cli("completion", sh)
		if code != exitOK || !strings.Contains(out, "limitsim") || !strings.Contains(out, "__complete") {
			t.Fatalf("completion %s: exit %d: %.200s", sh, code, out)
		}
	}
	if code, _, _ := cli("completion", "tcsh"); code != exitUsage {
		t.Fatalf("an unknown shell: exit %d", code)
	}
	// The scripts ask the binary: commands, flags and bundled scenarios.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", ""}, []string{"run", "plan", "size", "fit", "scenarios"}},
		{[]string{"__complete", "run", "--trace-o"}, []string{"--trace-outcome"}},
		{[]string{"__complete", "plan", "x.toml", "--obj"}, []string{"--objective"}},
		{[]string{"__complete", "size", "--latency-"}, []string{"--latency-p50", "--latency-p99"}},
		{[]string{"__complete", "run", "token-"}, []string{"token-bucket"}},
		{[]string{"__complete", "fit", ""}, []string{"latency", "arrivals"}},
	} {
		code, out, _ := cli(c.args...)
		for _, w := range c.want {
			if code != exitOK || !strings.Contains(out, w) {
				t.Errorf("%v: exit %d, lacks %s: %s", c.args, code, w, out)
			}
		}
	}
	_, usageText, _ := cli("help")
	for _, c := range paths {
		if !strings.Contains(c, " ") && !strings.Contains(usageText, "\n  "+c+" ") {
			t.Errorf("the usage lacks %s", c)
		}
	}
}

// A misspelt command or flag gets the nearest names, as gh and kubectl
// give them, with exit 1 and nothing on stdout.
func TestMisspeltCommandAndFlagSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, "Did you mean this?\n\trun"},
		{[]string{"plna", "x"}, "Did you mean this?\n\tplan"},
		{[]string{"run", "--jsno", "token-bucket"}, "unknown flag: --jsno; did you mean --json?"},
		{[]string{"run", "token-bucket", "--trace-outcom", "429"}, "did you mean --trace-outcome?"},
		{[]string{"plan", "token-bucket", "--constriant", "rate_429<0.01"}, "did you mean --constraint?"},
		{[]string{"run", "-json", "token-bucket"}, "in -json; did you mean --json?"},
		{[]string{"help", "rnu"}, `no command "rnu"; did you mean run?`},
		{[]string{"fit", "latnecy", "x.csv"}, "did you mean latency?"},
	} {
		code, out, errOut := cli(c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
	// Nothing near: no suggestion rather than a wrong one.
	if _, _, errOut := cli("run", "--zzzzzz", "token-bucket"); strings.Contains(errOut, "did you mean") {
		t.Errorf("--zzzzzz got a suggestion: %s", errOut)
	}
}

// A misspelt bundled scenario gets the nearest name; a count of problems
// reads as English.
func TestScenarioNameSuggestionAndProblemCount(t *testing.T) {
	code, _, errOut := cli("run", "token-buckt")
	if code != exitInvalid || !strings.Contains(errOut, "token-buckt: no such file or bundled scenario; did you mean token-bucket?") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if _, _, errOut := cli("run", "zzzz"); !strings.Contains(errOut, "zzzz: no such file or bundled scenario (see `limitsim scenarios`)") {
		t.Errorf("no suggestion expected: %s", errOut)
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.toml")
	for n, body := range map[int]string{1: `duration = "5min"`, 2: "duration = \"5min\"\nwarmup = \"1.5 s\""} {
		src := "name = \"x\"\n[run]\n" + body + "\n[workload]\nrate = 1.0\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"
		if err := os.WriteFile(sc, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{1: "1 problem; nothing was run", 2: "2 problems; nothing was run"}[n]
		if _, _, errOut := cli("validate", sc); !strings.Contains(errOut, want) {
			t.Errorf("want %q: %s", want, errOut)
		}
	}
}

// A second Ctrl-C exits at once and says what is on disk: nothing, a
// folder still marked incomplete, or results complete up to the instant
// the run stopped with the report not written.
func TestSecondInterruptSaysWhatIsOnDisk(t *testing.T) {
	var st session
	if msg := st.secondInterrupt(); !strings.Contains(msg, "no output was written") {
		t.Errorf("before any output: %q", msg)
	}
	st.outputs.Store(&outputState{dir: "out", elapsedS: 12.5, stage: writingData})
	if msg := st.secondInterrupt(); !strings.Contains(msg, "out is incomplete (INCOMPLETE marks it)") {
		t.Errorf("while writing the results: %q", msg)
	}
	st.outputs.Store(&outputState{dir: "out", elapsedS: 12.5, stage: dataWritten})
	if msg := st.secondInterrupt(); !strings.Contains(msg, "second interrupt: report not written; metrics.json and timeseries.csv in out are complete up to t=12.500s") {
		t.Errorf("after the results: %q", msg)
	}
	st.outputs.Store(&outputState{dir: "out", stage: planJournaled})
	if msg := st.secondInterrupt(); !strings.Contains(msg, "out is incomplete (INCOMPLETE marks it), its finished runs journaled: 'limitsim plan --resume out' continues the plan") {
		t.Errorf("while a plan runs: %q", msg)
	}
	st.outputs.Store(&outputState{dir: "out", stage: allWritten})
	if msg := st.secondInterrupt(); msg != "" {
		t.Errorf("after every output: %q, want nothing to say", msg)
	}
}

// The output folder carries INCOMPLETE while it is written and loses it
// only when every output is in place; a previous run's reports never
// survive into a new run's folder.
func TestOutputFolderMarkedUntilComplete(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := cli("run", "token-bucket", "--quiet", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, incompleteMarker)); !os.IsNotExist(err) {
		t.Fatalf("a complete folder still carries %s (%v)", incompleteMarker, err)
	}
	// A chart that cannot be written (a directory in its place) stops the
	// second run after its results: the folder keeps the marker and this
	// run's results, and no report of the first run.
	if err := os.Remove(filepath.Join(dir, "throughput.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "throughput.png", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, _ := cli("run", "token-bucket", "--quiet", "--set", "run.seed=2", "-o", dir)
	if code == exitOK {
		t.Fatal("writing a chart over a directory succeeded")
	}
	for _, f := range []string{incompleteMarker, "metrics.json", "timeseries.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if seed := readMetrics(t, dir)["seed"]; seed != 2.0 {
		t.Errorf("metrics.json is from seed %v, want the second run's 2", seed)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err == nil {
		t.Error("the failed run's folder still holds a report.md")
	}
}

// The rounds' own ratios are taken pairwise, round by round: the least and
// the greatest of them, not the ratio of the extremes.
func TestRatioRange(t *testing.T) {
	lo, hi := ratioRange([]float64{2, 3, 1}, []float64{8, 10, 2})
	if lo != 0.25 || hi != 0.5 {
		t.Fatalf("ratio range %v–%v, want 0.25–0.5", lo, hi)
	}
}

// An interval longer than the recorder's fold span has the run fold within
// it: a deadlock is still reported as one, and the steady-state levels are
// those of shorter intervals, to the last digit (their areas are exact).
func TestLongIntervalsFoldWithinThem(t *testing.T) {
	code, _, errOut := cli("run", "fail-deadlock", "--set", "run.interval=10m")
	if code != 3 || !strings.Contains(errOut, "deadlock cycle") {
		t.Fatalf("deadlock with 10-minute intervals: exit %d: %s", code, errOut)
	}
	levels := func(interval string) map[string]any {
		code, out, errOut := cli("run", "reference-model", "--set", "run.requests=20000", "--set", "run.interval="+interval, "--json")
		if code != 0 {
			t.Fatalf("interval %s: exit %d: %s", interval, code, errOut)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		lims := res["limiters"].([]any)
		return map[string]any{"in_flight": res["in_flight"], "little": res["little"],
			"bucket": lims[0].(map[string]any)["mean_waiting"], "conns": lims[1].(map[string]any)["utilisation"]}
	}
	long, short := levels("10m"), levels("1m")
	for k, v := range short {
		if fmt.Sprint(long[k]) != fmt.Sprint(v) {
			t.Errorf("%s with 10-minute intervals %v, with 1-minute ones %v", k, long[k], v)
		}
	}
}

// A scenario that reads data files (a trace, latency samples, a variant's
// own samples): -o copies them beside scenario.toml, which then runs
// again, and compares, to the same bytes; so does plan's recommended.toml.
func TestOutputFolderCarriesItsDataFiles(t *testing.T) {
	src := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var trace, fast, slow strings.Builder
	for i := range 400 {
		fmt.Fprintf(&trace, "%.3f\n", float64(i)*0.05)
		fmt.Fprintf(&fast, "%dms\n", 20+i%30)
		fmt.Fprintf(&slow, "%dms\n", 80+i%50)
	}
	write("arrivals.csv", trace.String())
	write("lat/fast.csv", fast.String())
	write("lat/slow.csv", slow.String())
	write("s.toml", `name = "data"
[run]
duration = "30s"
[workload]
arrival = "trace"
trace = "arrivals.csv"
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 4
[[upstream]]
host = "*"
latency = { dist = "empirical", samples = "lat/fast.csv" }
[[variant]]
name = "slow"
set = ['upstream.*.latency={ dist = "empirical", samples = "lat/slow.csv" }']
`)
	scenario := filepath.Join(src, "s.toml")
	code, want, errOut := cli("run", "--json", scenario)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli("run", scenario, "-o", out); code != exitOK {
		t.Fatalf("-o: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"arrivals.csv", "lat/fast.csv", "lat/slow.csv"} {
		orig, _ := os.ReadFile(filepath.Join(src, f))
		if got, err := os.ReadFile(filepath.Join(out, f)); err != nil || !bytes.Equal(got, orig) {
			t.Errorf("%s not copied beside scenario.toml: %v", f, err)
		}
	}
	if code, again, errOut := cli("run", "--json", filepath.Join(out, "scenario.toml")); code != exitOK || again != want {
		t.Fatalf("rerunning scenario.toml: exit %d, same JSON %v: %s", code, again == want, errOut)
	}
	_, cmpWant, _ := cli("compare", "--json", scenario)
	if code, cmp, errOut := cli("compare", "--json", filepath.Join(out, "scenario.toml")); code != exitOK || cmp != cmpWant {
		t.Fatalf("comparing scenario.toml's variants: exit %d, same JSON %v: %s", code, cmp == cmpWant, errOut)
	}
	// -o into the scenario's own folder leaves its data files as they are.
	if code, _, errOut := cli("run", filepath.Join(out, "scenario.toml"), "-o", out); code != exitOK {
		t.Fatalf("-o into the scenario's folder: exit %d: %s", code, errOut)
	}
	planOut := filepath.Join(t.TempDir(), "plan")
	if code, _, errOut := cli("plan", scenario, "--sweep", "client.limiter.conns.permits=2,4", "--constraint", "rate_429<0.5", "-o", planOut); code != exitOK {
		t.Fatalf("plan -o: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli("run", filepath.Join(planOut, "recommended.toml")); code != exitOK {
		t.Fatalf("running recommended.toml: exit %d: %s", code, errOut)
	}
}

// An output folder written again holds this run's files only: the
// previous run's tenants.csv, scopes.csv, charts and data files go, so
// neither the folder nor a report redrawn from it mixes two runs.
func TestOutputFolderWrittenAgainKeepsNothingOfTheLastRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli("run", "composed-limits", "--set", "run.duration=30s", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"tenants.csv", "scopes.csv", "tenants-wait.png", "wait-per_host-cdf.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("the first run should write %s: %v", f, err)
		}
	}
	user := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(user, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", "token-bucket", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"tenants.csv", "scopes.csv", "tenants-wait.png", "wait-per_host-cdf.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s of the previous run is still there", f)
		}
	}
	if _, err := os.Stat(user); err != nil {
		t.Errorf("a file no run wrote was removed: %v", err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, report.OutputsManifest))
	if err != nil || !strings.Contains(string(manifest), "metrics.json\n") || strings.Contains(string(manifest), "tenants.csv") {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	_, want, _ := cli("run", "token-bucket")
	code, out, errOut := cli("report", dir)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if strings.Contains(string(md), "starves") || !strings.Contains(want, "healthy") || !strings.Contains(string(md), "healthy") {
		t.Fatalf("the redrawn report is not token-bucket's (%s):\n%.600s", out, md)
	}
}

// Every number in the results of the bundled examples is a path --assert,
// --constraint and --objective accept: the check they make of a path
// before anything runs refuses no figure a run reports.
func TestEveryNumberOfTheResultsIsAPath(t *testing.T) {
	var walk func(at string, v any, paths *[]string)
	walk = func(at string, v any, paths *[]string) {
		join := func(k string) string {
			if at == "" {
				return k
			}
			return at + "." + k
		}
		switch x := v.(type) {
		case float64:
			*paths = append(*paths, at)
		case map[string]any:
			for k, e := range x {
				walk(join(k), e, paths)
			}
		case []any:
			for i, e := range x {
				sel := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok {
					for _, k := range []string{"name", "host", "stage", "limiter", "key", "code", "quota"} {
						if n, ok := m[k].(string); ok {
							sel = n
							break
						}
					}
				}
				walk(at+"["+sel+"]", e, paths)
			}
		}
	}
	checked := 0
	for _, name := range []string{"composed-limits", "api-llm-tokens", "api-hourly-quota", "cluster-shared-limit", "handling-429", "fail-deadlock", "adaptive-vegas", "fail-shared-quota"} {
		code, out, errOut := cli("run", "--json", "--set", "run.replications=2", name)
		if code != exitOK && code != exitModel {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var r any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var paths []string
		walk("", r, &paths)
		for _, p := range paths {
			if strings.Contains(p, "fix.set") {
				continue // a diagnosis's overrides: keys, not figures
			}
			if err := metrics.CheckPath(p); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d numbers checked", checked)
	}
}

// An empty scenario name says what to give, not "did you mean ?".
func TestEmptyScenarioName(t *testing.T) {
	if code, _, errOut := cli("run", ""); code != exitInvalid || !strings.Contains(errOut, "the scenario is an empty name") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// An output that cannot be written is bad input found before the work,
// exit 2, not an internal error after it.
func TestUnwritableOutputsAreRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "token-bucket", "-o", file},
		{"compare", "token-bucket", "token-bucket", "-o", file},
		{"plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "-o", file},
		{"run", "token-bucket", "--trace", dir},
		{"run", "token-bucket", "--trace", filepath.Join(dir, "nosuch", "t.json")},
		{"fit", "arrivals", file, "--trace-out", filepath.Join(dir, "nosuch", "t.csv")},
		{"fit", "latency", file, "--chart", dir},
	} {
		if code, out, errOut := cli(args...); code != exitInvalid || out != "" {
			t.Errorf("%v: exit %d, want %d before any output: %s", args, code, exitInvalid, errOut)
		}
	}
}

// Flags that would be silently ignored or overridden are refused: trace
// options without --trace, a plan's key swept twice or also set, and no
// workers.
func TestFlagsThatWouldBeIgnored(t *testing.T) {
	plan := []string{"plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "token-bucket", "--trace-requests", "10"}, "--trace-requests chooses what --trace FILE follows"},
		{[]string{"run", "token-bucket", "--trace-outcome", "429"}, "--trace-outcome chooses"},
		{append(slices.Clone(plan), "--sweep", "client.limiter.quota.rate=90"), "client.limiter.quota.rate is swept twice"},
		{append(slices.Clone(plan), "--set", "client.limiter.quota.rate=70"), "the key is swept"},
		{[]string{"run", "token-bucket", "-o", ""}, "-o/--output is given an empty value"},
		{[]string{"run", "token-bucket", "--trace", " "}, "--trace is given an empty value"},
		{[]string{"fit", "arrivals", "x.csv", "--time-format", ""}, "--time-format is given an empty value"},
	} {
		if code, _, errOut := cli(c.args...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, exitUsage, c.want, errOut)
		}
	}
}

// A data file is the user's where the scenario runs in its own folder: -o
// there keeps it and never lists it, so a later run of another scenario
// into the folder leaves it. Paths are compared clean (./t.csv is t.csv),
// and a data file named as an output is refused before the run.
func TestOutputFolderNeverRemovesTheUsersDataFiles(t *testing.T) {
	proj := t.TempDir()
	var trace strings.Builder
	for i := range 200 {
		fmt.Fprintf(&trace, "%.2f\n", float64(i)*0.05)
	}
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(proj, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("t.csv", trace.String())
	scenario := func(name, path string) string {
		return write(name, "name = \"data\"\n[run]\nduration = \"10s\"\n[workload]\narrival = \"trace\"\ntrace = \""+path+"\"\n"+
			"[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n")
	}
	own := scenario("s.toml", "t.csv")
	if code, _, errOut := cli("run", own, "-o", proj); code != exitOK {
		t.Fatalf("-o into the scenario's folder: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli("run", "token-bucket", "-o", proj); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(proj, "t.csv")); err != nil {
		t.Fatalf("the user's trace was removed: %v", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, sc := range []string{scenario("a.toml", "./t.csv"), scenario("b.toml", "t.csv")} {
		if code, _, errOut := cli("run", sc, "-o", out); code != exitOK {
			t.Fatalf("%s: exit %d: %s", sc, code, errOut)
		}
	}
	if code, _, errOut := cli("run", filepath.Join(out, "scenario.toml")); code != exitOK {
		t.Fatalf("the data file copied by the last run is gone: exit %d: %s", code, errOut)
	}
	write("timeseries.csv", trace.String())
	if code, _, errOut := cli("run", scenario("c.toml", "timeseries.csv"), "-o", t.TempDir()); code != exitInvalid || !strings.Contains(errOut, "has the name of an output") {
		t.Fatalf("a trace named timeseries.csv: exit %d: %s", code, errOut)
	}
	// Another scenario's trace of the same name is not copied over the
	// user's own (which no run wrote): the run is refused first.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "t.csv"), []byte("0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "s.toml"), []byte(mustRead(t, own)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", filepath.Join(other, "s.toml"), "-o", proj); code != exitInvalid || !strings.Contains(errOut, "no run wrote") {
		t.Fatalf("a data file over the user's: exit %d: %s", code, errOut)
	}
	if got := mustRead(t, filepath.Join(proj, "t.csv")); got != trace.String() {
		t.Fatalf("the user's trace was replaced")
	}
	// A plan into a run's folder keeps the scenario it plans and its data
	// files, with or without a recommendation, and when the scenario is
	// reached through a symbolic link to the folder.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	for _, constraint := range []string{"rate_429<1", "rate_429<0"} {
		if code, _, errOut := cli("plan", filepath.Join(link, "scenario.toml"), "--sweep", "run.seed=1,2", "--constraint", constraint, "-o", out); code != exitOK {
			t.Fatalf("plan -o into a run's folder: exit %d: %s", code, errOut)
		}
		for _, f := range []string{"scenario.toml", "t.csv"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("plan with %s removed its input %s", constraint, f)
			}
		}
	}
	// A scenario.toml no run wrote, run into its own folder, is refused:
	// the scenario as run would replace it, comments and all.
	mine := t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, "scenario.toml"), []byte("# mine\n"+mustRead(t, own)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "t.csv"), []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", filepath.Join(mine, "scenario.toml"), "-o", mine); code != exitInvalid || !strings.Contains(errOut, "no run wrote it") {
		t.Errorf("a hand-written scenario.toml into its own folder: exit %d: %s", code, errOut)
	}
	// A file named as an optional output (tenants.csv) that no run wrote
	// stays in a folder with a manifest.
	if err := os.WriteFile(filepath.Join(out, "tenants.csv"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", "token-bucket", "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := mustRead(t, filepath.Join(out, "tenants.csv")); got != "mine\n" {
		t.Errorf("a tenants.csv no run wrote was removed or replaced")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A run whose writing of -o fails part way (here a chart's name is taken
// by a folder) lists what it did write, the data file it copied included,
// so the next run into the folder replaces that copy with its own instead
// of refusing it as a file no run wrote; and nothing it did not write (the
// folder in the way, a file of the user's named as a later chart), which
// the next run would remove.
func TestOutputFolderFailedPartWayListsWhatItWrote(t *testing.T) {
	src := t.TempDir()
	scenario := func(name, samples string) string {
		t.Helper()
		dir := filepath.Join(src, name)
		var text strings.Builder
		for i := range 200 {
			fmt.Fprintf(&text, "%dms\n", samples[0]-'0'+byte(i%40))
		}
		if err := os.MkdirAll(filepath.Join(dir, "lat"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lat", "samples.csv"), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "s.toml")
		if err := os.WriteFile(p, []byte(`name = "`+name+`"
[run]
duration = "20s"
[workload]
rate = 20.0
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 4
[[upstream]]
host = "*"
latency = { dist = "empirical", samples = "lat/samples.csv" }
`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := scenario("first", "2"), scenario("second", "7")
	out := filepath.Join(t.TempDir(), "out")
	block := filepath.Join(out, "saturation.png", "x") // a folder where a chart goes
	if err := os.MkdirAll(block, 0o755); err != nil {
		t.Fatal(err)
	}
	// A file of the user's named as a chart after it: never written, so
	// never listed (the next writer would remove it).
	if err := os.WriteFile(filepath.Join(out, "throughput.svg"), []byte("USER"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", first, "-o", out); code != exitInternal {
		t.Fatalf("exit %d, want %d (a chart cannot be written): %s", code, exitInternal, errOut)
	}
	listed, err := report.ListedOutputs(out)
	if err != nil || !listed["lat/samples.csv"] || !listed["metrics.json"] {
		t.Fatalf("manifest after the failure: %v, %v: want the copied data file and metrics.json", listed, err)
	}
	if listed["saturation.png"] || listed["throughput.svg"] {
		t.Fatalf("manifest after the failure: %v: lists files the run never wrote", listed)
	}
	if err := os.RemoveAll(filepath.Dir(block)); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("run", second, "-o", out); code != exitOK {
		t.Fatalf("the next run into the folder: exit %d: %s", code, errOut)
	}
	want, _ := os.ReadFile(filepath.Join(src, "second", "lat", "samples.csv"))
	if got, err := os.ReadFile(filepath.Join(out, "lat", "samples.csv")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the data file is not the second scenario's: %v", err)
	}
}

// With pause = "none" the fallback pause is never waited, and a run says
// so; it must then change nothing, even where the headers pause the host
// and a random resume jitter draws from the stream the fallback would.
func TestFallbackWithoutPauseChangesNothing(t *testing.T) {
	base := []string{"run", "handling-429", "--json", "--set", "client.on_429.pause=none", "--set", "client.headers.pause_at_zero=true",
		"--set", "client.on_429.resume_jitter=uniform(0s,2s)", "--set", "run.duration=60s"}
	results := func(extra ...string) (map[string]any, string) {
		t.Helper()
		code, out, errOut := cli(append(slices.Clone(base), extra...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		warned := fmt.Sprint(m["warnings"])
		delete(m, "warnings")
		return m, warned
	}
	plain, _ := results()
	other, warned := results("--set", "client.on_429.fallback=exponential(3s)")
	if !strings.Contains(warned, "fallback has no effect") {
		t.Fatalf("warnings %s: want the fallback named as without effect", warned)
	}
	if fmt.Sprint(plain) != fmt.Sprint(other) {
		t.Fatal("a fallback said to have no effect changed the run")
	}
}

// bench --compare builds the folder's bespoke loop, runs it and SimPy's
// model after limitsim in every round with the same requests and seed
// (SimPy a tenth of them), and prints the medians and their ratios; a loop
// that does not build is an invalid input. The folder here holds stand-ins:
// a loop that prints the arguments it was given and a rate of four times
// its requests, and a python3 first on the PATH that answers the check for
// SimPy and prints a fixed rate.
func TestBenchCompare(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module baseline\n\ngo 1.26\n",
		"go_baseline/main.go": `package main

import (
	"flag"
	"fmt"
)

func main() {
	n := flag.Int("n", 0, "requests")
	seed := flag.Uint64("seed", 0, "seed")
	flag.Parse()
	fmt.Printf("impl=go_baseline n=%d seed=%d req_per_s=%d\n", *n, *seed, 4**n)
}
`,
		"simpy_model.py": "",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	python := "#!/bin/sh\nif [ \"$1\" = -c ]; then exit 0; fi\necho \"impl=simpy script=$(basename \"$1\") $2=$3 req_per_s=500\"\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(python), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	code, out, errOut := cli("bench", "-n", "3000", "--seed", "7", "--compare", dir, "--rounds", "3")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 {
		t.Fatalf("want 3 rounds of 3 lines and the summary, got %d lines:\n%s", len(lines), out)
	}
	for r := range 3 {
		for i, want := range []string{"impl=limitsim scenario=reference-model n=3000 seed=7 ",
			"impl=go_baseline n=3000 seed=7 req_per_s=12000", "impl=simpy script=simpy_model.py -n=300 req_per_s=500"} {
			if got := lines[3*r+i]; !strings.HasPrefix(got, want) {
				t.Errorf("round %d, line %d: %q, want it to start with %q", r+1, i+1, got, want)
			}
		}
	}
	summary := lines[9]
	var ours, ratio, lo, hi, simpyRatio float64
	if _, err := fmt.Sscanf(summary, "limitsim %g req/s (median of 3); bespoke loop 1.2e+04 req/s: limitsim at %f× (single rounds %f–%f×); SimPy 500 req/s: limitsim at %f×",
		&ours, &ratio, &lo, &hi, &simpyRatio); err != nil {
		t.Fatalf("summary %q: %v", summary, err)
	}
	// The median is printed to three significant digits: the ratios to it
	// agree within that rounding.
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.006*want+0.5e-2 }
	if !near(ratio, ours/12000) || lo > ratio || hi < ratio || !near(simpyRatio, ours/500) {
		t.Errorf("summary %q: limitsim's median %g against 12,000 and 500 req/s", summary, ours)
	}

	// Without simpy_model.py, SimPy is left out and the summary says why.
	if err := os.Remove(filepath.Join(dir, "simpy_model.py")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli("bench", "-n", "3000", "--compare", dir, "--rounds", "1")
	if code != exitOK || strings.Contains(out, "impl=simpy") || !strings.Contains(out, "has no simpy_model.py") {
		t.Errorf("without simpy_model.py: exit %d: %s%s", code, out, errOut)
	}

	// A loop that does not build.
	if err := os.WriteFile(filepath.Join(dir, "go_baseline", "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli("bench", "-n", "100", "--compare", dir)
	if code != exitInvalid || !strings.Contains(errOut, "building go_baseline") {
		t.Errorf("a loop that does not build: exit %d, want %d: %s", code, exitInvalid, errOut)
	}
}
