package scenarios

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// fuzzFile is the name FuzzParse gives Parse: relative trace and samples
// paths resolve in the package directory, inside the repository.
const fuzzFile = "fuzz.toml"

// readsOutsideRepo reports whether the input names a trace or samples file
// (the only files Parse opens) by an absolute path or one with "..". Parse
// opens such paths as given (a reported finding); the fuzzer must not.
func readsOutsideRepo(data []byte) bool {
	var tree map[string]any
	if _, err := toml.Decode(string(data), &tree); err != nil {
		return false // Parse stops at the syntax error
	}
	return namesOutside("", tree)
}

// namesOutside reports whether v, the value of key, is or holds a trace or
// samples path that is absolute or climbs out with "..".
func namesOutside(key string, v any) bool {
	switch x := v.(type) {
	case string:
		return (key == "trace" || key == "samples") &&
			(filepath.IsAbs(x) || strings.Contains(x, "..") || strings.HasPrefix(x, "~"))
	case map[string]any:
		for k, e := range x {
			if namesOutside(k, e) {
				return true
			}
		}
	case []map[string]any:
		for _, e := range x {
			if namesOutside(key, e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if namesOutside(key, e) {
				return true
			}
		}
	}
	return false
}

func FuzzParse(f *testing.F) {
	examples, err := filepath.Glob(filepath.Join("examples", "*.toml"))
	if err != nil || len(examples) == 0 {
		f.Fatalf("no examples: %v", err)
	}
	for _, name := range examples {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(minimalScenario))
	for _, src := range []string{sharedHourly, pointsScenario} {
		f.Add([]byte(src))
	}
	for _, c := range append(slices.Clip(badCases), sharedBadCases...) {
		src := minimalScenario
		for _, e := range c.edits {
			src = strings.Replace(src, e.old, e.new, 1)
		}
		f.Add([]byte(src))
	}
	for _, s := range []string{
		"",
		"[[",
		"name = \"\"\"unterminated",
		"[run]\nrun = 1\n[run.run]\n",
		"description = \"\"\"a\\\"\"\"]\"\"\"\n", // known hang
		"x = [\"\"\"\\\"\"\"}\"\"\"]\n",          // known hang
		strings.Replace(minimalScenario, "arrival = \"poisson\"\nrate = 50.0", "arrival = \"trace\"\ntrace = \"testdata/trace.csv\"", 1),
		strings.Replace(minimalScenario, "arrival = \"poisson\"\nrate = 50.0", "arrival = \"trace\"\ntrace = \"examples\"", 1),
		strings.Replace(minimalScenario, `latency = { dist = "exponential", mean = "50ms" }`,
			`latency = { dist = "empirical", samples = "testdata/samples.csv" }`, 1),
		strings.Replace(minimalScenario, `latency = { dist = "exponential", mean = "50ms" }`,
			`latency = { dist = "empirical", quantiles = [[0, "1ms"], [0.5, "20ms"], [1, "1s"]] }`, 1),
		strings.Replace(minimalScenario, `latency = { dist = "exponential", mean = "50ms" }`,
			"[upstream.latency]\ndist = \"mixture\"\n[[upstream.latency.components]]\nweight = 1\ndist = { dist = \"constant\", value = \"1ms\" }\n"+
				"[[upstream.latency.components]]\nweight = 2\n[upstream.latency.components.dist]\ndist = \"uniform\"\nmin = \"1ms\"\nmax = \"2ms\"\n", 1),
		strings.Replace(minimalScenario, "cost = 1", "tenants = [{ name = \"a\", rate = 5.0 }, { name = \"b\", arrival = \"onoff\", rate = 9.0, on = \"1s\", off = \"2s\" }]", 1),
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		switch {
		case len(data) > 1<<20:
			t.Skip("over 1 MiB")
		case readsOutsideRepo(data):
			t.Skip("names a data file outside the package directory")
		}
		// The key scan ends well within its step budget on any input.
		if _, steps := scanKeys(string(data)); steps >= stepBudget(len(data)) {
			t.Fatalf("the key scan of %d bytes ran out of steps (%d)", len(data), steps)
		}
		sc, err := parseFuzzed(t, func() string { return fmt.Sprintf("Parse of %q", data) },
			func() (*Scenario, error) { return Parse(fuzzFile, data) })
		if err == nil {
			if sc == nil {
				t.Fatal("Parse returned neither a scenario nor an error")
			}
			text, back := checkResolved(t, sc)
			// Each variant, as written there, gives over the resolved text
			// the variant as run over the input.
			for i, v := range sc.Variants {
				want, ok := asRun(nil, fuzzFile, data, v.Overrides())
				if !ok {
					continue
				}
				if got, ok := asRun(nil, fuzzFile, []byte(text), bare(back.Variants[i].Overrides())); got != want {
					t.Fatalf("variant %s over the resolved text (loads: %v):\n%s\n--- as run:\n%s", v.Name, ok, got, want)
				}
			}
			// Order warnings stay linear: at most one wait-graph edge per
			// limiter a path names.
			_, order := sc.PathLimiters()
			named := 0
			for _, o := range order {
				named += len(o)
			}
			if _, _, edges := orderGraph(sc); edges > named {
				t.Fatalf("%d wait-graph edges for %d limiters named along paths", edges, named)
			}
			return
		}
		if sc != nil {
			t.Errorf("Parse returned a scenario and an error")
		}
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("error is %T, not Problems: %v", err, err)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("error does not wrap ErrInvalid: %v", err)
		}
		if len(ps) == 0 {
			t.Fatal("empty Problems")
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, p := range ps {
			if p.Msg == "" || p.File == "" {
				t.Errorf("problem without message or file: %+v", p)
			}
			if p.File != fuzzFile {
				t.Errorf("problem names file %q, want %q", p.File, fuzzFile)
			}
			if p.Line < 0 || p.Line > lines {
				t.Errorf("problem on line %d of a %d-line input: %v", p.Line, lines, p)
			}
		}
		if msg := err.Error(); msg == "" || !strings.HasPrefix(msg, fuzzFile) {
			t.Errorf("Error() = %q", msg)
		}
		checkProblemLines(t, data, ps)
	})
}

// parseFuzzed runs parse (what names it in a failure, written only then). While fuzzing (go
// test -fuzz), which has no timeout for one input, a parse that has not
// returned in 5 s fails, so that a hang is saved as a crasher; the seed
// corpus run as a test is not timed.
func parseFuzzed(t *testing.T, what func() string, parse func() (*Scenario, error)) (*Scenario, error) {
	if f := flag.Lookup("test.fuzz"); f == nil || f.Value.String() == "" {
		return parse()
	}
	var sc *Scenario
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc, err = parse()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return within 5s", what())
	}
	return sc, err
}

// checkResolved checks an accepted scenario: it encodes, and its resolved
// text (the scenario.toml of -o) loads back and resolves to itself. It
// returns the text and the scenario loaded from it.
func checkResolved(t *testing.T, sc *Scenario) (string, *Scenario) {
	t.Helper()
	if err := toml.NewEncoder(io.Discard).Encode(sc); err != nil {
		t.Fatalf("accepted scenario does not encode: %v", err)
	}
	text, err := sc.Resolved()
	if err != nil {
		t.Fatalf("accepted scenario does not resolve: %v", err)
	}
	back, err := Parse(fuzzFile, []byte(text))
	if err != nil {
		t.Fatalf("resolved text does not load: %v\n%s", err, text)
	}
	if again, _ := back.Resolved(); again != text {
		t.Fatalf("resolving twice differs:\n%s\n---\n%s", text, again)
	}
	return text, back
}

var keyToken = regexp.MustCompile(`[^.\[\]]+|\[(\d+)\]`)

// lookupKey finds a problem's dotted key ("client.limiter[1].rate") in the
// decoded document.
func lookupKey(tree map[string]any, key string) bool {
	var cur any = tree
	toks := keyToken.FindAllStringSubmatch(key, -1)
	if len(toks) == 0 {
		return false
	}
	for _, m := range toks {
		if m[1] != "" {
			i, _ := strconv.Atoi(m[1])
			switch arr := cur.(type) {
			case []map[string]any:
				if i >= len(arr) {
					return false
				}
				cur = arr[i]
			case []any:
				if i >= len(arr) {
					return false
				}
				cur = arr[i]
			default:
				return false
			}
			continue
		}
		tbl, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = tbl[m[0]]; !ok {
			return false
		}
	}
	return true
}

// headerNames returns the names of the document's table headers, without
// brackets or spaces.
func headerNames(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			out = append(out, strings.NewReplacer(" ", "", "\t", "", "[", "", "]", "").Replace(strings.SplitN(l, "]", 2)[0]))
		}
	}
	return out
}

// nestedArrayOfTables matches a [[a.b]] header under a [[a]] array: the
// key index numbers those wrongly (TestKeyIndexNestedArrayOfTables).
func nestedArrayOfTables(data []byte) bool {
	arrays := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "[") {
			continue
		}
		name := headerNames([]byte(l))[0]
		parts := strings.Split(name, ".")
		for i := 1; i < len(parts); i++ {
			if arrays[strings.Join(parts[:i], ".")] {
				return true
			}
		}
		if strings.HasPrefix(l, "[[") {
			arrays[name] = true
		}
	}
	return false
}

// checkProblemLines checks the key index through Parse: a problem about a
// key the file defines must point at a line that names that key.
func checkProblemLines(t *testing.T, data []byte, ps Problems) {
	var tree map[string]any
	if _, err := toml.Decode(string(data), &tree); err != nil || nestedArrayOfTables(data) {
		return
	}
	lines := strings.Split(string(data), "\n")
	for _, p := range ps {
		if p.Key == "" || !lookupKey(tree, p.Key) {
			continue
		}
		toks := keyToken.FindAllString(p.Key, -1)
		leaf := toks[len(toks)-1]
		var wrong string
		switch {
		case p.Line == 0:
			wrong = "has no line"
		case p.Line > len(lines):
			wrong = "points past the end"
		case !strings.HasPrefix(leaf, "[") && !strings.Contains(lines[p.Line-1], leaf) && !strings.Contains(lines[p.Line-1], `\`):
			wrong = fmt.Sprintf("points at line %d, which does not name %q: %q", p.Line, leaf, lines[p.Line-1])
		default:
			continue
		}
		t.Errorf("problem about %q, which the file defines, %s\n%v", p.Key, wrong, p)
	}
}

func TestFuzzGuards(t *testing.T) {
	for src, want := range map[string]bool{
		"[workload]\ntrace = \"/etc/passwd\"\n":                                    true,
		"[workload]\ntrace = \"testdata/../../go.mod\"\n":                          true,
		"[[upstream]]\nlatency = { dist = \"empirical\", samples = \"/x.csv\" }\n": true,
		"[[upstream.latency.components]]\ndist = { samples = '/x' }\n":             true,
		"[workload]\ntrace = \"testdata/trace.csv\"\n":                             false,
		"description = \"/etc/passwd and ..\"\n":                                   false,
		"trace = \"/etc/passwd\n":                                                  false, // syntax error: nothing is read
	} {
		if got := readsOutsideRepo([]byte(src)); got != want {
			t.Errorf("readsOutsideRepo(%q) = %v, want %v", src, got, want)
		}
	}
}

// FuzzOverride applies any --set KEY=VALUE to a valid scenario, or
// several, separated by NUL bytes (limiters made, removed, made again).
// Whatever the text, ParseOverride and ParseWith return (no panic, no
// hang); a refused override is a list of problems, each on one line,
// naming --set or the scenario file; an accepted one leaves a scenario
// that encodes.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{
		"run.seed=2", "client.limiter.bucket.rate=45", "client.limiter[0].rate=4.5", "client.limiter.0.rate=3",
		"run.warmup=", "upstream.api.retry_after=2s", "upstream.*.workers=8", "upstream.*.quota.1.rate=3000",
		`workload.tenants=[{ name = "a", weight = 2.0 }]`, `workload.tenants.a.rate=200`, "client.limiter.bucket=2",
		"x.y.z=[1, 2]", "run.seed.x=2", "client.limiter[9].rate=1", "run.requests=1000\nname = \"x\"",
		`upstream[0].latency={ dist = "constant", value = "1ms" }`, "name=\x1b[2K", "client.limiter.bucket.scope=tenant",
		"client.limiter.conns=", "client.limiter.new.kind=gcra\x00client.limiter.new.rate=5", "client.limiter[x.y].kind=semaphore",
		"client.limiter.bucket=\x00client.limiter.bucket.kind=semaphore\x00client.limiter.bucket.permits=2\x00client.limiter.conns=",
		`upstream.api.quota={ kind = "nginx_limit_req", rate = "50r/s", burst = 20 }`, "upstream.api.quota.status=503",
		"client.on_limit.statuses=[429, 503]",
		`quota=[{ name = "h", kind = "fixed_window", limit = 10, window = "1h" }]` + "\x00quota.h.limit=4000\x00quota.h.upstreams=[\"api\"]",
		`quota=[{ name = "p", kind = "token_bucket", rate = 5.0, unit = "cost" }]` + "\x00quota.p=\x00quota[0].rate=2",
		`client.path=[{ name = "r", limiters = ["bucket"], cost = 2, method = "GET" }]` + "\x00client.path.r.cost=5\x00client.path.r.method=PUT",
		`client.path=[{ name = "w", limiters = [], cost = { dist = "uniform", min = 1, max = 9 } }]` + "\x00client.path.w.cost.max=0",
	} {
		f.Add(s)
	}
	// Every input is also loaded through one Loader kept across inputs,
	// as a plan's points are: each load must give what a fresh load gives,
	// and the tree the Loader keeps must stay as parsed, whatever an
	// override set, removed or created.
	ld := NewLoader()
	kept, err := ld.tree(fuzzFile, []byte(minimalScenario), false)
	if err != nil {
		f.Fatal(err)
	}
	parsed, err := decodeTree(fuzzFile, []byte(minimalScenario))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var sets []Override
		for _, s := range strings.SplitN(s, "\x00", 8) {
			o, err := ParseOverride(s)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error")
				}
				return
			}
			if strings.HasSuffix(o.Key, "trace") || strings.HasSuffix(o.Key, "samples") || namesOutside("", o.Value) {
				t.Skip("names a data file")
			}
			sets = append(sets, o)
		}
		sc, err := parseFuzzed(t, func() string { return fmt.Sprintf("ParseWith %v", sets) }, func() (*Scenario, error) {
			return ParseWith(fuzzFile, []byte(minimalScenario), sets)
		})
		got, gerr := ld.ParseWith(fuzzFile, []byte(minimalScenario), sets)
		if fmt.Sprint(gerr) != fmt.Sprint(err) || err == nil && !sameScenario(got, sc) {
			t.Errorf("through the kept Loader: %v, afresh: %v", gerr, err)
		}
		if !reflect.DeepEqual(kept, parsed) {
			t.Fatalf("%v changed the tree the Loader keeps", sets)
		}
		if err == nil {
			if sc == nil {
				t.Fatal("ParseWith returned neither a scenario nor an error")
			}
			checkResolved(t, sc) // the scenario.toml of -o runs the overridden scenario
			return
		}
		var ps Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Fatalf("error is %T, not Problems: %v", err, err)
		}
		for _, p := range ps {
			if p.Msg == "" || (p.File != "--set" && p.File != fuzzFile) {
				t.Errorf("problem without message or naming %q: %+v", p.File, p)
			}
		}
		if msg := err.Error(); strings.Count(msg, "\n")+1 != len(ps) || strings.ContainsAny(msg, "\x1b\r") {
			t.Errorf("%d problems do not print as %d lines: %q", len(ps), len(ps), msg)
		}
	})
}
