package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// A key written where it has no effect is a warning naming it and why; a
// default written out (as scenario.toml writes every default) is not. The
// warnings of a scenario and of its resolved text are the same, so the
// written scenario.toml runs again to the same metrics.json.
func TestKeysWithoutEffectAreWarned(t *testing.T) {
	cases := []struct {
		edits []textEdit
		want  string
	}{
		{[]textEdit{{"attempts = 3\nbase = \"1s\"", "attempts = 1\nbase = \"2s\""}}, "client.retry.base has no effect: attempts is 1"},
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\nbudget_window = \"5s\""}}, "client.retry.budget_window has no effect: budget is 0"},
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\ntoken_ratio = 0.2"}}, "client.retry.token_ratio has no effect: tokens is 0"},
		// An attempt timeout the request timeout (10 s) always beats.
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\nattempt_timeout = \"10s\""}}, "client.retry.attempt_timeout has no effect: it is not shorter than client.request_timeout (10s)"},
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\nattempt_timeout = \"9s\""}}, ""},
		// An acquisition timeout longer than the request's (10 s), which
		// ends every acquisition first; at 10 s it still names the first
		// acquisition's give-up (an acquire timeout), so no warning.
		{[]textEdit{{`request_timeout = "10s"`, "request_timeout = \"10s\"\nacquire_timeout = \"10001ms\""}}, "client.acquire_timeout has no effect: it is longer than client.request_timeout (10s)"},
		{[]textEdit{{`request_timeout = "10s"`, "request_timeout = \"10s\"\nacquire_timeout = \"10s\""}}, ""},
		// A ratio of 0, which scenario.toml leaves out, warns of nothing
		// (in either): the check below compares the two.
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\ntoken_ratio = 0.0"}}, ""},
		// Nor do the defaults written out.
		{[]textEdit{{`cap = "30s"`, "cap = \"30s\"\ntoken_ratio = 0.1\nbudget_window = \"10s\""}}, ""},
		{[]textEdit{{`latency = { dist = "exponential", mean = "50ms" }`, "latency = { dist = \"exponential\", mean = \"50ms\" }\nretry_after = \"2s\""}}, "upstream[1].retry_after has no effect: the upstream has no quota"},
		{[]textEdit{{`ingest = "tasks"`, "ingest = \"queue\"\nmax_waiting = 10"}}, "client.max_waiting has no effect: with ingest = \"queue\""},
		{[]textEdit{{"[client.retry]", "[[client.path]]\nname = \"all\"\nlimiters = [\"bucket\"]\n\n[client.retry]"}}, "client.limiter[1] (conns) has no effect: no [[client.path]] takes it"},
		{[]textEdit{{"arrival = \"poisson\"\nrate = 50.0", "tenants = [{ name = \"a\", rate = 5.0, weight = 2.0 }, { name = \"b\", rate = 5.0 }]"}}, "workload.tenants[0].weight has no effect: the tenant brings its own arrivals"},
		{[]textEdit{{"arrival = \"poisson\"\nrate = 50.0", "tenants = [{ name = \"a\", rate = 5.0, weight = 1.0 }, { name = \"b\", rate = 5.0 }]"}}, ""},
		// 429 pauses: what only a host pause uses, without one.
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause = \"caller\"\npause_end = \"latest\"\n\n[client.retry]"}}, "client.on_429.pause_end has no effect: pause is \"caller\", so a 429 never pauses the host"},
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause = \"caller\"\npause_check = \"send\"\n\n[client.retry]"}}, "client.on_429.pause_check has no effect: pause is \"caller\" and the rate-limit headers pause no host"},
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause = \"none\"\nfallback = \"2s\"\n\n[client.retry]"}}, "client.on_429.fallback has no effect: pause is \"none\""},
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause = \"none\"\nresume_jitter = \"1s\"\n\n[client.retry]"}}, "client.on_429.resume_jitter has no effect: pause is \"none\""},
		// With the headers pausing the host, there is a pause to check
		// and to spread the end of; the caller's own pause uses the
		// fallback and the jitter; the host pause uses them all.
		{[]textEdit{{"[client.retry]", "[client.headers]\npause_at_zero = true\n\n[client.on_429]\npause = \"none\"\npause_check = \"send\"\nresume_jitter = \"1s\"\n\n[client.retry]"}}, ""},
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause = \"caller\"\nfallback = \"2s\"\nresume_jitter = \"1s\"\n\n[client.retry]"}}, ""},
		{[]textEdit{{"[client.retry]", "[client.on_429]\npause_end = \"latest\"\npause_check = \"send\"\nfallback = \"2s\"\nresume_jitter = \"1s\"\n\n[client.retry]"}}, ""},
	}
	for _, c := range cases {
		src := applyEdits(t, minimalScenario, c.edits)
		sc, err := Parse(badFile, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		var texts []string
		for _, w := range sc.Warnings {
			texts = append(texts, w.Text)
		}
		if c.want == "" && len(texts) > 0 || !strings.Contains(strings.Join(texts, "\n"), c.want) {
			t.Errorf("warnings %q, want %q", texts, c.want)
		}
		res, err := sc.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(badFile, []byte(res))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Warnings, sc.Warnings) {
			t.Errorf("%s: the resolved text warns %v, the scenario %v", c.want, back.Warnings, sc.Warnings)
		}
	}
	// The base scenario, and its resolved text with every default written,
	// warn of nothing.
	sc, err := Parse(badFile, []byte(minimalScenario))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := sc.Resolved()
	back, err := Parse(badFile, []byte(strings.Replace(res, "attempts = 3", "attempts = 1", 1)))
	if err != nil || len(sc.Warnings) != 0 || len(back.Warnings) != 0 {
		t.Fatalf("warnings %v; with attempts = 1 over every default %v (%v)", sc.Warnings, back.Warnings, err)
	}
}
