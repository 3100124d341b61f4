package scenarios

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// traceScenario is minimalScenario replaying trace.csv, with samples.csv
// as the cdn's latency samples.
func traceScenario(t *testing.T) string {
	return applyEdits(t, minimalScenario, []textEdit{
		{"arrival = \"poisson\"\nrate = 50.0", "arrival = \"trace\"\ntrace = \"trace.csv\""},
		{`latency = { dist = "exponential", mean = "50ms" }`, `latency = { dist = "empirical", samples = "samples.csv" }`},
	})
}

// sameScenario reports whether a and b are the same scenario, whichever
// Loader each was loaded through.
func sameScenario(a, b *Scenario) bool {
	if a == nil || b == nil {
		return a == b
	}
	ac, bc := *a, *b
	ac.ld, bc.ld = nil, nil
	return reflect.DeepEqual(ac, bc)
}

// writeFiles writes name → content into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A scenario loaded through a Loader is the scenario loaded afresh, with
// overrides or without, the first time and from what the Loader kept;
// every bundled example and a scenario with a trace and samples are
// compared. An override that deletes a key, creates a table or sets an
// entry of an array of tables changes the copy a load starts from, never
// what the Loader keeps: a load without it afterwards is as before.
func TestLoaderLoadsAsAfresh(t *testing.T) {
	examples, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	ld := NewLoader()
	sets := [][]Override{
		nil,
		{{Key: "run.seed", Value: int64(99)}},
		{{Key: "client.retry"}, {Key: "run.duration", Value: "77s"}}, // a deletion
		{{Key: "client.headers.pause_at_zero", Value: true}},         // a table created
		nil,
	}
	for _, e := range examples {
		file := "examples/" + e.Name + ".toml"
		for _, ovs := range sets {
			want, werr := ParseWith(file, e.Source, ovs)
			got, gerr := ld.ParseWith(file, e.Source, ovs)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || !sameScenario(got, want) {
				t.Fatalf("%s with %v: through the Loader and afresh differ (%v, %v)", e.Name, ovs, gerr, werr)
			}
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"s.toml": traceScenario(t), "trace.csv": "3\n1\n2\n", "samples.csv": "0.3\n0.1\n0.2\n"})
	path := filepath.Join(dir, "s.toml")
	for _, ovs := range append(sets, []Override{{Key: "workload.hosts.api.weight", Value: 3.0}}, nil) {
		want, werr := LoadWith(path, ovs)
		got, gerr := ld.LoadWith(path, ovs)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !sameScenario(got, want) {
			t.Fatalf("trace scenario with %v: through the Loader and afresh differ (%v, %v)", ovs, gerr, werr)
		}
	}
	got, err := ld.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !reflect.DeepEqual(got.Workload.TraceTimes, want) {
		t.Errorf("trace %v, want it sorted: %v", got.Workload.TraceTimes, want)
	}
	samples := got.Upstreams[1].Latency.Dist.(upstream.Empirical).Samples
	if want := []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}; !reflect.DeepEqual(samples, want) {
		t.Errorf("samples %v, want them in the file's order: %v", samples, want)
	}
}

// A Loader reads each file once: a scenario or samples file changed after
// its first load leaves later loads as they were (a plan's points all run
// the same scenario), while a load afresh sees the change. A trace in
// ascending order, which each run reads again, is checked against its
// first reading instead: replaying it, or copying it beside a plan's
// outputs, fails naming the file once it changed. A file the scenario
// names under two uses (a trace and samples) gives each the same text,
// or fails so.
func TestLoaderReadsEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	src := traceScenario(t)
	writeFiles(t, dir, map[string]string{"s.toml": src, "trace.csv": "0.5\n1.5\n", "samples.csv": "0.05\n"})
	path := filepath.Join(dir, "s.toml")
	ld := NewLoader()
	first, err := ld.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := traceInstants(first); err != nil || !reflect.DeepEqual(got, []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}) {
		t.Fatalf("the trace replays %v (%v), want 0.5s and 1.5s", got, err)
	}
	writeFiles(t, dir, map[string]string{"s.toml": strings.Replace(src, "seed = 7", "seed = 8", 1), "trace.csv": "9\n", "samples.csv": "0.9\n"})
	again, err := ld.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameScenario(again, first) {
		t.Errorf("the Loader read changed files: seed %d; first seed %d", again.Run.Seed, first.Run.Seed)
	}
	changed := filepath.Join(dir, "trace.csv") + ": the file changed after it was first read"
	if got, err := traceInstants(again); err == nil || !strings.Contains(err.Error(), changed) {
		t.Errorf("replaying a trace changed since the Loader read it: %v (%v), want an error naming it", got, err)
	}
	fresh, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The data files a plan copies beside recommended.toml are those it
	// ran, or the copy fails.
	for _, c := range []struct {
		sc         *Scenario
		want, fail string
	}{{again, "", changed}, {fresh, "9\n", ""}} {
		var b []byte
		f, err := c.sc.OpenDataFile("trace.csv")
		if err == nil {
			b, err = io.ReadAll(f)
			f.Close()
		}
		if c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)) || c.fail == "" && (err != nil || string(b) != c.want) {
			t.Errorf("OpenDataFile: %q (%v), want %q or an error %q", b, err, c.want, c.fail)
		}
	}
	if tr, err := traceInstants(fresh); fresh.Run.Seed != 8 || err != nil || !reflect.DeepEqual(tr, []time.Duration{9 * time.Second}) || fresh.Upstreams[1].Latency.Dist.(upstream.Empirical).Samples[0] != 900*time.Millisecond {
		t.Errorf("a load afresh did not see the changed files: seed %d, trace %v (%v), samples %v",
			fresh.Run.Seed, tr, err, fresh.Upstreams[1].Latency.Dist.(upstream.Empirical).Samples)
	}

	both := strings.Replace(traceScenario(t), `samples = "samples.csv"`, `samples = "trace.csv"`, 1)
	writeFiles(t, dir, map[string]string{"both.toml": both, "trace.csv": "2\n1\n"})
	sc, err := NewLoader().LoadWith(filepath.Join(dir, "both.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	values := []time.Duration{2 * time.Second, time.Second}
	sorted := slices.Sorted(slices.Values(values))
	if tr, sm := sc.Workload.TraceTimes, sc.Upstreams[1].Latency.Dist.(upstream.Empirical).Samples; !reflect.DeepEqual(tr, sorted) || !reflect.DeepEqual(sm, values) {
		t.Errorf("one file as trace and samples: trace %v (want %v), samples %v (want %v)", tr, sorted, sm, values)
	}
	// ld first read trace.csv as a trace of 0.5s and 1.5s: as samples now,
	// it is another text.
	if _, err := ld.LoadWith(filepath.Join(dir, "both.toml"), nil); err == nil || !strings.Contains(err.Error(), changed) {
		t.Errorf("samples from a file the Loader read as a trace before it changed: %v, want an error naming it", err)
	}
}

// Problems come through a Loader as they come afresh, each time: a
// missing data file, a syntax error, an override the file refuses.
func TestLoaderProblems(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"s.toml": traceScenario(t), "samples.csv": "0.1\n", "bad.toml": "name = \n"})
	ld := NewLoader()
	for _, c := range []struct {
		file string
		ovs  []Override
	}{
		{"s.toml", nil}, // trace.csv is missing
		{"bad.toml", nil},
		{"s.toml", []Override{{Key: "client.limiter.nosuch.rate", Value: 1.0}}},
	} {
		path := filepath.Join(dir, c.file)
		_, want := LoadWith(path, c.ovs)
		for range 2 {
			if _, got := ld.LoadWith(path, c.ovs); want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s with %v: %v through the Loader, %v afresh", c.file, c.ovs, got, want)
			}
		}
	}
}

// Loads through one Loader may run at once (a plan's workers): each gets
// the scenario its overrides make. Run with -race, this also checks that
// they share only what none of them changes.
func TestLoaderConcurrentLoads(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"s.toml": traceScenario(t), "trace.csv": "3\n1\n2\n", "samples.csv": "0.1\n0.2\n"})
	path := filepath.Join(dir, "s.toml")
	ld := NewLoader()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	// A table set whole and then a key inside it: every load writes into
	// its own copy of the shared override's table, never into the table.
	table, err := ParseOverride(`upstream.api.quota={kind="token_bucket", rate=100.0, burst=5}`)
	if err != nil {
		t.Fatal(err)
	}
	for i := range errs {
		wg.Go(func() {
			ovs := []Override{{Key: "client.limiter.bucket.rate", Value: float64(10 + i)}, table,
				{Key: "upstream.api.quota.rate", Value: float64(50 + i)}}
			want, err := LoadWith(path, ovs)
			if err != nil {
				errs[i] = err
				return
			}
			got, err := ld.LoadWith(path, ovs)
			if err == nil && !sameScenario(got, want) {
				err = fmt.Errorf("load %d: through the Loader rate %v, afresh %v", i, got.Client.Limiters[0].Rate, want.Client.Limiters[0].Rate)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if q := table.Value.(map[string]any); q["rate"] != 100.0 || len(q) != 3 {
		t.Errorf("the loads wrote into the override's own table: %v", q)
	}
}

// parseTree only reads the tree it is given: a Loader hands the same tree
// to every load of a text without overrides, some of them at once. Every
// bundled example, the scenario of this file's tests and a file with
// problems (whose decoding takes other paths) are parsed from a tree and
// the tree compared with a copy taken before.
func TestParseTreeLeavesTheTree(t *testing.T) {
	examples, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string][]byte{"minimal": []byte(minimalScenario),
		"problems": []byte(strings.Replace(strings.Replace(minimalScenario, "rate = 40.0", "rate = -4", 1), "permits = 8", "permits = \"eight\"\nbogus = 1", 1))}
	for _, e := range examples {
		texts[e.Name] = e.Source
	}
	for name, src := range texts {
		tree, err := decodeTree(name+".toml", src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before := copyTree(tree)
		_, perr := parseTree(NewLoader(), name+".toml", src, tree, nil)
		if name == "problems" && perr == nil {
			t.Fatalf("%s: no problem found", name)
		}
		if !reflect.DeepEqual(tree, before) {
			t.Errorf("%s: parsing changed the tree it read", name)
		}
	}
}

// Overrides write only into copies of the tables on their path: the tree
// a Loader keeps for a text is the same after loads with overrides of
// every shape (an entry by name and by position, a table's key, a key
// removed, a table created, a table set whole, a limiter made and one
// removed), each load gets what a
// fresh load gets, and what no override reaches is shared, not copied (a
// copy of ten thousand tenants' tables at every point of a plan).
func TestOverridesCopyOnlyTheirPath(t *testing.T) {
	src := []byte(strings.Replace(minimalScenario, `hosts = [{ name = "api" }, { name = "cdn" }]`,
		"hosts = [{ name = \"api\" }, { name = \"cdn\" }]\ntenants = [{ name = \"a\" }, { name = \"b\", weight = 2.0 }]", 1))
	ovs := [][]Override{
		{{Key: "run.seed", Value: 9.0}},
		{{Key: "client.limiter.bucket.rate", Value: 20.0}, {Key: "workload.tenants.b.weight", Value: 3.0}},
		{{Key: "client.limiter.1.permits", Value: 4.0}, {Key: "upstream.api.quota.rate", Value: 50.0}},
		{{Key: "client.request_timeout"}, {Key: "upstream.cdn.quota", Value: map[string]any{"kind": "token_bucket", "rate": 10.0}}},
		{{Key: "client.reserve.tokens", Value: 1.0}},
		{{Key: "client.limiter.new.kind", Value: "gcra"}, {Key: "client.limiter.new.rate", Value: 5.0}, {Key: "client.limiter.bucket"}},
	}
	ld := NewLoader()
	shared, err := ld.tree("s.toml", src, false)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := decodeTree("s.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ovs {
		got, gerr := ld.ParseWith("s.toml", src, o)
		want, werr := ParseWith("s.toml", src, o)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || gerr == nil && !sameScenario(got, want) {
			t.Errorf("%v: through the Loader %v, afresh %v", o, gerr, werr)
		}
		if !reflect.DeepEqual(shared, fresh) {
			t.Fatalf("%v: the kept tree changed", o)
		}
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	tree, err := ld.tree("s.toml", src, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&overriding{by: map[string]Override{}}).apply(tree, Override{Key: "client.limiter.bucket.rate", Value: 20.0}); err != nil {
		t.Fatal(err)
	}
	if !same(tree["workload"], shared["workload"]) || !same(tree["upstream"], shared["upstream"]) {
		t.Error("tables no override reaches were copied")
	}
	client, kept := tree["client"].(map[string]any), shared["client"].(map[string]any)
	if same(client, kept) || same(client["limiter"], kept["limiter"]) {
		t.Error("the tables on the override's path were not copied")
	}
	if got, want := client["limiter"].([]map[string]any)[1], kept["limiter"].([]map[string]any)[1]; !same(got, want) {
		t.Error("a limiter the override does not name was copied")
	}
}

// A bare name is a file of that name in the working folder when there is
// one, else the bundled example: a folder of that name (the -o of an
// earlier `limitsim run token-bucket -o token-bucket`) does not hide the
// example, and a folder named like no example is refused as what it is.
func TestBareNameFolderDoesNotHideTheExample(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("token-bucket", 0o755); err != nil {
		t.Fatal(err)
	}
	l := NewLoader()
	sc, err := l.Open("token-bucket", nil)
	if err != nil || sc.Name != "token-bucket" {
		t.Fatalf("a folder named token-bucket: %v", err)
	}
	if err := os.Mkdir("not-an-example", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Open("not-an-example", nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder named like no example: %v", err)
	}
	if err := os.WriteFile("sliding-window", []byte("name = \"mine\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Open("sliding-window", nil); err == nil || !strings.Contains(err.Error(), "sliding-window") || strings.Contains(err.Error(), "bundled") {
		t.Errorf("a file named like an example is read as the file: %v", err)
	}
}
