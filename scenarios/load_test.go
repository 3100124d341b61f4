package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/limitsim/limitsim/report/metrics"
)

// badFile is the name the tests give Parse; every message must start with it.
const badFile = "bad.toml"

// minimalScenario is a minimal valid scenario that the bad-input cases edit.
// Every edit below replaces a text that occurs exactly once in it.
const minimalScenario = `name = "base"
description = "a minimal valid scenario for the loader tests"

[run]
seed = 7
duration = "60s"
warmup = "5s"

[workload]
arrival = "poisson"
rate = 50.0
cost = 1
hosts = [{ name = "api" }, { name = "cdn" }]

[client]
ingest = "tasks"
request_timeout = "10s"

[[client.limiter]]
name = "bucket"
kind = "token_bucket"
rate = 40.0
burst = 40

[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 8

[client.retry]
attempts = 3
base = "1s"
cap = "30s"

[[upstream]]
host = "api"
latency = { dist = "lognormal", median = "200ms", sigma = 0.5 }
quota = { kind = "token_bucket", rate = 100.0, burst = 100 }

[[upstream]]
host = "cdn"
latency = { dist = "exponential", mean = "50ms" }
`

type textEdit struct{ old, new string }

// applyEdits replaces each old text, which must occur exactly once.
func applyEdits(t *testing.T, src string, edits []textEdit) string {
	t.Helper()
	for _, e := range edits {
		if n := strings.Count(src, e.old); n != 1 {
			t.Fatalf("edit %q: occurs %d times in the scenario, want exactly once", e.old, n)
		}
		src = strings.Replace(src, e.old, e.new, 1)
	}
	return src
}

// lineContaining returns the 1-based line of the only occurrence of marker.
func lineContaining(t *testing.T, src, marker string) int {
	t.Helper()
	if n := strings.Count(src, marker); n != 1 {
		t.Fatalf("marker %q occurs %d times in the edited scenario, want exactly once:\n%s", marker, n, src)
	}
	return strings.Count(src[:strings.Index(src, marker)], "\n") + 1
}

// problemsOf asserts err is a Problems wrapping ErrInvalid and returns it.
func problemsOf(t *testing.T, err error) Problems {
	t.Helper()
	if err == nil {
		t.Fatal("Parse accepted the scenario, want an error")
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid) = false for %v", err)
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error is %T, want scenarios.Problems: %v", err, err)
	}
	if len(ps) == 0 {
		t.Fatalf("empty Problems returned as an error")
	}
	return ps
}

func TestMinimalScenarioParses(t *testing.T) {
	sc, err := Parse(badFile, []byte(minimalScenario))
	if err != nil {
		t.Fatalf("minimal scenario must parse, got:\n%v", err)
	}
	if sc.Name != "base" || len(sc.Client.Limiters) != 2 || len(sc.Upstreams) != 2 || len(sc.Workload.Hosts) != 2 {
		t.Errorf("minimal scenario decoded unexpectedly: %+v", sc)
	}
	if sc.Client.Limiters[1].Permits != 8 || sc.Client.Retry.Attempts != 3 || time.Duration(sc.Run.Warmup) != 5*time.Second {
		t.Errorf("minimal scenario values decoded unexpectedly: %+v", sc)
	}
}

type badCase struct {
	name  string
	edits []textEdit
	// key is the dotted key the problem must name ("" for a syntax error),
	// and at a text whose line the problem must point to.
	key, at string
	want    []string // fragments of that problem's message
	notWant []string // fragments that must appear nowhere in the error
}

var badCases = []badCase{
	// A [log] field named "" would read as left out, its default used.
	{name: "log field named empty", edits: []textEdit{{`latency = { dist = "exponential", mean = "50ms" }`, "latency = { dist = \"exponential\", mean = \"50ms\" }\n\n[log]\nstatus = \"\""}},
		key: "log.status", at: `status = ""`, want: []string{"is empty", "leave the key out"}},
	// Ten million intervals is the most a run records (a month of
	// one-second intervals is 2.6 million): a year of milliseconds is
	// refused before it runs, naming the interval.
	{name: "too many intervals", edits: []textEdit{{`duration = "60s"`, "duration = \"8760h\"\ninterval = \"1ms\""}},
		key: "run.interval", at: `interval = "1ms"`, want: []string{"projects 31536000000 intervals", "over the limit of 10 million", "lengthen run.interval"}},
	// A client-wide bound of 0 would refuse every request: it is checked
	// before any limiter, so it cannot mean "never wait".
	{name: "client max_waiting 0", edits: []textEdit{{`ingest = "tasks"`, "ingest = \"tasks\"\nmax_waiting = 0"}},
		key: "client.max_waiting", at: "max_waiting = 0", want: []string{"at least 1", "refuse every request", "each limiter max_waiting = 0"}},
	// Unknown keys.
	{name: "unknown key typo", edits: []textEdit{{"rate = 40.0", "rote = 40.0"}},
		key: "client.limiter[0].rote", at: "rote", want: []string{"unknown key", "did you mean rate?"}},
	{name: "unknown key with transposed letters", edits: []textEdit{{"rate = 40.0", "raet = 40.0"}},
		key: "client.limiter[0].raet", at: "raet", want: []string{"unknown key", "did you mean rate?"}},
	{name: "unknown key rate_limt", edits: []textEdit{{"rate = 40.0", "rate_limt = 40.0"}},
		key: "client.limiter[0].rate_limt", at: "rate_limt", want: []string{"unknown key", "did you mean rate?"}},
	{name: "unknown key without suggestion lists valid keys", edits: []textEdit{{"cost = 1", "cost = 1\nzzzzzzzz = 1"}},
		key: "workload.zzzzzzzz", at: "zzzzzzzz", want: []string{"unknown key", "valid keys here:", "rate", "host_order"}},
	{name: "unknown top-level key", edits: []textEdit{{`description = "a minimal`, `descripton = "a minimal`}},
		key: "descripton", at: "descripton", want: []string{"did you mean description?"}},
	{name: "unknown key in nested table", edits: []textEdit{{"attempts = 3", "atempts = 3"}},
		key: "client.retry.atempts", at: "atempts", want: []string{"unknown key", "did you mean attempts?"}},
	{name: "unknown key in second array-of-tables element", edits: []textEdit{{"permits = 8", "permits = 8\npermtis = 9"}},
		key: "client.limiter[1].permtis", at: "permtis", want: []string{"did you mean permits?"}},
	{name: "unknown key in second upstream", edits: []textEdit{{`mean = "50ms" }`, `mean = "50ms" }` + "\nretry_afterr = \"1s\""}},
		key: "upstream[1].retry_afterr", at: "retry_afterr", want: []string{"did you mean retry_after?"}},
	{name: "unknown key in inline table", edits: []textEdit{{"sigma = 0.5 }", "sigmaa = 0.5 }"}},
		key: "upstream[0].latency.sigmaa", at: "sigmaa", want: []string{"unknown key", "did you mean sigma?"}},
	{name: "unknown key in inline quota table", edits: []textEdit{{"rate = 100.0, burst = 100 }", "rate = 100.0, bursst = 100 }"}},
		key: "upstream[0].quota.bursst", at: "bursst", want: []string{"did you mean burst?"}},
	{name: "unknown key in inline table inside an array", edits: []textEdit{{`{ name = "cdn" }`, `{ name = "cdn", wieght = 2.0 }`}},
		key: "workload.hosts[1].wieght", at: "wieght", want: []string{"did you mean weight?"}},
	{name: "unknown key in a multi-line inline array", edits: []textEdit{{`hosts = [{ name = "api" }, { name = "cdn" }]`,
		"hosts = [\n  { name = \"api\" },\n  { name = \"cdn\",\n    wieght = 2.0 },\n]"}},
		key: "workload.hosts[1].wieght", at: "wieght", want: []string{"did you mean weight?"}},
	{name: "unknown dotted key", edits: []textEdit{{`host = "api"`, `host = "api"` + "\nreject.latency = \"1ms\""}},
		key: "upstream[0].reject", at: "reject.latency", want: []string{"unknown key", "reject_latency"}},
	{name: "key with wrong case", edits: []textEdit{{"rate = 40.0", "Rate = 40.0"}},
		key: "client.limiter[0].Rate", at: "Rate =", want: []string{"unknown key", "did you mean rate?"}},
	{name: "unknown table named only by a sub-table header", edits: []textEdit{{"[client.retry]", "[clinet.retry]"}},
		key: "clinet", at: "[clinet.retry]", want: []string{"unknown key", "did you mean client?"}},
	{name: "table with wrong case", edits: []textEdit{{"[client.retry]", "[client.Retry]"}},
		key: "client.Retry", at: "[client.Retry]", want: []string{"unknown key", "did you mean retry?"}},
	{name: "enum value with wrong case", edits: []textEdit{{`arrival = "poisson"`, `arrival = "Poisson"`}},
		key: "workload.arrival", at: `"Poisson"`, want: []string{`unknown value "Poisson"`, `did you mean "poisson"?`}},

	// Wrong types.
	{name: "string for a number", edits: []textEdit{{"rate = 50.0", `rate = "50"`}},
		key: "workload.rate", at: `rate = "50"`, want: []string{"must be a number, not a string"}},
	{name: "float for an integer is not truncated", edits: []textEdit{{"permits = 8", "permits = 2.5"}},
		key: "client.limiter[1].permits", at: "permits = 2.5", want: []string{"must be an integer", "2.5"}},
	{name: "whole float for an integer", edits: []textEdit{{"attempts = 3", "attempts = 3.0"}},
		key: "client.retry.attempts", at: "attempts = 3.0", want: []string{"must be an integer", "float"}},
	{name: "integer for a duration", edits: []textEdit{{`warmup = "5s"`, "warmup = 5"}},
		key: "run.warmup", at: "warmup = 5", want: []string{"duration string with a unit", `"5s"`}},
	{name: "float for a duration", edits: []textEdit{{`cap = "30s"`, "cap = 2.5"}},
		key: "client.retry.cap", at: "cap = 2.5", want: []string{"duration string with a unit", `"2.5s"`}},
	{name: "integer for a string", edits: []textEdit{{`host = "cdn"`, "host = 1"}},
		key: "upstream[1].host", at: "host = 1", want: []string{"must be a string, not an integer"}},
	{name: "string for a boolean", edits: []textEdit{{"[client.retry]", "[client.on_429]\nhonor_retry_after = \"yes\"\n\n[client.retry]"}},
		key: "client.on_429.honor_retry_after", at: "honor_retry_after", want: []string{"must be true or false, not a string"}},
	{name: "table for an array of tables", edits: []textEdit{{"[[client.limiter]]\nname = \"conns\"\nkind = \"semaphore\"\npermits = 8\n", ""},
		{"[[client.limiter]]", "[client.limiter]"}},
		key: "client.limiter", at: "[client.limiter]", want: []string{"must be an array of tables, not a table"}},
	{name: "number for an array of strings", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = 3\n"}},
		key: "client.limiter[0].hosts", at: "hosts = 3", want: []string{"must be an array of strings, not an integer"}},

	// Missing required keys.
	{name: "missing limiter kind", edits: []textEdit{{"kind = \"token_bucket\"\n", ""}},
		key: "client.limiter[0].kind", at: "[[client.limiter]]\nname = \"bucket\"", want: []string{"is required"}},
	{name: "missing upstream host", edits: []textEdit{{"host = \"cdn\"\n", ""}},
		key: "upstream[1].host", at: "[[upstream]]\nlatency", want: []string{"is required"}},
	{name: "missing upstream latency", edits: []textEdit{{"latency = { dist = \"exponential\", mean = \"50ms\" }\n", ""}},
		key: "upstream[1].latency", at: "[[upstream]]\nhost = \"cdn\"", want: []string{"is required"}},
	{name: "missing latency parameter", edits: []textEdit{{`dist = "exponential", mean = "50ms" }`, `dist = "exponential" }`}},
		key: "upstream[1].latency.mean", at: `dist = "exponential" }`, want: []string{"is required"}},
	{name: "missing semaphore permits", edits: []textEdit{{"permits = 8\n", ""}},
		key: "client.limiter[1].permits", at: "[[client.limiter]]\nname = \"conns\"", want: []string{"is required"}},
	{name: "missing limiter rate", edits: []textEdit{{"rate = 40.0\n", ""}},
		key: "client.limiter[0].rate", at: "[[client.limiter]]\nname = \"bucket\"", want: []string{"is required"}},
	{name: "missing workload rate", edits: []textEdit{{"rate = 50.0\n", ""}},
		key: "workload.rate", at: "[workload]", want: []string{"is required"}},

	// Out-of-range numbers.
	{name: "negative rate", edits: []textEdit{{"rate = 40.0", "rate = -40.0"}},
		key: "client.limiter[0].rate", at: "rate = -40.0", want: []string{"must be greater than 0", "-40"}},
	{name: "negative integer", edits: []textEdit{{"seed = 7", "seed = -1"}},
		key: "run.seed", at: "seed = -1", want: []string{"must be at least 0", "-1"}},
	{name: "zero rate", edits: []textEdit{{"rate = 50.0", "rate = 0"}},
		key: "workload.rate", at: "rate = 0", want: []string{"must be greater than 0"}},
	// Checks the run made and validate did not, now made when the file
	// loads, at their line.
	{name: "a fraction of a permit", edits: []textEdit{{"name = \"conns\"\nkind = \"semaphore\"\npermits = 8", "name = \"conns\"\nkind = \"vegas\"\ninitial = 2.9\nmax = 10"}},
		key: "client.limiter[1].initial", at: "initial = 2.9", want: []string{"whole number of permits", "for vegas, got 2.9"}},
	{name: "a concurrency limit below one permit", edits: []textEdit{{"name = \"conns\"\nkind = \"semaphore\"\npermits = 8", "name = \"conns\"\nkind = \"gradient2\"\ninitial = 4\nmin = 0.5\nmax = 10"}},
		key: "client.limiter[1].min", at: "min = 0.5", want: []string{"must be at least 1, got 0.5"}},
	{name: "a concurrency limit beyond any count", edits: []textEdit{{"name = \"conns\"\nkind = \"semaphore\"\npermits = 8", "name = \"conns\"\nkind = \"aimd_concurrency\"\ninitial = 4\nmax = 1e300"}},
		key: "client.limiter[1].max", at: "max = 1e300", want: []string{"whole number of permits from 1 to"}},
	{name: "a gcra tolerance beyond a duration", edits: []textEdit{{"kind = \"token_bucket\"\nrate = 40.0\nburst = 40", "kind = \"gcra\"\nrate = 40.0\nburst = 1e300"}},
		key: "client.limiter[0].burst", at: "burst = 1e300", want: []string{"longer than a duration holds"}},
	{name: "a limiter rate below one in 32 years", edits: []textEdit{{"rate = 40.0", "rate = 1e-320"}},
		key: "client.limiter[0].rate", at: "rate = 1e-320", want: []string{"must be at least 1e-09"}},
	{name: "a quota rate below one in 32 years", edits: []textEdit{{"rate = 100.0, burst = 100 }", "rate = 1e-12, burst = 100 }"}},
		key: "upstream[0].quota.rate", at: "quota = {", want: []string{"must be at least 1e-09"}},
	{name: "a cost distribution whose quantiles fall", edits: []textEdit{{"cost = 1\n", "cost = { dist = \"empirical\", quantiles = [[0, 5], [1, 4]] }\n"}},
		key: "workload.cost.quantiles", at: "cost = {", want: []string{"non-decreasing"}},
	{name: "duration with an exponent", edits: []textEdit{{`duration = "60s"`, `duration = "1.5e3ms"`}},
		key: "run.duration", at: `duration = "1.5e3ms"`, want: []string{"without an exponent"}},
	{name: "empty enum value", edits: []textEdit{{`arrival = "poisson"`, `arrival = ""`}},
		key: "workload.arrival", at: `arrival = ""`, want: []string{"must not be empty (valid: poisson"}, notWant: []string{"did you mean"}},
	{name: "an on/off cycle longer than a duration", edits: []textEdit{{`arrival = "poisson"`, "arrival = \"onoff\"\non = \"2000000h\"\noff = \"2000000h\""}},
		key: "workload.off", at: `off = "2000000h"`, want: []string{"on + off", "longer than a duration holds"}},
	// Gaps past the last instant a run reaches wrapped to arrivals at t = 0;
	// a ramp to a huge rate ended with no arrival at all.
	{name: "arrival rate below one in 32 years", edits: []textEdit{{"rate = 50.0", "rate = 1e-12"}},
		key: "workload.rate", at: "rate = 1e-12", want: []string{"must be between 1e-09", "1e-12 arrivals per second"}},
	{name: "arrival rate above one a nanosecond", edits: []textEdit{{"rate = 50.0", "rate = 1e12"}},
		key: "workload.rate", at: "rate = 1e12", want: []string{"and 1e+09 (one a nanosecond)"}},
	{name: "ramp to a rate above one a nanosecond", edits: []textEdit{{`arrival = "poisson"` + "\nrate = 50.0", `arrival = "ramp"` + "\nrate = 50.0\nrate_to = 1e12"}},
		key: "workload.rate_to", at: "rate_to = 1e12", want: []string{"must be between"}},
	{name: "tenant's own arrival rate below one in 32 years", edits: []textEdit{{"cost = 1", "tenants = [{ name = \"a\", rate = 1e-10 }]"}, {`arrival = "poisson"` + "\nrate = 50.0\n", ""}},
		key: "workload.tenants[0].rate", at: "tenants = [", want: []string{"must be between"}},
	{name: "zero permits", edits: []textEdit{{"permits = 8", "permits = 0"}},
		key: "client.limiter[1].permits", at: "permits = 0", want: []string{"must be at least 1"}},
	{name: "nan rate", edits: []textEdit{{"rate = 40.0", "rate = nan"}},
		key: "client.limiter[0].rate", at: "rate = nan", want: []string{"must be a finite number", "NaN"}},
	{name: "inf burst", edits: []textEdit{{"burst = 40", "burst = inf"}},
		key: "client.limiter[0].burst", at: "burst = inf", want: []string{"must be a finite number", "Inf"}},
	{name: "negative inf sigma", edits: []textEdit{{"sigma = 0.5", "sigma = -inf"}},
		key: "upstream[0].latency.sigma", at: "sigma = -inf", want: []string{"must be a finite number"}},
	{name: "too many live requests for the event queue", edits: []textEdit{{"seed = 7", "seed = 7\nmax_live_requests = 50000001"}},
		key: "run.max_live_requests", at: "max_live_requests", want: []string{"must be at most 50000000", "50000001"}},
	{name: "too many replications", edits: []textEdit{{"seed = 7", "seed = 7\nreplications = 1001"}},
		key: "run.replications", at: "replications", want: []string{"must be at most 1000", "1001"}},
	{name: "too many requests", edits: []textEdit{{"seed = 7", "seed = 7\nrequests = 2000000000000"}},
		key: "run.requests", at: "requests", want: []string{"must be at most"}},

	// Durations.
	{name: "unknown duration unit with space", edits: []textEdit{{`duration = "60s"`, `duration = "5 parsecs"`}},
		key: "run.duration", at: "parsecs", want: []string{"unknown unit", "valid units: ns, us (or µs), ms, s, m, h"}},
	{name: "unknown duration unit", edits: []textEdit{{`warmup = "5s"`, `warmup = "5q"`}},
		key: "run.warmup", at: `"5q"`, want: []string{`"5q"`, "unknown unit", "valid units: ns, us (or µs), ms, s, m, h"}},
	{name: "duration with a space", edits: []textEdit{{`warmup = "5s"`, `warmup = "1.5 s"`}},
		key: "run.warmup", at: `"1.5 s"`, want: []string{`did you mean "1.5s"?`}},
	{name: "duration in minutes spelt min", edits: []textEdit{{`duration = "60s"`, `duration = "5min"`}},
		key: "run.duration", at: `"5min"`, want: []string{`did you mean "5m"?`}},
	{name: "duration in words", edits: []textEdit{{`duration = "60s"`, `duration = "2 minutes 30 seconds"`}},
		key: "run.duration", at: "2 minutes", want: []string{`did you mean "2m30s"?`}},
	{name: "duration without unit", edits: []textEdit{{`base = "1s"`, `base = "5"`}},
		key: "client.retry.base", at: `base = "5"`, want: []string{"needs a unit", "valid units"}},
	{name: "duration in days", edits: []textEdit{{`request_timeout = "10s"`, `request_timeout = "1d"`}},
		key: "client.request_timeout", at: "1d", want: []string{"unknown unit", "valid units"}},
	{name: "not a duration", edits: []textEdit{{`median = "200ms"`, `median = "soon"`}},
		key: "upstream[0].latency.median", at: "soon", want: []string{`"soon" is not a duration`}},
	{name: "too long duration", edits: []textEdit{{`duration = "60s"`, `duration = "100000000000000000000s"`}},
		key: "run.duration", at: "100000000000000000000s", want: []string{"too long", "292 years"}},
	{name: "short but overflowing duration", edits: []textEdit{{`duration = "60s"`, `duration = "2562048h"`}},
		key: "run.duration", at: "2562048h", want: []string{"too long", "292 years"}},
	{name: "negative duration", edits: []textEdit{{`warmup = "5s"`, `warmup = "-5s"`}},
		key: "run.warmup", at: "-5s", want: []string{"must not be negative", "-5s"}},
	{name: "zero duration where positive", edits: []textEdit{{`duration = "60s"`, `duration = "0s"`}},
		key: "run.duration", at: `"0s"`, want: []string{"must be greater than 0s"}},
	{name: "negative attempt_timeout", edits: []textEdit{{"[client.retry]", "[client.retry]\nattempt_timeout = \"-1s\""}},
		key: "client.retry.attempt_timeout", at: "attempt_timeout", want: []string{"must not be negative"}},
	{name: "negative retry_after", edits: []textEdit{{`host = "cdn"`, "host = \"cdn\"\nretry_after = \"-1s\""}},
		key: "upstream[1].retry_after", at: "retry_after", want: []string{"must not be negative"}},
	{name: "bad jitter", edits: []textEdit{{"[client.retry]", "[client.on_429]\nfallback = \"uniform(5s,1s)\"\n\n[client.retry]"}},
		key: "client.on_429.fallback", at: "fallback", want: []string{"uniform(a,b) needs a ≤ b"}},

	// Enums.
	{name: "unknown limiter kind with suggestion", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bukcet\"\n"}},
		key: "client.limiter[0].kind", at: "token_bukcet", want: []string{`unknown value "token_bukcet"`, `did you mean "token_bucket"?`, "valid:"}},
	{name: "unknown limiter kind does not cascade into unknown keys", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bukcet\"\n"}},
		key: "client.limiter[0].kind", at: "token_bukcet", want: []string{`did you mean "token_bucket"?`},
		notWant: []string{"client.limiter[0].rate: unknown key", "client.limiter[0].burst: unknown key"}},
	{name: "unknown quota kind does not cascade into unknown keys", edits: []textEdit{{`quota = { kind = "token_bucket"`, `quota = { kind = "token_bukket"`}},
		key: "upstream[0].quota.kind", at: "token_bukket", want: []string{`did you mean "token_bucket"?`},
		notWant: []string{"upstream[0].quota.rate: unknown key", "upstream[0].quota.burst: unknown key"}},
	{name: "unknown scope does not cascade into unknown keys", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"hots\"\nhosts = [\"api\"]\n"}},
		key: "client.limiter[0].scope", at: `"hots"`, want: []string{`did you mean "host"?`},
		notWant: []string{"client.limiter[0].hosts: unknown key"}},
	{name: "unknown ingest does not blame queue keys on tasks", edits: []textEdit{{`ingest = "tasks"`, "ingest = \"queu\"\nqueue_capacity = 10"}},
		key: "client.ingest", at: `"queu"`, want: []string{`did you mean "queue"?`},
		notWant: []string{`applies only with ingest = "queue" (ingest is "tasks")`}},
	{name: "unknown latency dist", edits: []textEdit{{`dist = "exponential"`, `dist = "exponental"`}},
		key: "upstream[1].latency.dist", at: "exponental", want: []string{`did you mean "exponential"?`},
		notWant: []string{"upstream[1].latency.mean: unknown key", "did you mean mean?"}},
	{name: "name of the wrong type", edits: []textEdit{{`name = "base"`, "name = 5"}},
		key: "name", at: "name = 5", want: []string{"must be a string, not an integer"}, notWant: []string{"must not be empty"}},
	{name: "enum of the wrong type", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = 5\n"}},
		key: "client.limiter[0].kind", at: "kind = 5", want: []string{"must be a string, not an integer"},
		notWant: []string{`unknown value ""`, "does not apply"}},
	{name: "ingest of the wrong type does not blame queue keys", edits: []textEdit{{`ingest = "tasks"`, "ingest = 1\nqueue_capacity = 10"}},
		key: "client.ingest", at: "ingest = 1", want: []string{"must be a string"}, notWant: []string{"applies only with"}},
	{name: "hosts not an array", edits: []textEdit{{`hosts = [{ name = "api" }, { name = "cdn" }]`, "hosts = 3"}},
		key: "workload.hosts", at: "hosts = 3", want: []string{"must be an array of tables, not an integer"}, notWant: []string{"at least one host"}},
	{name: "unusable duplicate limiter name", edits: []textEdit{{`name = "bucket"`, `name = "a/b"`}, {`name = "conns"`, `name = "a/b" # again`}},
		key: "client.limiter[1].name", at: "# again", want: []string{"may use only letters"}, notWant: []string{"duplicate limiter name"}},
	{name: "unknown enum without suggestion", edits: []textEdit{{`arrival = "poisson"`, `arrival = "zzzzzz"`}},
		key: "workload.arrival", at: "zzzzzz", want: []string{`unknown value "zzzzzz" (valid: poisson, constant`}},

	// Contradictions name both keys.
	{name: "warmup equal to duration", edits: []textEdit{{`warmup = "5s"`, `warmup = "60s"`}},
		key: "run.warmup", at: "warmup", want: []string{"(1m0s) must be shorter than run.duration (1m0s)"}},
	{name: "warmup longer than duration", edits: []textEdit{{`warmup = "5s"`, `warmup = "2m"`}},
		key: "run.warmup", at: "warmup", want: []string{"(2m0s) must be shorter than run.duration (1m0s)"}},
	{name: "retry cap below base", edits: []textEdit{{`cap = "30s"`, `cap = "500ms"`}},
		key: "client.retry.cap", at: "cap =", want: []string{"(500ms) must not be below client.retry.base (1s)"}},
	{name: "burst below cost", edits: []textEdit{{"cost = 1", "cost = 50"}},
		key: "client.limiter[0].burst", at: "burst = 40", want: []string{"(40) is below one request's cost", "workload.cost = 50"}},
	{name: "window limit below cost", edits: []textEdit{{"cost = 1", "cost = 5"},
		{"rate = 40.0\nburst = 40", "limit = 4\nwindow = \"1s\""}, {"kind = \"token_bucket\"\n", "kind = \"fixed_window\"\n"}},
		key: "client.limiter[0].limit", at: "limit = 4", want: []string{"(4) is below one request's cost", "workload.cost = 5"}},
	{name: "initial_fill above one", edits: []textEdit{{"burst = 40", "burst = 40\ninitial_fill = 1.5"}},
		key: "client.limiter[0].initial_fill", at: "initial_fill", want: []string{"between 0 and 1"}},
	{name: "uniform max not above min", edits: []textEdit{{`dist = "exponential", mean = "50ms"`, `dist = "uniform", min = "50ms", max = "10ms"`}},
		key: "upstream[1].latency.max", at: `"uniform"`, want: []string{"must be greater than min (50ms)"}},

	// Names that refer to nothing.
	{name: "host scope naming no host", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = [\"nope\"]\n"}},
		key: "client.limiter[0].hosts[0]", at: `["nope"]`, want: []string{`names no host "nope"`, "known: api, cdn"}},
	{name: "host scope with a near miss", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = [\n  \"api\",\n  \"cdm\",\n]\n"}},
		key: "client.limiter[0].hosts[1]", at: `"cdm"`, want: []string{`names no host "cdm"`, `did you mean "cdn"?`}},
	{name: "host scope naming a host twice", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = [\"api\", \"cdn\",\n  \"api\"]\n"}},
		key: "client.limiter[0].hosts[2]", at: `  "api"]`, want: []string{`names host "api" twice`}},
	{name: "host scope listing no host", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = []\n"}},
		key: "client.limiter[0].hosts", at: "hosts = []", want: []string{"lists no host", "leave hosts out for every host"}},
	{name: "tenant scope listing no tenant", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"tenant\"\ntenants = []\n"}},
		key: "client.limiter[0].tenants", at: "tenants = []", want: []string{"lists no tenant"}},
	{name: "tenant scope naming no tenant", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"tenant\"\ntenants = [\"alpha\"]\n"}},
		key: "client.limiter[0].tenants[0]", at: `["alpha"]`, want: []string{`names no tenant "alpha"`, "known: default"}},
	{name: "path naming an unknown limiter", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"p\"\nlimiters = [\"bucket\", \"bukcet\"]\n\n[client.retry]"}},
		key: "client.path[0].limiters[1]", at: "limiters =", want: []string{`names no limiter "bukcet"`, `did you mean "bucket"?`}},
	{name: "path naming a limiter twice", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"p\"\nlimiters = [\"bucket\", \"bucket\"]\n\n[client.retry]"}},
		key: "client.path[0].limiters[1]", at: "limiters =", want: []string{`names limiter "bucket" twice`}},
	{name: "duplicate limiter names", edits: []textEdit{{`name = "conns"`, `name = "bucket" # again`}},
		key: "client.limiter[1].name", at: "# again", want: []string{`duplicate limiter name "bucket"`}},
	{name: "duplicate host names", edits: []textEdit{{`{ name = "cdn" }`, `{ name = "api" }`}},
		key: "workload.hosts[1].name", at: "hosts =", want: []string{`duplicate name "api"`}},
	{name: "upstream for an unknown host", edits: []textEdit{{`host = "cdn"`, `host = "cdm"`}},
		key: "upstream[1].host", at: `"cdm"`, want: []string{`names no host "cdm"`, `did you mean "cdn"?`}},
	{name: "upstream for an unknown host leaves its host uncovered", edits: []textEdit{{`host = "cdn"`, `host = "zzz"`}},
		key: "upstream", at: "[[upstream]]\nhost = \"api\"", want: []string{`no [[upstream]] for host "cdn"`}},
	{name: "duplicate upstream", edits: []textEdit{{`host = "cdn"`, `host = "api" # twice`}},
		key: "upstream[1].host", at: "# twice", want: []string{`duplicate upstream for host "api"`}},
	{name: "host with no upstream", edits: []textEdit{{`{ name = "cdn" }]`, `{ name = "cdn" }, { name = "search" }]`}},
		key: "upstream", at: "[[upstream]]\nhost = \"api\"", want: []string{`no [[upstream]] for host "search"`}},

	// Names used as path elements.
	{name: "unsafe scenario name", edits: []textEdit{{`name = "base"`, `name = "../x"`}},
		key: "name", at: `"../x"`, want: []string{`"../x" may use only letters, digits`}},
	{name: "dot-dot scenario name", edits: []textEdit{{`name = "base"`, `name = ".."`}},
		key: "name", at: `".."`, want: []string{"not a usable name"}},
	{name: "empty limiter name", edits: []textEdit{{`name = "conns"`, `name = ""`}},
		key: "client.limiter[1].name", at: `name = ""`, want: []string{"must not be empty"}},
	{name: "slash in host name", edits: []textEdit{{`{ name = "api" }`, `{ name = "a/b" }`}},
		key: "workload.hosts[0].name", at: "a/b", want: []string{"may use only letters"}},

	// Keys read only together with another key.
	{name: "fixed_window quota without limit", edits: []textEdit{{`quota = { kind = "token_bucket", rate = 100.0, burst = 100 }`, `quota = { kind = "fixed_window", window = "1s" }`}},
		key: "upstream[0].quota.limit", at: `"fixed_window"`, want: []string{"is required"},
		notWant: []string{"did you mean window?"}},
	{name: "onoff without on", edits: []textEdit{{`arrival = "poisson"`, "arrival = \"onoff\"\noff = \"1s\""}},
		key: "workload.on", at: "[workload]", want: []string{"is required"},
		notWant: []string{"did you mean off?"}},
	{name: "uniform latency without min", edits: []textEdit{{`dist = "exponential", mean = "50ms"`, `dist = "uniform", max = "50ms"`}},
		key: "upstream[1].latency.min", at: `"uniform"`, want: []string{"is required"},
		notWant: []string{"did you mean max?"}},
	{name: "workload rate with tenant arrivals", edits: []textEdit{{"cost = 1", "tenants = [{ name = \"a\", rate = 5.0 }, { name = \"b\", rate = 6.0 }]"}, {`arrival = "poisson"` + "\n", ""}},
		key: "workload.rate", at: "rate = 50.0", want: []string{"must not be set when every tenant brings its own arrival rate"},
		notWant: []string{"workload.rate: unknown key"}},
	{name: "tenant on without onoff", edits: []textEdit{{"cost = 1", "tenants = [{ name = \"a\", rate = 5.0, on = \"1s\" }]"}, {`arrival = "poisson"` + "\n", ""}, {"rate = 50.0\n", ""}},
		key: "workload.tenants[0].on", at: "tenants =", want: []string{"onoff"},
		notWant: []string{"did you mean on?"}},
	{name: "mixed tenant arrivals", edits: []textEdit{{"cost = 1", "tenants = [{ name = \"a\", rate = 5.0 }, { name = \"b\" }]"}, {`arrival = "poisson"` + "\n", ""}, {"rate = 50.0\n", ""}},
		key: "workload.tenants", at: "tenants =", want: []string{"either every tenant brings its own arrival rate or none does (1 of 2 do)"}},
	{name: "empty upstream host", edits: []textEdit{{`host = "cdn"`, `host = "" # empty`}},
		key: "upstream[1].host", at: "# empty", want: []string{}},

	// Keys for another mode.
	{name: "queue key with task ingest", edits: []textEdit{{`ingest = "tasks"`, "ingest = \"tasks\"\nqueue_capacity = 10"}},
		key: "client.queue_capacity", at: "queue_capacity", want: []string{`applies only with ingest = "queue"`, `(ingest is "tasks")`}},
	{name: "workers with default ingest", edits: []textEdit{{"ingest = \"tasks\"\n", "workers = 4\n"}},
		key: "client.workers", at: "workers", want: []string{`applies only with ingest = "queue"`}},
	{name: "semaphore with a rate", edits: []textEdit{{"permits = 8", "permits = 8\nrate = 5.0"}},
		key: "client.limiter[1].rate", at: "rate = 5.0", want: []string{"does not apply", `kind = "semaphore"`}},
	{name: "hosts without host scope", edits: []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nhosts = [\"api\"]\n"}},
		key: "client.limiter[0].hosts", at: `hosts = ["api"]`, want: []string{"does not apply", `scope = "global"`}},
	{name: "arrival keys for another arrival", edits: []textEdit{{"cost = 1", "cost = 1\non = \"1s\""}},
		key: "workload.on", at: `on = "1s"`, want: []string{"arrival"}, notWant: []string{"did you mean on?"}},
	{name: "rate with backlog arrival", edits: []textEdit{{`arrival = "poisson"`, `arrival = "backlog"`}, {"seed = 7", "seed = 7\nrequests = 100"}},
		key: "workload.rate", at: "rate = 50.0", want: []string{"backlog"}, notWant: []string{"did you mean rate?"}},

	// Bounds on the projected work.
	{name: "projected work overflow", edits: []textEdit{{"rate = 50.0", "rate = 1e9"}, {`duration = "60s"`, `duration = "100000h"`}},
		key: "run", at: "[run]", want: []string{"projects", "over the limit"}},
	{name: "projected work overflow by requests and retries", edits: []textEdit{{"seed = 7", "seed = 7\nrequests = 1000000000\nreplications = 100"},
		{`arrival = "poisson"`, `arrival = "backlog"`}, {"rate = 50.0\n", ""}},
		key: "run", at: "[run]", want: []string{"projects 3e+11 attempts", "arrivals × client.retry.attempts × run.replications", "over the limit"}},
	{name: "projected work overflow by ramp", edits: []textEdit{{`arrival = "poisson"`, "arrival = \"ramp\"\nrate_to = 1e9"}, {`duration = "60s"`, `duration = "100000h"`}},
		key: "run", at: "[run]", want: []string{"projects", "over the limit"}},
	{name: "too many instances", edits: []textEdit{{`ingest = "tasks"`, "instances = 10001"}},
		key: "client.instances", at: "instances", want: []string{"must be at most 10000"}},

	// Request cost and quotas that count it.
	{name: "cost dist a count cannot take", edits: []textEdit{{"cost = 1", `cost = { dist = "pareto", scale = 10 }`}},
		key: "workload.cost.dist", at: "cost = {", want: []string{`unknown value "pareto"`, "lognormal"}},
	{name: "cost lognormal p99 below p50", edits: []textEdit{{"cost = 1", `cost = { dist = "lognormal", p50 = 1200, p99 = 800 }`}},
		key: "workload.cost.p99", at: "cost = {", want: []string{"must be greater than p50 (1200)"}},
	{name: "cost zero", edits: []textEdit{{"cost = 1", "cost = 0"}},
		key: "workload.cost", at: "cost = 0", want: []string{"must be at least 1"}},
	{name: "cost a float", edits: []textEdit{{"cost = 1", "cost = 1.5"}},
		key: "workload.cost", at: "cost = 1.5", want: []string{"must be an integer"}},
	{name: "response cost uniform inverted", edits: []textEdit{{`mean = "50ms" }`, "mean = \"50ms\" }\nresponse_cost = { dist = \"uniform\", min = 10, max = 5 }"}},
		key: "upstream[1].response_cost.max", at: "response_cost", want: []string{"must be greater than min (10)"}},
	{name: "empty list of quotas", edits: []textEdit{{`quota = { kind = "token_bucket", rate = 100.0, burst = 100 }`, `quota = []`}},
		key: "upstream[0].quota", at: "quota = []", want: []string{"an empty list"}},
	{name: "quota unit misspelt", edits: []textEdit{{"rate = 100.0, burst = 100 }", `rate = 100.0, burst = 100, unit = "tokens" }`}},
		key: "upstream[0].quota.unit", at: "unit = \"tokens\"", want: []string{`unknown value "tokens"`, "requests, cost"}},
	{name: "concurrency quota counting cost", edits: []textEdit{{`kind = "token_bucket", rate = 100.0, burst = 100 }`, `kind = "concurrency", permits = 5, unit = "cost" }`}},
		key: "upstream[0].quota.unit", at: "unit = \"cost\"", want: []string{"unknown key", "permits"}},
	{name: "semaphore counting cost", edits: []textEdit{{"permits = 8", "permits = 8\nunit = \"cost\""}},
		key: "client.limiter[1].unit", at: "unit = \"cost\"", want: []string{"does not apply", `kind = "semaphore"`}},
	{name: "reservation on a gcra", edits: []textEdit{{"kind = \"token_bucket\"\nrate = 40.0", "kind = \"gcra\"\nrate = 40.0"}, {"[client.retry]", "[client.reserve]\nestimate = \"p90\"\n\n[client.retry]"}},
		key: "client.reserve", at: "[client.reserve]", want: []string{"limiter bucket (kind gcra", "cannot be charged", "token_bucket, sliding_window_counter, fixed_window"}},
	{name: "reservation with nothing counting cost", edits: []textEdit{{"burst = 40", "burst = 40\nunit = \"requests\""}, {"[client.retry]", "[client.reserve]\nestimate = \"p50\"\n\n[client.retry]"}},
		key: "client.reserve", at: "[client.reserve]", want: []string{"nothing to reserve on"}},
	{name: "fixed reservation without its size", edits: []textEdit{{"[client.retry]", "[client.reserve]\nestimate = \"fixed\"\n\n[client.retry]"}},
		key: "client.reserve.fixed", at: "[client.reserve]", want: []string{"is required"}},

	{name: "refused counted past a sliding window's limit", edits: []textEdit{{"rate = 100.0, burst = 100 }", "rate = 100.0, burst = 100 }\nrefused_counts = \"all\""},
		{`kind = "token_bucket", rate = 100.0, burst = 100 }`, `kind = "sliding_window", limit = 100, window = "1s" }`}},
		key: "upstream[0].refused_counts", at: "refused_counts", want: []string{"cannot", `use "others"`}},
	{name: "refused counts misspelt", edits: []textEdit{{"rate = 100.0, burst = 100 }", "rate = 100.0, burst = 100 }\nrefused_counts = \"every\""}},
		key: "upstream[0].refused_counts", at: "refused_counts", want: []string{`unknown value "every"`, "none, others, all"}},

	{name: "constant cost distribution above the burst", edits: []textEdit{{"cost = 1", `cost = { dist = "constant", value = 500 }`}},
		key: "client.limiter[0].burst", at: "burst = 40", want: []string{"below one request's cost (workload.cost = 500)"}},
	{name: "cost and reservation above the burst", edits: []textEdit{{"[client.retry]", "[client.reserve]\nestimate = \"fixed\"\nfixed = 4096\n\n[client.retry]"}},
		key: "client.limiter[0].burst", at: "burst = 40", want: []string{"workload.cost 1 + client.reserve.fixed 4096"}},
	// The sum taken as an int64 wraps to a negative number, which fits.
	{name: "cost and the largest reservation", edits: []textEdit{{"[client.retry]", "[client.reserve]\nestimate = \"fixed\"\nfixed = 9223372036854775807\n\n[client.retry]"}},
		key: "client.limiter[0].burst", at: "burst = 40", want: []string{"workload.cost 1 + client.reserve.fixed 9223372036854775807"}},
	{name: "cost and response reserve above an upstream cost quota", edits: []textEdit{{"cost = 1", "cost = 10"},
		{"rate = 100.0, burst = 100 }", "rate = 100.0, burst = 100, unit = \"cost\" }\nresponse_reserve = 95"}},
		key: "upstream[0].quota.burst", at: "burst = 100, unit", want: []string{"workload.cost 10 + upstream[0].response_reserve 95"}},
	{name: "cost above an upstream cost quota", edits: []textEdit{{"cost = 1", "cost = 30"}, {"rate = 100.0, burst = 100 }", `rate = 100.0, burst = 20, unit = "cost" }`}},
		key: "upstream[0].quota.burst", at: "burst = 20", want: []string{"(20) is below one request's cost (workload.cost = 30)"}},

	// SDK retry policies.
	{name: "unknown sdk", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"aws-standart\""}},
		key: "client.retry.sdk", at: "aws-standart", want: []string{`did you mean "aws-standard"`}},
	{name: "sdk with another jitter", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"aws-standard\"\njitter = \"equal\""}},
		key: "client.retry.jitter", at: `jitter = "equal"`, want: []string{"exponential with full jitter"}},
	{name: "aws sdk with gRPC tokens", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"aws-adaptive\"\ntokens = 10"}},
		key: "client.retry.tokens", at: "tokens = 10", want: []string{"AWS retry quota"}},
	{name: "aws sdk with a multiplier", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"aws-standard\"\nmultiplier = 3.0"}},
		key: "client.retry.multiplier", at: "multiplier = 3.0", want: []string{"doubles"}},
	{name: "grpc with one attempt", edits: []textEdit{{"attempts = 3", "attempts = 1\nsdk = \"grpc\""}},
		key: "client.retry.attempts", at: "attempts = 1", want: []string{"greater than 1"}},
	{name: "grpc with no token ratio", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"grpc\"\ntoken_ratio = 0"}},
		key: "client.retry.token_ratio", at: "token_ratio = 0", want: []string{"tokenRatio"}},
	{name: "grpc with too many tokens", edits: []textEdit{{"attempts = 3", "attempts = 3\nsdk = \"grpc\"\ntokens = 5000"}},
		key: "client.retry.tokens", at: "tokens = 5000", want: []string{"at most 1000"}},
	{name: "retry not a table", edits: []textEdit{{"[client.retry]\nattempts = 3\nbase = \"1s\"\ncap = \"30s\"\n", ""}, {"request_timeout = \"10s\"", "request_timeout = \"10s\"\nretry = 5"}},
		key: "client.retry", at: "retry = 5", want: []string{"must be a table"}},
	{name: "zero multiplier", edits: []textEdit{{"attempts = 3", "attempts = 3\nmultiplier = 0"}},
		key: "client.retry.multiplier", at: "multiplier = 0", want: []string{"greater than 0"}},

	// TOML syntax errors: line, column and the offending line.
	{name: "syntax error", edits: []textEdit{{"burst = 40", "burst = = 40"}},
		key: "", at: "burst = = 40", want: []string{"syntax error at column 9", "\n    burst = = 40\n            ^"}},
	{name: "unterminated string", edits: []textEdit{{`host = "cdn"`, `host = "cdn`}},
		key: "", at: `host = "cdn`, want: []string{"syntax error", "host = \"cdn"}},
	{name: "duplicate key", edits: []textEdit{{"seed = 7", "seed = 7\nseed = 8"}},
		key: "", at: "seed = 8", want: []string{"syntax error", "seed"}},
	// TOML 1.0 forbids extending an inline table; BurntSushi/toml accepts it,
	// so the key must at least be checked like any other.
	{name: "dotted key extending an inline table", edits: []textEdit{{"quota = { kind", "latency.sigmaa = 1.0\nquota = { kind"}},
		key: "upstream[0].latency.sigmaa", at: "latency.sigmaa", want: []string{"did you mean sigma?"}},
}

func TestParseBadInputs(t *testing.T) {
	if _, err := Parse(badFile, []byte(minimalScenario)); err != nil {
		t.Fatalf("minimal scenario must parse: %v", err)
	}
	for _, c := range badCases {
		t.Run(c.name, func(t *testing.T) {
			src := applyEdits(t, minimalScenario, c.edits)
			line := lineContaining(t, src, c.at)
			_, err := Parse(badFile, []byte(src))
			if fails := checkProblem(t, err, c.key, line, c.want, c.notWant); len(fails) > 0 {
				t.Errorf("%s\nscenario:\n%s", strings.Join(fails, "\n"), src)
			}
		})
	}
}

// checkProblem returns what is wrong with err given that a problem naming
// key at line with the wanted fragments was expected.
func checkProblem(t *testing.T, err error, key string, line int, want, notWant []string) []string {
	t.Helper()
	ps := problemsOf(t, err)
	msg := err.Error()
	var fails []string
	for _, p := range ps {
		if p.File != badFile {
			fails = append(fails, fmt.Sprintf("problem %q names file %q, want %q", p, p.File, badFile))
		}
		if p.Msg == "" {
			fails = append(fails, fmt.Sprintf("problem %+v has no message", p))
		}
	}
	var got *Problem
	for i := range ps {
		if ps[i].Key == key && (got == nil || got.Line != line) {
			got = &ps[i]
		}
	}
	if got == nil {
		return append(fails, fmt.Sprintf("no problem names key %q; got:\n%s", key, msg))
	}
	if got.Line != line {
		fails = append(fails, fmt.Sprintf("problem for %q is on line %d, want %d: %s", key, got.Line, line, got))
	}
	prefix := fmt.Sprintf("%s:%d: %s: ", badFile, line, key)
	if key == "" {
		prefix = fmt.Sprintf("%s:%d: ", badFile, line)
	}
	if !strings.Contains(msg, prefix) {
		fails = append(fails, fmt.Sprintf("error does not contain %q:\n%s", prefix, msg))
	}
	for _, w := range want {
		if !strings.Contains(got.Msg, w) {
			fails = append(fails, fmt.Sprintf("message for %q lacks %q: %s", key, w, got.Msg))
		}
	}
	for _, w := range notWant {
		if strings.Contains(msg, w) {
			fails = append(fails, fmt.Sprintf("error should not contain %q:\n%s", w, msg))
		}
	}
	return fails
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{
		{"attempts = 3", "atempts = 3"},
		{"sigma = 0.5 }", "sigma = 0.5, sigmaa = 1 }"},
		{`warmup = "5s"`, "warmup = 5"},
	})
	ps := problemsOf(t, func() error { _, err := Parse(badFile, []byte(src)); return err }())
	if len(ps) < 3 {
		t.Fatalf("got %d problems, want all 3:\n%v", len(ps), ps)
	}
	want := map[string]int{
		"run.warmup":                 lineContaining(t, src, "warmup = 5"),
		"client.retry.atempts":       lineContaining(t, src, "atempts"),
		"upstream[0].latency.sigmaa": lineContaining(t, src, "sigmaa"),
	}
	for _, p := range ps {
		if l, ok := want[p.Key]; ok {
			if p.Line != l {
				t.Errorf("%s: line %d, want %d", p.Key, p.Line, l)
			}
			delete(want, p.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("problems not reported: %v\n%v", want, ps)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Line < ps[i-1].Line {
			t.Errorf("problems not in line order:\n%v", ps)
		}
	}
	if n := strings.Count(ps.Error(), "\n") + 1; n != len(ps) {
		t.Errorf("Error() has %d lines for %d problems", n, len(ps))
	}

	// Two unknown keys in one table.
	src = applyEdits(t, minimalScenario, []textEdit{{"rate = 40.0", "raet = 40.0\nbrust = 40"}})
	ps = problemsOf(t, func() error { _, err := Parse(badFile, []byte(src)); return err }())
	if len(ps) < 2 {
		t.Errorf("got %d problems for two unknown keys, want at least 2:\n%v", len(ps), ps)
	}
}

func TestParseSyntaxErrorNamesLineAndColumn(t *testing.T) {
	src := "name = \"x\"\n\n[run]\nduration = \"1s\" extra\n"
	_, err := Parse("s.toml", []byte(src))
	ps := problemsOf(t, err)
	if len(ps) != 1 || ps[0].Line != 4 {
		t.Fatalf("want one problem on line 4, got %v", ps)
	}
	if !strings.HasPrefix(err.Error(), "s.toml:4: syntax error at column ") || !strings.Contains(err.Error(), "\n    duration = \"1s\" extra\n") {
		t.Errorf("syntax error does not echo the line: %q", err.Error())
	}
}

func TestParseWithoutFileName(t *testing.T) {
	_, err := Parse("", []byte("name = 1\n"))
	for _, p := range problemsOf(t, err) {
		if p.File != "<scenario>" {
			t.Errorf("problem %v: file %q, want <scenario>", p, p.File)
		}
	}
	if !strings.HasPrefix(err.Error(), "<scenario>") {
		t.Errorf("message does not start with <scenario>: %v", err)
	}
}

func TestParseEmptyAndNonTableInputs(t *testing.T) {
	for _, src := range []string{"", "\n", "# only a comment\n", "run = 5\nworkload = []\nclient = \"x\"\nupstream = 3\n",
		"[[client]]\n[[run]]\n", "name = \"x\"\n[[upstream]]\n[[upstream]]\nhost = 3\nlatency = 4\n"} {
		_, err := Parse(badFile, []byte(src))
		ps := problemsOf(t, err)
		for _, p := range ps {
			if p.Msg == "" || p.File != badFile {
				t.Errorf("%q: bad problem %+v", src, p)
			}
		}
	}
}

// Examples must load cleanly both from the embedded FS and from disk.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("examples", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".toml"); sc.Name != want {
			t.Errorf("%s: name %q, want %q", f, sc.Name, want)
		}
		if sc.Description == "" {
			t.Errorf("%s: no description", f)
		}
	}
	ex, err := Examples()
	if err != nil {
		t.Fatalf("Examples: %v", err)
	}
	if len(ex) != len(files) {
		t.Errorf("Examples() returned %d scenarios, %d files on disk", len(ex), len(files))
	}
	for _, e := range ex {
		if _, err := Parse("examples/"+e.Name+".toml", e.Source); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		src, err := ExampleSource(e.Name)
		if err != nil || string(src) != string(e.Source) {
			t.Errorf("ExampleSource(%q) = %d bytes, %v", e.Name, len(src), err)
		}
	}
	if _, err := ExampleSource("no-such-example"); err == nil {
		t.Error("ExampleSource of an unknown name did not fail")
	}
}

// keyIndexDoc exercises the key scanner; expected lines are found from
// unique markers in the text.
const keyIndexDoc = `# a comment with key = "value" and [not.a.table]
title = "x = [y]"   # trailing comment, with = and [brackets]

[table]
a = 1
b.c = "dotted"          # dotted key
"quoted key" = 2
notes = """
multi-line = not a key
[not.a.table]
# not a comment "
"""
after = 3
lit = '''
x = [1,
'''
after_lit = 4
s = 'literal with " quote and [bracket'
esc = "escaped \" quote = [x]"
after_esc = 5

[workload]
hosts = [
  { name = "a" },   # a comment, with = and [
  { name = "b", weight = 2.0 },
  # a comment line inside the array ]
  { name = "c",
    weight = 3.0 },
]
tenants = [ { name = "t0" },
            { name = "t1" } ]

[[client.limiter]]
name = "a"
rate = 1.0

[[client.limiter]]
name = "b"
rate = 2.0
[client.limiter.extra]   # a sub-table of the current element
x = 1

[[client.limiter]]
name = "c"
rate = 3.0

[client.retry]
attempts = 2

[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[upstream]]
host = "b"
latency.dist = "lognormal"
latency.sigma = 0.7
quota = {
  kind = "token_bucket",
  rate = 5.0,
}
`

func TestKeyIndex(t *testing.T) {
	var tree map[string]any
	if _, err := toml.Decode(keyIndexDoc, &tree); err != nil {
		t.Fatalf("test document is not valid TOML: %v", err)
	}
	nth := func(marker string, n int) int { // line of the n-th (0-based) occurrence
		rest, off := keyIndexDoc, 0
		for i := 0; ; i++ {
			j := strings.Index(rest, marker)
			if j < 0 {
				t.Fatalf("marker %q occurs fewer than %d times", marker, n+1)
			}
			if i == n {
				return strings.Count(keyIndexDoc[:off+j], "\n") + 1
			}
			off += j + len(marker)
			rest = keyIndexDoc[off:]
		}
	}
	one := func(marker string) int { return lineContaining(t, keyIndexDoc, marker) }
	want := map[string]int{
		"title":                          2,
		"table":                          one("[table]"),
		"table.a":                        one("a = 1"),
		"table.b":                        one("b.c ="),
		"table.b.c":                      one("b.c ="),
		"table.quoted key":               one(`"quoted key"`),
		"table.notes":                    one("notes ="),
		"table.after":                    one("after = 3"),
		"table.lit":                      one("lit = '''"),
		"table.after_lit":                one("after_lit"),
		"table.s":                        one("s = 'literal"),
		"table.esc":                      one("esc = \"escaped"),
		"table.after_esc":                one("after_esc"),
		"workload.hosts":                 one("hosts = ["),
		"workload.hosts[0]":              one(`{ name = "a" }`),
		"workload.hosts[0].name":         one(`{ name = "a" }`),
		"workload.hosts[1].weight":       one("weight = 2.0"),
		"workload.hosts[2]":              one(`{ name = "c"`),
		"workload.hosts[2].name":         one(`{ name = "c"`),
		"workload.hosts[2].weight":       one("weight = 3.0"),
		"workload.tenants[1].name":       one(`"t1"`),
		"client.limiter[0]":              nth("[[client.limiter]]", 0),
		"client.limiter[0].rate":         one("rate = 1.0"),
		"client.limiter[1]":              nth("[[client.limiter]]", 1),
		"client.limiter[1].name":         one("name = \"b\"\nrate"),
		"client.limiter[1].rate":         one("rate = 2.0"),
		"client.limiter[1].extra":        one("[client.limiter.extra]"),
		"client.limiter[1].extra.x":      one("x = 1"),
		"client.limiter[2].rate":         one("rate = 3.0"),
		"client.retry.attempts":          one("attempts = 2"),
		"upstream[0]":                    nth("[[upstream]]", 0),
		"upstream[0].latency":            one(`median = "1ms"`),
		"upstream[0].latency.sigma":      one(`median = "1ms"`),
		"upstream[1].host":               one(`host = "b"`),
		"upstream[1].latency":            one("latency.dist"),
		"upstream[1].latency.sigma":      one("latency.sigma"),
		"upstream[1].quota":              one("quota = {"),
		"upstream[1].quota.rate":         one("rate = 5.0"),
		"upstream[1].quota.kind":         one(`kind = "token_bucket"`),
		"upstream[1].latency.sigma.deep": one("latency.sigma"), // falls back to the nearest ancestor
		// An element that does not exist falls back to the array's first header.
		"client.limiter[7].rate": nth("[[client.limiter]]", 0),
	}
	idx := indexKeys(keyIndexDoc)
	for path, line := range want {
		if got := idx.lineOf(path); got != line {
			t.Errorf("lineOf(%q) = %d, want %d", path, got, line)
		}
	}
	// Text inside strings and comments is not indexed.
	for _, path := range []string{"not", "not.a.table", "multi-line", "x", "table.x", "table.multi-line", "table.not", "key", ""} {
		if line, ok := idx[path]; ok {
			t.Errorf("index has %q (line %d), which is not a key of the document", path, line)
		}
	}
	for _, path := range []string{"not.a.table", "nosuch.key", ""} {
		if got := idx.lineOf(path); got != 0 {
			t.Errorf("lineOf(%q) = %d, want 0", path, got)
		}
	}

	// CRLF line ends index the same lines.
	crlf := indexKeys(strings.ReplaceAll(keyIndexDoc, "\n", "\r\n"))
	for path, line := range want {
		if got := crlf.lineOf(path); got != line {
			t.Errorf("CRLF: lineOf(%q) = %d, want %d", path, got, line)
		}
	}
}

// Keys of a second [[upstream]]'s nested array of tables must count from 0.
func TestKeyIndexNestedArrayOfTables(t *testing.T) {
	doc := `[[upstream]]
host = "a"
[upstream.latency]
dist = "mixture"
[[upstream.latency.components]]
weight = 1
[upstream.latency.components.dist]
dist = "constant"
value = "1ms"
[[upstream.latency.components]]
weight = 2
dist = { dist = "constant", value = "2ms" }

[[upstream]]
host = "b"
[upstream.latency]
dist = "mixture"
[[upstream.latency.components]]
weight = 3
dist = { dist = "constant", value = "3ms" }
`
	want := map[string]int{
		"upstream[0].latency.components[0].weight":     6,
		"upstream[0].latency.components[0].dist.value": 9,
		"upstream[0].latency.components[1].weight":     11,
		"upstream[1].latency.components[0]":            18,
		"upstream[1].latency.components[0].weight":     19,
	}
	idx := indexKeys(doc)
	var fails []string
	for path, line := range want {
		if got := idx.lineOf(path); got != line {
			fails = append(fails, fmt.Sprintf("lineOf(%q) = %d, want %d", path, got, line))
		}
	}
	// And through the loader: a bad value in the second upstream's component.
	src := applyEdits(t, minimalScenario, []textEdit{{"latency = { dist = \"exponential\", mean = \"50ms\" }\n",
		"[upstream.latency]\ndist = \"mixture\"\n[[upstream.latency.components]]\nweight = 1\ndist = { dist = \"constant\", value = \"1ms\" }\n" +
			"[[upstream.latency.components]]\nweight = -1\ndist = { dist = \"constant\", value = \"1ms\" }\n"}})
	_, err := Parse(badFile, []byte(src))
	fails = append(fails, checkProblem(t, err, "upstream[1].latency.components[1].weight", lineContaining(t, src, "weight = -1"),
		[]string{"must be greater than 0"}, nil)...)
	if len(fails) > 0 {
		t.Fatalf("nested arrays of tables are misnumbered:\n%s", strings.Join(fails, "\n"))
	}
}

// An escaped quote followed by two quotes inside a multi-line basic string
// ("""…\"""…""") is valid TOML; the key scanner must not end the string there.
func TestKeyIndexEscapedQuotesInMultilineString(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{
		{`description = "a minimal valid scenario for the loader tests"`, `description = """he said \""" = """`},
		{`duration = "60s"`, `duration = "oops"`},
	})
	var tree map[string]any
	if _, err := toml.Decode(src, &tree); err != nil {
		t.Fatalf("not valid TOML: %v", err)
	}
	_, err := Parse(badFile, []byte(src))
	if fails := checkProblem(t, err, "run.duration", lineContaining(t, src, "oops"), []string{"not a duration"}, nil); len(fails) > 0 {
		t.Fatalf("an escaped quote in a multi-line string desynchronises the key index:\n%s", strings.Join(fails, "\n"))
	}
}

// The same desync can leave the scanner on a ']' or '}' that it never
// consumes: Parse then spun forever (and inside an array, allocated without
// bound). The scan must end well within its step budget, which would cut a
// scan that stops advancing short instead of letting it hang.
func TestParseEscapedQuotesDoNotHang(t *testing.T) {
	for _, src := range []string{"description = \"\"\"a\\\"\"\"]\"\"\"\n", "x = [\"\"\"\\\"\"\"}\"\"\"]\n"} {
		if _, steps := scanKeys(src); steps >= stepBudget(len(src)) {
			t.Errorf("scanning %q ran out of steps (%d)", src, steps)
		}
		_, err := Parse(badFile, []byte(src))
		problemsOf(t, err)
	}
}

// The step budget ends a loop that does not advance.
func TestKeyScanStepBudget(t *testing.T) {
	s := &scanner{src: "abc", budget: 10}
	for !s.eof() {
		s.peek() // a loop that never advances
	}
	if s.steps != 10 {
		t.Fatalf("a stalled scan ended after %d steps, want the budget of 10", s.steps)
	}
	for _, src := range []string{"", keyIndexDoc, minimalScenario, strings.Repeat("a.", 500) + "b = 1\n", strings.Repeat("[", 500)} {
		if _, steps := scanKeys(src); steps >= stepBudget(len(src)) {
			t.Errorf("scanning %d bytes (%.20q…) took %d steps, the whole budget", len(src), src, steps)
		}
	}
}

// Trace and samples files are named relative to the scenario file; an
// absolute path lets a scenario read any file the process can read.
func TestDataPathsStayWithTheScenario(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("examples", "token-bucket.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
	src := applyEdits(t, minimalScenario, []textEdit{{`arrival = "poisson"`, fmt.Sprintf("arrival = \"trace\"\ntrace = %q", abs)}, {"rate = 50.0\n", ""}})
	_, err = Parse(badFile, []byte(src))
	ps := problemsOf(t, err)
	var fails []string
	for _, p := range ps {
		if p.Key == "workload.trace" && strings.Contains(p.Msg, abs) && !strings.Contains(p.Msg, "absolute") {
			fails = append(fails, fmt.Sprintf("absolute trace path was opened: %s", p))
		}
	}
	if len(fails) > 0 {
		t.Fatalf("absolute trace/samples paths are opened:\n%s", strings.Join(fails, "\n"))
	}
}

// Defaults must never produce a problem about a key the file does not set.
func TestDefaultsAreValid(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{{"kind = \"token_bucket\"\nrate = 40.0\nburst = 40\n", "kind = \"gcra\"\nrate = 2.5\n"}})
	if _, err := Parse(badFile, []byte(src)); err != nil {
		t.Fatalf("a default produced a problem:\n%v", err)
	}
}

// Problems between keys are reported together with problems of single keys,
// so one round of fixes addresses both.
func TestCrossChecksReportedWithKeyProblems(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{{`warmup = "5s"`, `warmup = "2m"`}, {"attempts = 3", "atempts = 3"}})
	_, err := Parse(badFile, []byte(src))
	var fails []string
	for _, w := range []struct{ key, at, want string }{
		{"run.warmup", `warmup = "2m"`, "(2m0s) must be shorter than run.duration (1m0s)"},
		{"client.retry.atempts", "atempts", "did you mean attempts?"},
	} {
		fails = append(fails, checkProblem(t, err, w.key, lineContaining(t, src, w.at), []string{w.want}, nil)...)
	}
	if len(fails) > 0 {
		t.Fatal(strings.Join(fails, "\n"))
	}
}

// A check between keys runs beside problems of other keys, but is skipped
// when one of its own keys was rejected: the default or partial value that
// stands in for it would make a misleading contradiction.
func TestCrossChecksSkipRejectedKeys(t *testing.T) {
	type want struct{ key, at, msg string }
	for _, c := range []struct {
		name    string
		edits   []textEdit
		want    []want   // every one of these problems
		notWant []string // and none of these fragments
	}{
		{"unknown host beside a bad value", []textEdit{{`host = "cdn"`, `host = "cdm"`}, {"sigma = 0.5", "sigma = -1.0"}},
			[]want{{"upstream[1].host", `"cdm"`, `names no host "cdm"`}, {"upstream[0].latency.sigma", "sigma = -1.0", "must be greater than 0"},
				{"upstream", "[[upstream]]\nhost = \"api\"", `no [[upstream]] for host "cdn"`}}, nil},
		{"unknown limiter in a path beside a duplicate limiter name", []textEdit{{`name = "conns"`, `name = "bucket" # again`},
			{"[client.retry]", "[[client.path]]\nname = \"p\"\nlimiters = [\"bukcet\"]\n\n[client.retry]"}},
			[]want{{"client.limiter[1].name", "# again", "duplicate limiter name"}, {"client.path[0].limiters[0]", "limiters =", `names no limiter "bukcet"`}}, nil},
		{"cap below base beside an unknown key", []textEdit{{`cap = "30s"`, `cap = "500ms"`}, {"cost = 1", "cots = 1"}},
			[]want{{"client.retry.cap", "cap =", "must not be below client.retry.base"}, {"workload.cots", "cots", "did you mean cost?"}}, nil},

		{"rejected duration", []textEdit{{`duration = "60s"`, `duration = "oops"`}, {`warmup = "5s"`, `warmup = "2m"`}},
			[]want{{"run.duration", "oops", "not a duration"}}, []string{"must be shorter", "needs run.requests or run.duration"}},
		{"rejected requests with backlog", []textEdit{{`arrival = "poisson"`, `arrival = "backlog"`}, {"rate = 50.0\n", ""}, {"seed = 7", "seed = 7\nrequests = 1.5"}},
			[]want{{"run.requests", "requests = 1.5", "must be an integer"}}, []string{`is required with workload.arrival = "backlog"`}},
		{"rejected base", []textEdit{{`base = "1s"`, `base = "soon"`}, {`cap = "30s"`, `cap = "500ms"`}},
			[]want{{"client.retry.base", "soon", "not a duration"}}, []string{"must not be below"}},
		{"rejected rate under a default burst", []textEdit{{"rate = 40.0\nburst = 40", `rate = "fast"`}, {"cost = 1", "cost = 5"}},
			[]want{{"client.limiter[0].rate", "fast", "must be a number"}}, []string{"below one request's cost"}},
		{"misspelt burst", []textEdit{{"burst = 40", "brust = 100"}, {"cost = 1", "cost = 50"}},
			[]want{{"client.limiter[0].brust", "brust", "did you mean burst?"}}, []string{"below one request's cost"}},
		{"host without a name", []textEdit{{`{ name = "cdn" }`, `{ weight = 2.0 }`}},
			[]want{{"workload.hosts[1].name", "weight = 2.0", "is required"}}, []string{"names no host", `for host ""`}},
		{"misspelt workload table", []textEdit{{"[workload]", "[workloads]"}},
			[]want{{"workloads", "[workloads]", "did you mean workload?"}}, []string{"names no host", "no [[upstream]]"}},
		{"upstream host of the wrong type", []textEdit{{`host = "cdn"`, "host = 7"}},
			[]want{{"upstream[1].host", "host = 7", "must be a string"}}, []string{"no [[upstream]]", "must name a host"}},
		{"host with an unusable name", []textEdit{{`{ name = "cdn" }`, `{ name = "c/d" }`}},
			[]want{{"workload.hosts[1].name", "c/d", "may use only letters"}, {"upstream[1].host", `host = "cdn"`, `names no host "cdn"`}},
			[]string{`for host "c/d"`}},
		{"path limiter of the wrong type", []textEdit{{"[client.retry]", "[[client.path]]\nname = \"p\"\nlimiters = [1, \"conns\", \"conns\"]\n\n[client.retry]"}},
			[]want{{"client.path[0].limiters[0]", "limiters =", "must be a string"}}, []string{"names limiter", "names no limiter"}},
		{"limiter without a name", []textEdit{{"name = \"conns\"\n", ""}, {"[client.retry]", "[[client.path]]\nname = \"p\"\nlimiters = [\"conns\"]\n\n[client.retry]"}},
			[]want{{"client.limiter[1].name", "[[client.limiter]]\nkind = \"semaphore\"", "is required"}}, []string{"names no limiter"}},
		{"limiter hosts with a rejected element", []textEdit{{"kind = \"token_bucket\"\n", "kind = \"token_bucket\"\nscope = \"host\"\nhosts = [1, \"api\", \"nope\"]\n"}},
			[]want{{"client.limiter[0].hosts[0]", "hosts = [1", "must be a string"}}, []string{"hosts[1]", "names no host"}},
		{"sliding window too large", []textEdit{{"kind = \"token_bucket\"\nrate = 40.0\nburst = 40", "kind = \"sliding_window\"\nlimit = 200000000\nwindow = \"1s\""}},
			[]want{{"client.limiter[0].limit", "limit = 200000000", "too large for an exact log"}}, []string{"would remember"}},
		{"too many requests", []textEdit{{"seed = 7", "seed = 7\nrequests = 2000000000000"}, {"rate = 50.0", "rate = 1e9"}},
			[]want{{"run.requests", "requests =", "must be at most"}}, []string{"projects"}},
		{"rejected uniform max", []textEdit{{`dist = "exponential", mean = "50ms"`, `dist = "uniform", min = "50ms", max = "0s"`}},
			[]want{{"upstream[1].latency.max", `"uniform"`, "must be greater than 0s"}}, []string{"greater than min"}},
		{"rejected lognormal p99", []textEdit{{`median = "200ms", sigma = 0.5`, `p50 = "100ms", p99 = "soon"`}},
			[]want{{"upstream[0].latency.p99", "soon", "not a duration"}}, []string{"greater than p50"}},
		{"mixture components not an array", []textEdit{{`latency = { dist = "exponential", mean = "50ms" }`, `latency = { dist = "mixture", components = 3 }`}},
			[]want{{"upstream[1].latency.components", "components = 3", "must be an array of tables"}}, []string{"at least two components"}},
		{"quantile pair rejected", []textEdit{{`latency = { dist = "exponential", mean = "50ms" }`, `latency = { dist = "empirical", quantiles = [[0, "1ms"], [0.5, "x"]] }`}},
			[]want{{"upstream[1].latency.quantiles[1]", "quantiles", "must be [p in 0..1"}}, []string{"empirical"}},
		{"quantiles out of order beside another problem", []textEdit{{"attempts = 3", "atempts = 3"},
			{`latency = { dist = "exponential", mean = "50ms" }`, `latency = { dist = "empirical", quantiles = [[0, "1ms"], [1, "1s"], [0.5, "2s"]] }`}},
			[]want{{"upstream[1].latency.quantiles", "quantiles", "distinct p and non-decreasing"}, {"client.retry.atempts", "atempts", "did you mean"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := applyEdits(t, minimalScenario, c.edits)
			_, err := Parse(badFile, []byte(src))
			var fails []string
			for _, w := range c.want {
				fails = append(fails, checkProblem(t, err, w.key, lineContaining(t, src, w.at), []string{w.msg}, c.notWant)...)
			}
			if len(fails) > 0 {
				t.Errorf("%s\nscenario:\n%s", strings.Join(fails, "\n"), src)
			}
		})
	}
}

// maxListLength is documented as bounding limiters and paths too.
func TestListLengthsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(minimalScenario)
	for i := range 10001 {
		fmt.Fprintf(&b, "[[client.path]]\nname = \"p%d\"\nlimiters = [\"bucket\"]\n", i)
	}
	_, err := Parse(badFile, []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "client.path: has 10001 entries") {
		t.Fatalf("10001 [[client.path]] were accepted (err = %v)", err)
	}
}

// longPathScenario is the minimal scenario with n semaphores s0…s(n-1)
// added, then, with rate, n rate limiters r0…r(n-1), and one path of n
// limiters for each function given, which names the path's i-th limiter.
func longPathScenario(n int, rate bool, paths ...func(i int) string) string {
	var b strings.Builder
	b.WriteString(minimalScenario)
	for i := range n {
		fmt.Fprintf(&b, "[[client.limiter]]\nname = \"s%d\"\nkind = \"semaphore\"\npermits = 1\n", i)
	}
	if rate {
		for i := range n {
			fmt.Fprintf(&b, "[[client.limiter]]\nname = \"r%d\"\nkind = \"gcra\"\nrate = 1.0\n", i)
		}
	}
	for p, name := range paths {
		names := make([]string, n)
		for i := range n {
			names[i] = strconv.Quote(name(i))
		}
		fmt.Fprintf(&b, "[[client.path]]\nname = \"p%d\"\nlimiters = [%s]\n", p, strings.Join(names, ", "))
	}
	return b.String()
}

// Order warnings must stay linear in the limiters the paths name: pairing
// every limiter of a path with every later one built n²/2 wait-graph edges
// for a path of n semaphores (10,001 took about 40 s to load) and gave n²
// warnings for n semaphores before n rate limiters. The work is counted,
// not timed.
func TestOrderWarningsStayLinear(t *testing.T) {
	var fails []string
	for _, n := range []int{30, 150} {
		for _, c := range []struct {
			name  string
			src   string
			named int  // limiters named along all paths
			cycle bool // whether the paths form a lock-order cycle
		}{
			{"semaphores then rate limiters", longPathScenario(n, true), 2*n + 2, false},
			{"semaphores in opposite orders", longPathScenario(n, false,
				func(i int) string { return fmt.Sprintf("s%d", i) },
				func(i int) string { return fmt.Sprintf("s%d", n-1-i) }), 2 * n, true},
		} {
			sc, err := Parse(badFile, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, edges := orderGraph(sc); edges >= c.named {
				fails = append(fails, fmt.Sprintf("%s, n = %d: %d wait-graph edges for %d limiters named", c.name, n, edges, c.named))
			}
			if len(sc.Warnings) > maxOrderWarnings+1 {
				fails = append(fails, fmt.Sprintf("%s, n = %d: %d warnings", c.name, n, len(sc.Warnings)))
			}
			if cycle := slices.ContainsFunc(sc.Warnings, func(w metrics.Warning) bool { return w.Code == metrics.LockOrder }); cycle != c.cycle {
				fails = append(fails, fmt.Sprintf("%s, n = %d: lock-order cycle warned %v, want %v", c.name, n, cycle, c.cycle))
			}
		}
	}
	if len(fails) > 0 {
		t.Fatalf("order warnings are not linear:\n%s", strings.Join(fails, "\n"))
	}
}

// BenchmarkParseLongPath loads a scenario whose one path takes 1,500
// semaphores and 1,500 rate limiters.
func BenchmarkParseLongPath(b *testing.B) {
	src := []byte(longPathScenario(1500, true))
	for b.Loop() {
		if _, err := Parse(badFile, src); err != nil {
			b.Fatal(err)
		}
	}
}

// The caret under a syntax error must stand under the error in the echoed
// line, on the right line, with the line's tabs repeated before it.
func TestSyntaxErrorCaret(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string // the whole file
		line string // the line the error is on, as echoed
		at   string // where in that line the caret belongs
	}{
		{"duplicate key", applyEdits(t, minimalScenario, []textEdit{{"seed = 7", "seed = 7\nseed = 8"}}), "seed = 8", "seed"},
		{"duplicate key indented with tabs", applyEdits(t, minimalScenario, []textEdit{{"seed = 7", "seed = 7\n\t\tseed = 8"}}), "\t\tseed = 8", "seed"},
		{"duplicate table", applyEdits(t, minimalScenario, []textEdit{{"[client.retry]", "[client.retry]\n[client.retry]"}}), "[client.retry]", "client"},
		{"duplicate key with CRLF line ends", strings.ReplaceAll(applyEdits(t, minimalScenario, []textEdit{{"seed = 7", "seed = 7\nseed = 8"}}), "\n", "\r\n"), "seed = 8", "seed"},
		{"duplicate key after a byte-order mark", "\ufeff" + applyEdits(t, minimalScenario, []textEdit{{"seed = 7", "seed = 7\nseed = 8"}}), "seed = 8", "seed"},
		{"duplicate key in an inline table", applyEdits(t, minimalScenario, []textEdit{{"burst = 100 }", "burst = 100, rate = 1.0 }"}}),
			`quota = { kind = "token_bucket", rate = 100.0, burst = 100, rate = 1.0 }`, "rate = 1.0"},
		{"tab before junk", applyEdits(t, minimalScenario, []textEdit{{"burst = 40", "burst = 40\t\tx"}}), "burst = 40\t\tx", "x"},
		{"junk after a tab-indented key", applyEdits(t, minimalScenario, []textEdit{{"burst = 40", "\tburst = 40 \tx"}}), "\tburst = 40 \tx", "x"},
		{"junk after non-ASCII text", applyEdits(t, minimalScenario, []textEdit{{"permits = 8", "permits = 8 # é\nrate = \"µ\"x"}}), `rate = "µ"x`, "x"},
		{"second equals sign", applyEdits(t, minimalScenario, []textEdit{{"burst = 40", "burst = = 40"}}), "burst = = 40", "= 40"},
		{"string cut by the line end", applyEdits(t, minimalScenario, []textEdit{{`host = "cdn"`, `host = "cdn`}}), `host = "cdn`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(badFile, []byte(c.src))
			ps := problemsOf(t, err)
			if len(ps) != 1 {
				t.Fatalf("want one problem, got %d:\n%v", len(ps), err)
			}
			lines := strings.Split(strings.TrimPrefix(c.src, "\ufeff"), "\n")
			line := 0
			for i, l := range lines {
				if strings.TrimSuffix(l, "\r") == c.line {
					line = i + 1 // the last occurrence: the duplicate
				}
			}
			col := strings.Index(c.line, c.at) // a byte offset
			if c.at == "" {
				col = len(c.line)
			}
			var pad strings.Builder
			for _, r := range c.line[:col] {
				if r == '\t' {
					pad.WriteRune(r)
				} else {
					pad.WriteByte(' ')
				}
			}
			want := fmt.Sprintf("syntax error at column %d: ", utf8.RuneCountInString(c.line[:col])+1)
			echo := "\n    " + c.line + "\n    " + pad.String() + "^"
			if ps[0].Line != line || !strings.HasPrefix(ps[0].Msg, want) || !strings.HasSuffix(ps[0].Msg, echo) {
				t.Fatalf("got line %d, message\n%s\nwant line %d, a message starting %q and ending\n%s", ps[0].Line, ps[0].Msg, line, want, echo)
			}
		})
	}
}

// A syntax error echoes its line: control characters, invalid bytes and
// other unprintable runes in it must not reach the terminal raw, and the
// caret must still line up.
func TestSyntaxErrorEchoIsPrintable(t *testing.T) {
	for _, c := range []struct{ src, echo string }{
		{"a = 1 # \x1b[2K x\n", "a = 1 # \u241b[2K x"},
		{"a = 1\rb = 2\n", "a = 1\u240db = 2"},
		{"a = \"\xff\"\n", "a = \"\ufffd\""},
		{"a = \"\u202e\" x\n", "a = \"\ufffd\" x"},
		{"a = [1 \u202e]\n", "a = [1 \ufffd]"}, // the message quotes the rune raw
		{"\"a\\u001b\" = 1\n\"a\\u001b\" = 2\n", `"a\u001b" = 2`},
	} {
		_, err := Parse(badFile, []byte(c.src))
		ps := problemsOf(t, err)
		parts := strings.Split(ps[0].Msg, "\n")
		for _, r := range err.Error() {
			if r != '\n' && r != ' ' && !strconv.IsGraphic(r) {
				t.Errorf("%q: the error holds the unprintable %U:\n%q", c.src, r, err.Error())
			}
		}
		if len(parts) != 3 || parts[1] != "    "+c.echo {
			t.Errorf("%q: echo %q, want %q", c.src, parts[1:], c.echo)
			continue
		}
		var col int
		if _, err := fmt.Sscanf(parts[0], "syntax error at column %d:", &col); err != nil {
			t.Fatalf("%q: %v", parts[0], err)
		}
		if caret := strings.TrimPrefix(parts[2], "    "); caret != strings.Repeat(" ", col-1)+"^" || col > utf8.RuneCountInString(c.echo)+1 {
			t.Errorf("%q: caret line %q for column %d of %q", c.src, caret, col, c.echo)
		}
	}
}

// A key is printed as written; control characters in a quoted key must not
// break the one-line-per-problem output or reach the terminal raw.
func TestProblemKeysArePrintable(t *testing.T) {
	src := "name = \"x\"\n\"a\\nbad.toml:1: name: forged\\u001b[2K\" = 1\n"
	_, err := Parse(badFile, []byte(src))
	ps := problemsOf(t, err)
	msg := err.Error()
	if n := strings.Count(msg, "\n") + 1; n != len(ps) || strings.ContainsAny(msg, "\x1b\b\r") {
		t.Fatalf("keys printed raw: %d problems render as %d lines:\n%s", len(ps), n, msg)
	}
}

// A quoted key written with escapes is indexed under its decoded name,
// decoded as TOML decodes it: \e is the escape character and \xHH the code
// point U+00HH (Go's strconv.Unquote knows no \e and makes \xe9 one byte).
func TestKeyIndexQuotedKeyEscapes(t *testing.T) {
	idx := indexKeys("[run]\n\"dur\\u0061tion\" = 1\n\"tab\\tkey\" = 2\n\"esc\\e\" = 3\n\"caf\\xe9\" = 4\n" +
		"\"caf\\u00E9 \\U0001F600\" = 5\n\"q\\\"b\\\\s\" = 6\n")
	var fails []string
	for path, line := range map[string]int{"run.duration": 2, "run.tab\tkey": 3, "run.esc\x1b": 4, "run.café": 5,
		"run.café \U0001F600": 6, `run.q"b\s`: 7} {
		if got := idx[path]; got != line {
			fails = append(fails, fmt.Sprintf("index[%q] = %d, want %d", path, got, line))
		}
	}
	if len(fails) > 0 {
		t.Fatalf("quoted key escapes not decoded: %s (index: %v)", strings.Join(fails, "; "), idx)
	}
}

// A cost distribution whose draws exceed a limit at times is a warning that
// gives the share refused as too large (60% of a uniform 1–100 above a
// burst of 40), not an error; a reservation with no upstream revealing a
// cost is a warning too.
func TestCostWarnings(t *testing.T) {
	src := strings.Replace(minimalScenario, "cost = 1", `cost = { dist = "uniform", min = 1, max = 100 }`, 1)
	src = strings.Replace(src, "[client.retry]", "[client.reserve]\nestimate = \"p90\"\n\n[client.retry]", 1)
	sc, err := Parse(badFile, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, w := range sc.Warnings {
		texts = append(texts, w.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"client.limiter[0].burst: about 59.8% of requests", "limiter bucket's burst (40)", "no upstream reveals a response cost"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

// BenchmarkParseManyTenants loads the 10,000-tenant scale scenario (a
// token bucket per tenant): the load is part of what `limitsim run` costs
// at that scale.
func BenchmarkParseManyTenants(b *testing.B) {
	var s strings.Builder
	s.WriteString("name = \"tenants\"\n[run]\nduration = \"600s\"\n[workload]\narrival = \"poisson\"\nrate = 1000.0\ntenants = [\n")
	for i := range 10_000 {
		fmt.Fprintf(&s, "  { name = \"t%d\", weight = 1.0 },\n", i)
	}
	s.WriteString("]\n[[client.limiter]]\nname = \"per\"\nkind = \"token_bucket\"\nrate = 0.12\nburst = 5\nscope = \"tenant\"\n")
	s.WriteString("[[upstream]]\nhost = \"*\"\nlatency = { dist = \"lognormal\", median = \"100ms\", sigma = 0.5 }\n")
	src := []byte(s.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("tenants.toml", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTrace reads a data file of 200,000 arrival instants whole,
// as latency samples and a trace out of order are read.
func BenchmarkReadTrace(b *testing.B) {
	path := filepath.Join(b.TempDir(), "trace.csv")
	var s strings.Builder
	s.WriteString("t\n")
	for i := range 200_000 {
		fmt.Fprintf(&s, "%.6f\n", float64(i)*0.0005+0.000123)
	}
	if err := os.WriteFile(path, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readColumn(path, false); err != nil {
			b.Fatal(err)
		}
	}
}
