package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report/metrics"
)

// limiterNames lists the scenario's limiters by name, in order.
func limiterNames(sc *Scenario) []string {
	var out []string
	for _, l := range sc.Client.Limiters {
		out = append(out, l.Name)
	}
	return out
}

// sameAsRun reports whether a and b are the same scenario as run, wherever
// each was read from.
func sameAsRun(a, b *Scenario) bool {
	ac, bc := *a, *b
	for _, c := range []*Scenario{&ac, &bc} {
		c.File, c.src, c.sets, c.ld = "", nil, nil, nil
	}
	return reflect.DeepEqual(ac, bc)
}

// roundTrips checks that the scenario as run (the scenario.toml of -o)
// loads back to the same scenario.
func roundTrips(t *testing.T, sc *Scenario) string {
	t.Helper()
	text, back := checkResolved(t, sc)
	if !sameAsRun(sc, back) {
		t.Errorf("the scenario as run loads back to another scenario:\n%s", text)
	}
	return text
}

// Overrides naming a limiter the file lacks make it, from all of them,
// after the file's limiters; it is validated as one written in the file
// is, runs, shows in the results by its name and kind, and the scenario
// as run writes it and loads back the same.
func TestOverridesMakeALimiter(t *testing.T) {
	sc, err := ParseWith(badFile, []byte(minimalScenario), []Override{
		{Key: "client.limiter.extra.kind", Value: "gcra"},
		{Key: "client.limiter.bucket.rate", Value: 45.0},
		{Key: "client.limiter.extra.rate", Value: 30.0},
		{Key: "client.limiter[extra].max_waiting", Value: 5.0},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := limiterNames(sc); !slices.Equal(got, []string{"bucket", "conns", "extra"}) {
		t.Fatalf("limiters %v, want the new one after the file's", got)
	}
	l := sc.Client.Limiters[2]
	if l.Kind != "gcra" || l.Scope != "global" || l.Rate != 30 || l.MaxWaiting != models.AtMost(5) || sc.Client.Limiters[0].Rate != 45 {
		t.Fatalf("new limiter %+v", l)
	}
	out := mustSimulate(t, sc, nil)
	if r := limiter(t, out.Results, "extra"); r.Kind != "gcra" || r.Acquired == 0 {
		t.Errorf("results of the new limiter: %+v", r)
	}
	if text := roundTrips(t, sc); !strings.Contains(text, "name = \"extra\"\nkind = \"gcra\"") {
		t.Errorf("the scenario as run lacks the new limiter:\n%s", text)
	}
	// A file without limiters gets its first.
	src := strings.Replace(strings.Replace(minimalScenario, "[[client.limiter]]\nname = \"bucket\"\nkind = \"token_bucket\"\nrate = 40.0\nburst = 40\n", "", 1),
		"[[client.limiter]]\nname = \"conns\"\nkind = \"semaphore\"\npermits = 8\n", "", 1)
	sc, err = ParseWith(badFile, []byte(src), []Override{{Key: "client.limiter.only.kind", Value: "semaphore"}, {Key: "client.limiter.only.permits", Value: 2.0}})
	if err != nil || !slices.Equal(limiterNames(sc), []string{"only"}) {
		t.Fatalf("a file without limiters: %v, %v", err, sc)
	}
}

// A made limiter is checked as a whole, and what is wrong with it names
// the override as the key: the file has no such entry for a line or a
// position to mean anything. One without a kind says so, and names the
// limiters there are, as a misspelt name would be told.
func TestMadeLimiterProblemsNameTheOverride(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"client.limiter.extra.rate=3"}, `--set: client.limiter.extra.rate: no client.limiter with name "extra" (known: bucket, conns), so this makes a new limiter, which needs its kind: --set client.limiter.extra.kind=KIND, KIND one of token_bucket, gcra,`},
		{[]string{"client.limiter.buckt.rate=3"}, `(known: bucket, conns; did you mean bucket?)`},
		{[]string{"client.limiter.extra.kind=token_bucket", "client.limiter.extra.rate=5", "client.limiter.extra.permits=3"},
			`--set: client.limiter.extra.permits: does not apply with kind = "token_bucket", scope = "global" (keys here: name, kind, scope, max_waiting, unit, rate, burst, initial_fill) (set by client.limiter.extra.permits=3)`},
		{[]string{"client.limiter.extra.kind=token_bucket"}, `--set: client.limiter.extra.rate: is required (in client.limiter.extra, which the file does not have: --set client.limiter.extra.kind=token_bucket made it)`},
		{[]string{"client.limiter.extra.kind=token_bucket", "client.limiter.extra.rate=-1"}, `--set: client.limiter.extra.rate: must be greater than 0, got -1 (set by client.limiter.extra.rate=-1)`},
		{[]string{"client.limiter.extra.kind=bucket"}, `--set: client.limiter.extra.kind: `},
		{[]string{"client.limiter[x.y].kind=semaphore", "client.limiter[x.y].permit=3"}, `--set: client.limiter[x.y].permit: unknown key (did you mean permits?)`},
		{[]string{"client.limiter.extra.kind=semaphore", "client.limiter.extra.permits=2", "client.limiter.extra.kind="}, `--set: client.limiter.extra.kind: no client.limiter with name "extra"`},
	} {
		var sets []Override
		for _, s := range c.sets {
			o, err := ParseOverride(s)
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, o)
		}
		_, err := ParseWith(badFile, []byte(minimalScenario), sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.sets, err, c.want)
		}
	}
}

// `client.limiter.NAME=` removes the limiter, and takes it out of every
// path that takes it: a path keeps its other limiters, in its order. The
// run lacks it, and the scenario as run writes what ran. The other
// empty-value forms keep their meaning: a limiter's key, removed.
func TestOverrideRemovesALimiter(t *testing.T) {
	sc, err := LoadWith("examples/fail-deadlock.toml", []Override{{Key: "client.limiter.db"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := limiterNames(sc); !slices.Equal(got, []string{"cache"}) {
		t.Fatalf("limiters %v", got)
	}
	for _, p := range sc.Client.Paths {
		if !slices.Equal(p.Limiters, []string{"cache"}) {
			t.Errorf("path %s takes %v, want [cache]", p.Name, p.Limiters)
		}
	}
	out := mustSimulate(t, sc, nil)
	if !out.Results.Complete || len(out.Results.Limiters) != 1 || out.Results.Limiters[0].Name != "cache" {
		t.Errorf("the run without db: complete %v, limiters %+v", out.Results.Complete, out.Results.Limiters)
	}
	roundTrips(t, sc)
	// Made again, it is a new limiter, after the others, that no path takes.
	sc, err = LoadWith("examples/fail-deadlock.toml", []Override{{Key: "client.limiter.db"},
		{Key: "client.limiter.db.kind", Value: "semaphore"}, {Key: "client.limiter.db.permits", Value: 2.0}})
	if err != nil || !slices.Equal(limiterNames(sc), []string{"cache", "db"}) ||
		!slices.ContainsFunc(sc.Warnings, func(w metrics.Warning) bool { return strings.Contains(w.Text, "(db) has no effect") }) {
		t.Fatalf("db removed and made again: %v, %+v", err, sc)
	}
	// The key forms keep their meaning.
	sc, err = ParseWith(badFile, []byte(minimalScenario), []Override{{Key: "client.limiter[bucket].rate", Value: 80.0}, {Key: "client.limiter.bucket.burst"}})
	if err != nil || !slices.Equal(limiterNames(sc), []string{"bucket", "conns"}) || sc.Client.Limiters[0].Burst != 80 {
		t.Fatalf("a key removed: %v, %+v", err, sc)
	}
	sc, err = ParseWith(badFile, []byte(minimalScenario), []Override{{Key: "client.limiter"}})
	if err != nil || len(sc.Client.Limiters) != 0 {
		t.Fatalf("the whole list removed: %v, %+v", err, sc)
	}
	deadlock, err := ExampleSource("fail-deadlock")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sets []Override
		want string
	}{
		{[]Override{{Key: "client.limiter.nosuch"}}, `--set: client.limiter.nosuch: no client.limiter with name "nosuch" to remove (known: cache, db)`},
		{[]Override{{Key: "client.limiter.db", Value: 2.0}}, "names an entry; say which key of it to set, or give it no value to remove the limiter"},
		{[]Override{{Key: "client.path.reads"}}, "client.path.reads names an entry; say which key of it to set"},
		// A reference set after the removal is the override's problem.
		{[]Override{{Key: "client.limiter.db"}, {Key: "client.path.reads.limiters", Value: []any{"db", "cache"}}},
			`--set: client.path[1].limiters[0]: names no limiter "db" (known: cache) (set by client.path.reads.limiters=`},
		{[]Override{{Key: "client.limiter.db"}, {Key: "client.limiter.db.permits", Value: 2.0}}, "so this makes a new limiter, which needs its kind"},
	} {
		_, err := ParseWith("fail-deadlock.toml", deadlock, c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.sets, err, c.want)
		}
	}
}

// A problem the file has on its own, in an entry after one an override
// removed, is named at its line and by its key in the file, not by where
// the removal moved it.
func TestRemovalKeepsTheFilesProblemsAtTheirLines(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{{"permits = 8", "permits = 0"}, {"[client.retry]", `[[client.path]]
name = "p"
limiters = [
  "bucket",
  "connz",
]

[client.retry]`}})
	_, err := ParseWith(badFile, []byte(src), []Override{{Key: "client.limiter.bucket"}})
	for _, want := range []string{
		fmt.Sprintf("%s:%d: client.limiter[1].permits: must be at least 1", badFile, lineContaining(t, src, "permits = 0")),
		fmt.Sprintf("%s:%d: client.path[0].limiters[1]: names no limiter \"connz\"", badFile, lineContaining(t, src, `"connz"`)),
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// [[variant]] sets make and remove limiters as --set does: each variant
// loads so when the file does, one that makes a limiter without its kind
// is a problem at its set, and the scenario as run keeps them as written.
func TestVariantsMakeAndRemoveLimiters(t *testing.T) {
	variants := `
[[variant]]
name = "capped"
set = ["client.limiter.cap.kind=token_bucket", "client.limiter.cap.rate=20", "client.limiter.cap.burst=1"]

[[variant]]
name = "open"
set = ["client.limiter.bucket=", "client.limiter.conns="]
`
	sc, err := Parse(badFile, []byte(minimalScenario+variants))
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[int][]string{0: {"bucket", "conns", "cap"}, 1: nil} {
		vs, err := ParseWith(badFile, []byte(minimalScenario+variants), sc.Variants[v].Overrides())
		if err != nil || !slices.Equal(limiterNames(vs), want) {
			t.Errorf("variant %s: %v, limiters %v, want %v", sc.Variants[v].Name, err, limiterNames(vs), want)
		}
	}
	text := roundTrips(t, sc)
	if !strings.Contains(text, variants[1:]) {
		t.Errorf("the variants are not kept as written:\n%s", text)
	}
	bad := minimalScenario + "\n[[variant]]\nname = \"kindless\"\nset = [\"client.limiter.cap.rate=20\"]\n"
	_, err = Parse(badFile, []byte(bad))
	want := fmt.Sprintf(`%s:%d: variant[0].set: variant kindless does not load: set: client.limiter.cap.rate: no client.limiter with name "cap"`,
		badFile, lineContaining(t, bad, "set = "))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// An override that sets a list whole answers for what it holds, not one
// that made a limiter in it before.
func TestSettingTheLimitersWholeAnswersForThem(t *testing.T) {
	o, err := ParseOverride(`client.limiter=[{ name = "a", kind = "gcra", rate = 1.0 }, { name = "b", kind = "gcra", rate = 1.0 }, { name = "c", kind = "gcra" }]`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseWith(badFile, []byte(minimalScenario), []Override{{Key: "client.limiter.made.kind", Value: "gcra"}, {Key: "client.limiter.made.rate", Value: 2.0}, o})
	want := `--set: client.limiter[2].rate: is required (set by client.limiter=[`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
