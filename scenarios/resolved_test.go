package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// bundledCount is the number of scenarios in examples/.
const bundledCount = 27

// The resolved scenario loads back to the same scenario, for every example.
func TestResolvedRoundTrips(t *testing.T) {
	files, err := filepath.Glob("examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	var found, bundled []string
	for _, f := range files {
		found = append(found, strings.TrimSuffix(filepath.Base(f), ".toml"))
	}
	for _, e := range ex {
		bundled = append(bundled, e.Name)
	}
	slices.Sort(found)
	slices.Sort(bundled)
	if len(files) != bundledCount || !slices.Equal(found, bundled) {
		t.Fatalf("round-trip covers %d files %v; want the %d bundled scenarios %v", len(files), found, bundledCount, bundled)
	}
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		text, err := sc.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(f, []byte(text))
		if err != nil {
			t.Fatalf("%s: resolved text does not load: %v\n%s", f, err, text)
		}
		again, _ := back.Resolved()
		if again != text {
			t.Fatalf("%s: resolving twice differs:\n%s\n---\n%s", f, text, again)
		}
	}
}

// Each variant is written as run: over the resolved text, where every
// default is written out, it gives the same scenario as over the file as
// written. Its own overrides would not: a bucket's burst defaults to its
// rate, so "rate=80" over a written-out burst of 40 keeps 40 where the file
// gives 80; and a key only defaults wrote (a token bucket's initial_fill)
// does not apply once a variant makes the bucket a gcra.
func TestResolvedVariantsAsRun(t *testing.T) {
	defaultBurst := strings.Replace(minimalScenario, "rate = 40.0\nburst = 40\n", "rate = 40.0\n", 1)
	for _, c := range []struct{ name, src, want string }{
		{"kinds", minimalScenario + `
[[variant]]
name = "gcra"
set = ["client.limiter.bucket.kind=gcra"]

[[variant]]
name = "cap"
set = ["upstream.api.quota.kind=concurrency", "upstream.api.quota.rate=", "upstream.api.quota.burst=", "upstream.api.quota.permits=20"]
`, `set = ["client.limiter.bucket.initial_fill=", "client.limiter.bucket.kind=\"gcra\""]`},
		{"defaults that follow", defaultBurst + `
[[variant]]
name = "faster"
set = ["client.limiter.bucket.rate=80"]
`, `set = ["client.limiter.bucket.burst=80.0", "client.limiter.bucket.rate=80.0"]`},
		// Entries of an unnamed list by position: quota.0.rate.
		{"a list of quotas", strings.Replace(minimalScenario, `quota = { kind = "token_bucket", rate = 100.0, burst = 100 }`,
			`quota = [{ kind = "token_bucket", rate = 10.0 }, { kind = "concurrency", permits = 50 }]`, 1) + `
[[variant]]
name = "faster"
set = ["upstream.api.quota.0.rate=30"]
`, `set = ["upstream.api.quota.0.burst=30", "upstream.api.quota.0.rate=30"]`},
	} {
		sc, err := Parse(badFile, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text, err := sc.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(badFile, []byte(text))
		if err != nil {
			t.Fatalf("%s: resolved text does not load: %v\n%s", c.name, err, text)
		}
		if again, _ := back.Resolved(); again != text {
			t.Fatalf("%s: resolving twice differs:\n%s\n---\n%s", c.name, text, again)
		}
		if !strings.Contains(text, c.want) {
			t.Errorf("%s: no %s in\n%s", c.name, c.want, text)
		}
		for i, v := range sc.Variants {
			want, err := parseVariant(nil, badFile, []byte(c.src), v.Overrides())
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseVariant(nil, badFile, []byte(text), back.Variants[i].Overrides())
			if err != nil {
				t.Fatalf("%s: variant %s over the resolved text: %v", c.name, v.Name, err)
			}
			w, _ := want.Resolved()
			g, _ := got.Resolved()
			if g != w {
				t.Errorf("%s: variant %s over the resolved text:\n%s\n--- over the file:\n%s", c.name, v.Name, g, w)
			}
		}
	}
}

// With --set overrides, the variants are written as run over them: the
// file, the overrides, then the variant's own.
func TestResolvedVariantsOverOverrides(t *testing.T) {
	src := strings.Replace(minimalScenario, "rate = 40.0\nburst = 40\n", "rate = 40.0\n", 1) + `
[[variant]]
name = "faster"
set = ["client.limiter.bucket.rate=80"]
`
	sc, err := ParseWith(badFile, []byte(src), []Override{{Key: "client.limiter.bucket.rate", Value: 60.0}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if want := `set = ["client.limiter.bucket.burst=80.0", "client.limiter.bucket.rate=80.0"]`; !strings.Contains(text, want) ||
		!strings.Contains(text, "rate = 60.0\nburst = 60.0\n") {
		t.Fatalf("want the base at 60 and %s in\n%s", want, text)
	}
	// Overrides of the scenario's own sweeps and variants apply as compare
	// applies them, the variants still written as run.
	swept := src + "\n[[sweep]]\nkey = \"client.limiter.bucket.rate\"\nvalues = [20.0, 40.0]\n"
	for _, o := range []Override{{Key: "sweep.0.values", Value: []any{int64(30), int64(50)}}, {Key: "variant.0.name", Value: "fast"}} {
		sc, err := ParseWith(badFile, []byte(swept), []Override{o})
		if err != nil {
			t.Fatal(err)
		}
		text, err := sc.Resolved()
		if want := `set = ["client.limiter.bucket.burst=80.0", "client.limiter.bucket.rate=80.0"]`; err != nil || !strings.Contains(text, want) {
			t.Errorf("with %v: want %s in\n%s (%v)", o, want, text, err)
		}
	}
}

// A value written by inlineValue reads back through ParseOverride as
// itself: the type (a whole float stays a float), quotes, backslashes and
// control characters in strings, keys that need quoting.
func TestInlineValueReadsBack(t *testing.T) {
	for _, v := range []any{
		"plain", "q\"b\\s\x01\a\v\t\x7fé\u2028", int64(-3), 80.0, -0.5, 1e300, 1.5e-7, true,
		[]any{int64(1), "x", 2.0}, []any{},
		map[string]any{"k": int64(1), "a b": "v", "nested": map[string]any{"x": false}},
		[]map[string]any{{"name": "a", "weight": 2.0}, {"name": "b"}},
	} {
		text, ok := inlineValue(v)
		if !ok {
			t.Fatalf("%#v not written", v)
		}
		o, err := ParseOverride("k=" + text)
		want := v
		if m, ok := v.([]map[string]any); ok { // TOML reads an array of inline tables as []any
			want = []any{m[0], m[1]}
		}
		if err != nil || !reflect.DeepEqual(o.Value, want) {
			t.Errorf("%#v written as %s reads back as %#v (%v)", v, text, o.Value, err)
		}
	}
}

// A samples file whose name holds a control character is written in TOML's
// escapes, not Go's (no \a in TOML): the resolved text loads back.
func TestResolvedWritesPathsInTOMLEscapes(t *testing.T) {
	dir := t.TempDir()
	samples, err := os.ReadFile(filepath.Join("testdata", "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lat\a\"x\".csv"), samples, 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(minimalScenario, `latency = { dist = "exponential", mean = "50ms" }`,
		`latency = { dist = "empirical", samples = "lat\u0007\"x\".csv" }`, 1)
	file := filepath.Join(dir, "s.toml")
	sc, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(file, []byte(text)); err != nil {
		t.Fatalf("resolved text does not load: %v\n%s", err, text)
	}
}
