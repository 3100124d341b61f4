package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Overrides address limiters, paths and hosts by name, are validated like
// the file (a bad value names the override), and land in the scenario as
// run.
func TestOverrides(t *testing.T) {
	src, err := ExampleSource("composed-limits")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseWith("composed-limits.toml", src, []Override{
		{Key: "client.limiter.global.permits", Value: 7.0},
		{Key: "client.instances", Value: 3.0},
		{Key: "upstream.search.retry_after", Value: "2s"},
		{Key: "run.warmup", Value: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	var permits int64
	for _, l := range sc.Client.Limiters {
		if l.Name == "global" {
			permits = l.Permits
		}
	}
	ra := ""
	for _, u := range sc.Upstreams {
		if u.Host == "search" {
			ra = u.RetryAfter
		}
	}
	if permits != 7 || sc.Client.Instances != 3 || sc.Run.Warmup != 0 || ra != "2s" {
		t.Fatalf("overrides not applied: permits %d, instances %d, warmup %v", permits, sc.Client.Instances, sc.Run.Warmup)
	}
	res, err := sc.Resolved()
	if err != nil || !strings.Contains(res, "permits = 7") {
		t.Fatalf("scenario as run lacks the override: %v", err)
	}
	overrideProblems(t, "composed-limits.toml", src, []overrideCase{
		{Override{Key: "client.limiter.nosuch.rate", Value: 3.0}, "--set: client.limiter.nosuch.rate: no client.limiter with name \"nosuch\" (known: global, per_host, per_tenant)"},
		{Override{Key: "client.limiter.global.permits", Value: 0.0}, "--set: client.limiter[1].permits: must be at least 1, got 0 (set by client.limiter.global.permits=0)"},
		{Override{Key: "client.limiter.global.permits", Value: 2.5}, "must be an integer"},
		{Override{Key: "client.limiter.global", Value: 2.0}, "names an entry"},
		{Override{Key: "run.seed.x", Value: 2.0}, "run.seed is not a table"},
	})
}

// An entry of a list of quotas is picked by its position, dotted or in
// brackets as the decoder writes it, so a published limit can be set,
// swept and planned over; a position out of range or a key on something
// that is not a list says so.
func TestOverridesPickAQuotaByPosition(t *testing.T) {
	src, err := ExampleSource("api-llm-tokens")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseWith("api-llm-tokens.toml", src, []Override{
		{Key: "upstream.*.quota.1.rate", Value: 3000.0},
		{Key: "upstream.*.quota[0].burst", Value: 400.0},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := sc.Upstreams[0].Quota
	if len(q) != 2 || q[1].Rate != 3000 || q[1].Unit != "cost" || q[0].Burst != 400 || q[0].Rate != 8.333333 {
		t.Fatalf("quotas %+v: want the cost quota at 3000/s and the request quota's burst 400, the rest as written", q)
	}
	overrideProblems(t, "api-llm-tokens.toml", src, []overrideCase{
		{Override{Key: "upstream.*.quota.2.rate", Value: 1.0}, "--set: upstream.*.quota.2.rate: upstream[0].quota has 2 entries: pick one from 0 to 1"},
		{Override{Key: "upstream.*.quota.1", Value: 1.0}, "names an entry"},
		{Override{Key: "upstream.*.quota.1.rat", Value: 1.0}, "--set: upstream[0].quota[1].rat: unknown key (did you mean rate?) (set by upstream.*.quota.1.rat=1)"},
		{Override{Key: "upstream.*.latency.0.p50", Value: 1.0}, "upstream[0].latency is not a list"},
		{Override{Key: "upstream.*.quota.01.rate", Value: 1.0}, "upstream[0].quota.01: a position is a whole number from 0, written plainly"},
		{Override{Key: "upstream.*.quota.99999999999999999999.rate", Value: 1.0}, "a position is a whole number from 0"},
	})
}

// Command-line values read as TOML values, else as plain strings; an
// empty value removes the key.
func TestParseOverride(t *testing.T) {
	for in, want := range map[string]Override{
		"client.limiter.b.rate=45":              {Key: "client.limiter.b.rate", Value: int64(45)},
		"client.limiter.b.rate = 4.5":           {Key: "client.limiter.b.rate", Value: 4.5},
		"client.on_429.resume_jitter=2s":        {Key: "client.on_429.resume_jitter", Value: "2s"},
		`client.limiter.b.scope="tenant"`:       {Key: "client.limiter.b.scope", Value: "tenant"},
		"client.limiter.b.scope=tenant":         {Key: "client.limiter.b.scope", Value: "tenant"},
		"client.on_429.honor_retry_after=false": {Key: "client.on_429.honor_retry_after", Value: false},
		"client.limiter.b.handoff=":             {Key: "client.limiter.b.handoff", Value: nil},
		// More than one value: the whole text, as a plain string.
		"run.requests=1000\nname = \"x\"": {Key: "run.requests", Value: "1000\nname = \"x\""},
		"run.requests=1 # a comment":      {Key: "run.requests", Value: int64(1)},
	} {
		got, err := ParseOverride(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v (%v), want %+v", in, got, err, want)
		}
	}
	// A table or an array of tables is one value, whose own keys the TOML
	// library reports as undecoded.
	got, err := ParseOverride(`workload.tenants=[{ name = "a", weight = 2.0 }]`)
	if want := []any{map[string]any{"name": "a", "weight": 2.0}}; err != nil || !reflect.DeepEqual(got.Value, want) {
		t.Errorf("array of tables: %#v (%v), want %#v", got.Value, err, want)
	}
	// A value of several lines is named on one line by the problem it
	// causes.
	o, err := ParseOverride("run.requests=1000\nname = \"x\"")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseWith(badFile, []byte(minimalScenario), []Override{o})
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "must be an integer") {
		t.Errorf("a value of several lines: %v", err)
	}
	for _, bad := range []string{"rate", "=45", ""} {
		if _, err := ParseOverride(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// overrideCase is an override and a part of the problem it must cause.
type overrideCase struct {
	o    Override
	want string
}

// overrideProblems applies each override alone to src and checks the
// problem it causes.
func overrideProblems(t *testing.T, file string, src []byte, cases []overrideCase) {
	t.Helper()
	for _, c := range cases {
		_, err := ParseWith(file, src, []Override{c.o})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.o, err, c.want)
		}
	}
}

// A name holding dots (a host such as api.example.com, a limiter named
// bucket.v2) is named in brackets or in double quotes; a key that does not
// split into parts is refused.
func TestOverrideNamesWithDots(t *testing.T) {
	src := strings.NewReplacer(`name = "bucket"`, `name = "bucket.v2"`, `host = "api"`, `host = "api.example.com"`,
		`{ name = "api" }`, `{ name = "api.example.com" }`).Replace(minimalScenario)
	for _, c := range []struct {
		set  string
		read func(*Scenario) any
		want any
	}{
		{"client.limiter[bucket.v2].rate=90", func(sc *Scenario) any { return sc.Client.Limiters[0].Rate }, 90.0},
		{`client.limiter."bucket.v2".rate=80`, func(sc *Scenario) any { return sc.Client.Limiters[0].Rate }, 80.0},
		{"upstream[api.example.com].workers=3", func(sc *Scenario) any { return sc.Upstreams[0].Workers }, 3},
		{`upstream."api.example.com".quota.rate=7`, func(sc *Scenario) any { return sc.Upstreams[0].Quota[0].Rate }, 7.0},
	} {
		o, err := ParseOverride(c.set)
		if err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		sc, err := ParseWith(badFile, []byte(src), []Override{o})
		if err != nil {
			t.Errorf("%s: %v", c.set, err)
			continue
		}
		if got := c.read(sc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.set, got, c.want)
		}
	}
	for _, bad := range []string{"client.limiter[bucket.v2.rate=1", `client.limiter."bucket.v2.rate=1`, "client..limiter=1", "client.limiter.=1", "client.limiter[bucket.v2]x=1", "client.limiter[]=1"} {
		o, err := ParseOverride(bad)
		if err == nil {
			_, err = ParseWith(badFile, []byte(src), []Override{o})
		}
		if err == nil || !strings.Contains(err.Error(), "is not a key") {
			t.Errorf("%s: %v, want a key that does not split", bad, err)
		}
	}
}

// A problem inside a table an override created names the override rather
// than a line of the file, which holds no such table.
func TestProblemsAnOverrideCausesNameIt(t *testing.T) {
	for set, want := range map[string]string{
		"upstream.cdn.quota.rate=3": "--set: upstream[1].quota.kind: is required (in upstream[1].quota, which the file does not have: --set upstream.cdn.quota.rate=3 made it)",
	} {
		o, err := ParseOverride(set)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseWith(badFile, []byte(minimalScenario), []Override{o})
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", set, err, want)
		}
	}
	// Removing a key that has nothing to do with a problem the file has
	// on its own leaves the problem at its line.
	src := strings.Replace(minimalScenario, "duration = \"60s\"\nwarmup = \"5s\"\n", "", 1)
	_, err := ParseWith(badFile, []byte(src), []Override{{Key: "run.seed"}})
	if line := lineContaining(t, src, "[run]"); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: run: needs run.requests", badFile, line)) {
		t.Errorf("the file's own problem: %v, want it at line %d", err, line)
	}
}

// A problem an override causes echoes the override as --set takes it:
// a list of tables in TOML, not Go's map notation, so it can be pasted
// back corrected.
func TestProblemEchoesTheOverrideAsTOML(t *testing.T) {
	o, err := ParseOverride(`workload.tenants=[{ name = "a", weight = 0.0 }, { name = "b" }]`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseWith(badFile, []byte(minimalScenario), []Override{o})
	want := `(set by workload.tenants=[{ name = "a", weight = 0 }, { name = "b" }])`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want it to hold %s", err, want)
	}
}

// A number past float64's range is refused as such when the override is
// parsed, not read as a string and refused as "not a number".
func TestOverrideNumberOutOfRange(t *testing.T) {
	for _, s := range []string{"workload.rate=1e400", "workload.rate=-1e400"} {
		if _, err := ParseOverride(s); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: %v", s, err)
		}
	}
	if o, err := ParseOverride("workload.rate=1e300"); err != nil || o.Value != 1e300 {
		t.Errorf("1e300: %+v, %v", o, err)
	}
}
