package scenarios

import (
	"math"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// sharedHourly is two hosts served by constant arrivals a second apart
// in turn, each host with its own quota of 100 an hour (room for all of
// its 50), and one hourly quota of 30 that both count, over two client
// instances; no retries, no pause.
const sharedHourly = `name = "shared-hourly"

[run]
seed = 3
requests = 100

[workload]
arrival = "constant"
rate = 1.0
hosts = [{ name = "repos" }, { name = "issues" }]
host_order = "round_robin"

[client]
instances = 2

[client.on_429]
pause = "none"
honor_retry_after = false

[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
quota = { kind = "fixed_window", limit = 100, window = "1h" }
retry_after = "reset"

[[quota]]
name = "hourly"
kind = "fixed_window"
limit = 30
window = "1h"
`

// sharedStat returns the shared quota name's statistics.
func sharedStat(t *testing.T, r *metrics.Results, name string) metrics.SharedQuotaStats {
	t.Helper()
	for _, q := range r.Quotas {
		if q.Name == name {
			return q
		}
	}
	t.Fatalf("no shared quota %q in %+v", name, r.Quotas)
	return metrics.SharedQuotaStats{}
}

// TestSharedQuotaRefusesAcrossHosts: the shared hourly quota of 30
// admits exactly the first 30 of the 100 requests, 15 on each host, and
// refuses the other 70, 35 on each, though each host's own quota would
// admit all of its 50 (as the run without the shared quota shows): a
// quota copied to each host would admit 60, one per instance 60 too.
// Each host names the shared quota in rejected_by with its share.
func TestSharedQuotaRefusesAcrossHosts(t *testing.T) {
	r := runSource(t, sharedHourly).Results
	if r.Requests.Succeeded != 30 || r.Requests.Throttled429 != 70 {
		t.Fatalf("succeeded %d, 429 %d; want 30 and 70", r.Requests.Succeeded, r.Requests.Throttled429)
	}
	q := sharedStat(t, r, "hourly")
	if q.Admitted != 30 || q.Refused != 70 || q.Taken != 30 || q.Unit != "requests" || strings.Join(q.Upstreams, ",") != "repos,issues" {
		t.Fatalf("hourly: %+v; want 30 admitted, 70 refused over repos and issues", q)
	}
	for _, u := range r.Upstreams {
		if len(u.RejectedBy) != 2 {
			t.Fatalf("%s rejected_by %+v, want the own quota and the shared one", u.Host, u.RejectedBy)
		}
		own, shared := u.RejectedBy[0], u.RejectedBy[1]
		if own.Count != 0 || own.Shared || shared.Quota != "hourly" || !shared.Shared || shared.Count != 35 {
			t.Fatalf("%s rejected_by %+v, want the own quota 0 and hourly (shared) 35", u.Host, u.RejectedBy)
		}
	}
	sc, err := ParseWith("scenario.toml", []byte(sharedHourly), []Override{{Key: "quota.hourly.limit", Value: int64(1000)}})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Quotas[0].Quota.Limit != 1000 {
		t.Fatalf("--set quota.hourly.limit=1000 left the limit at %d", sc.Quotas[0].Quota.Limit)
	}
	if r := mustSimulate(t, sc, nil).Results; r.Requests.Succeeded != 100 {
		t.Fatalf("with room in the shared quota %d of 100 succeeded: the hosts' own quotas refuse", r.Requests.Succeeded)
	}
}

// TestSharedQuotaOnlyTheHostsItNames: a shared quota that names one host
// leaves the other alone: issues admits all of its 50, repos 30 of 50.
func TestSharedQuotaOnlyTheHostsItNames(t *testing.T) {
	src := strings.Replace(sharedHourly, "name = \"hourly\"\n", "name = \"hourly\"\nupstreams = [\"repos\"]\n", 1)
	r := runSource(t, src).Results
	if r.Requests.Succeeded != 80 {
		t.Fatalf("succeeded %d, want 80 (issues 50, repos 30)", r.Requests.Succeeded)
	}
	if q := sharedStat(t, r, "hourly"); q.Admitted != 30 || q.Refused != 20 || strings.Join(q.Upstreams, ",") != "repos" {
		t.Fatalf("hourly: %+v; want 30 admitted, 20 refused, repos only", q)
	}
	if u := r.Upstreams[1]; u.Host != "issues" || u.RejectedBy != nil || u.Throttled != 0 {
		t.Fatalf("issues, which the quota does not name: %+v", u)
	}
}

// pointsScenario sends reads (1 point, 70%) and writes (5 points, 30%)
// to two hosts; one shared quota counts points, with room for all.
const pointsScenario = `name = "points"

[run]
seed = 11
requests = 20000

[workload]
arrival = "poisson"
rate = 100.0
hosts = [{ name = "repos" }, { name = "issues" }]

[[client.path]]
name = "read"
method = "GET"
weight = 0.7
cost = 1
limiters = []

[[client.path]]
name = "write"
method = "POST"
weight = 0.3
cost = 5
limiters = []

[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }

[[quota]]
name = "points"
kind = "fixed_window"
limit = 1000000
window = "1h"
unit = "cost"
`

// TestPathCostsSumOnTheSharedQuota: every request takes its path's cost
// from the shared quota that counts cost. With N = 20,000 requests, all
// admitted, the quota took N·1 + W·4 for W writes: (taken − N) is a
// multiple of 4 (no request took another cost), W is within four standard
// deviations of 0.3·N (binomial), so taken is within 16 of them of
// 0.7·N·1 + 0.3·N·5 = 2.2·N; and it equals, exactly, the sum of the costs
// the hosts recorded at arrival. A path cost ignored (the workload's 1)
// takes N; a cost redrawn per host or per quota breaks the equality.
func TestPathCostsSumOnTheSharedQuota(t *testing.T) {
	r := runSource(t, pointsScenario).Results
	const n = 20000
	q := sharedStat(t, r, "points")
	if q.Admitted != n || q.Refused != 0 || q.Unit != "cost" {
		t.Fatalf("points: %+v; want all %d admitted", q, n)
	}
	if (q.Taken-n)%4 != 0 {
		t.Fatalf("taken %d: not N + 4 × writes", q.Taken)
	}
	writes := float64(q.Taken-n) / 4
	sd := math.Sqrt(n * 0.3 * 0.7)
	if math.Abs(writes-0.3*n) > 4*sd {
		t.Fatalf("%v writes of %d requests, want 0.3 × N = %v ± %.0f", writes, n, 0.3*n, 4*sd)
	}
	if want := 2.2 * n; math.Abs(float64(q.Taken)-want) > 16*sd {
		t.Fatalf("taken %d, want 2.2 × N = %v ± %.0f", q.Taken, want, 16*sd)
	}
	var recorded float64
	for _, u := range r.Upstreams {
		if u.Cost == nil {
			t.Fatalf("%s: no cost statistics, though a shared quota counts cost", u.Host)
		}
		recorded += float64(u.Cost.Request.Count) * u.Cost.Request.Mean
	}
	if math.Round(recorded) != float64(q.Taken) {
		t.Fatalf("the hosts recorded costs summing to %v, the quota took %d", recorded, q.Taken)
	}
	for i, want := range []string{"GET", "POST"} {
		if r.Paths[i].Method != want {
			t.Fatalf("paths[%d].method = %q, want %q", i, r.Paths[i].Method, want)
		}
	}
}

// TestPathCostExactMix: with every request on a path of cost 5 (the
// override reaching client.path.NAME.cost) the quota takes exactly 5 a
// request, and a path without a cost keeps the workload's.
func TestPathCostExactMix(t *testing.T) {
	for _, c := range []struct {
		sets []Override
		want int64 // taken per request
	}{
		{[]Override{{Key: "client.path.read.cost", Value: int64(5)}}, 5},
		{[]Override{{Key: "client.path.read.cost"}, {Key: "client.path.write.cost"}, {Key: "workload.cost", Value: int64(3)}}, 3},
		{[]Override{{Key: "client.path.write.cost", Value: int64(1)}}, 1},
	} {
		sc, err := ParseWith("scenario.toml", []byte(pointsScenario), append(c.sets, Override{Key: "run.requests", Value: int64(500)}))
		r := mustSimulate(t, sc, err).Results
		if q := sharedStat(t, r, "points"); q.Admitted != 500 || q.Taken != 500*c.want {
			t.Errorf("%v: %+v; want 500 admitted taking %d", c.sets, q, 500*c.want)
		}
	}
}

// TestSharedQuotaResolvedLoadsBack: the scenario as run, with a shared
// quota and path costs and methods, loads back to the same scenario.
func TestSharedQuotaResolvedLoadsBack(t *testing.T) {
	for _, src := range []string{sharedHourly, pointsScenario,
		strings.Replace(pointsScenario, "cost = 5", "cost = { dist = \"uniform\", min = 2, max = 8 }", 1)} {
		sc, err := Parse("scenario.toml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		text, err := sc.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("scenario.toml", []byte(text))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if text2, _ := again.Resolved(); text2 != text {
			t.Fatalf("resolved text changed on reloading:\n%s\n---\n%s", text, text2)
		}
	}
}

// sharedBadCases are shared quotas and path costs and methods written
// wrong: each problem names the file, the key and its line.
var sharedBadCases = []badCase{
	{name: "shared quota naming a host near another", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"hourly\"\nkind = \"fixed_window\"\nlimit = 10\nwindow = \"1h\"\nupstreams = [\"api\",\n  \"cdm\"]\n\n[client.retry]"}},
		key: "quota[0].upstreams[1]", at: `"cdm"`, want: []string{`names no host "cdm"`, `did you mean "cdn"?`}},
	{name: "shared quota listing no host", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"hourly\"\nkind = \"fixed_window\"\nlimit = 10\nwindow = \"1h\"\nupstreams = []\n\n[client.retry]"}},
		key: "quota[0].upstreams", at: "upstreams = []", want: []string{"an empty list"}},
	{name: "shared quota without a name", edits: []textEdit{{"[client.retry]", "[[quota]]\nkind = \"fixed_window\"\nlimit = 10\nwindow = \"1h\"\n\n[client.retry]"}},
		key: "quota[0].name", at: "[[quota]]", want: []string{"is required"}},
	{name: "shared quota names twice", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"q\"\nkind = \"concurrency\"\npermits = 3\n\n[[quota]]\nname = \"q\" # again\nkind = \"concurrency\"\npermits = 4\n\n[client.retry]"}},
		key: "quota[1].name", at: "# again", want: []string{`duplicate quota name "q"`}},
	{name: "shared quota key misspelt", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"hourly\"\nkind = \"fixed_window\"\nlimt = 10\nwindow = \"1h\"\n\n[client.retry]"}},
		key: "quota[0].limt", at: "limt =", want: []string{"did you mean limit?"}},
	{name: "shared cost quota below a path's cost", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"write\"\ncost = 5\nlimiters = [\"conns\"]\n\n[[quota]]\nname = \"points\"\nkind = \"fixed_window\"\nlimit = 4\nwindow = \"1m\"\nunit = \"cost\"\n\n[client.retry]"}},
		key: "quota[0].limit", at: "limit = 4", want: []string{"(4) is below one request's cost (client.path[0].cost = 5)"}},
	{name: "refused_counts all over a shared sliding window", edits: []textEdit{{"quota = { kind = \"token_bucket\", rate = 100.0, burst = 100 }", "quota = { kind = \"token_bucket\", rate = 100.0, burst = 100 }\nrefused_counts = \"all\""},
		{"[client.retry]", "[[quota]]\nname = \"exact\"\nkind = \"sliding_window\"\nlimit = 10\nwindow = \"1m\"\nupstreams = [\"api\"]\n\n[client.retry]"}},
		key: "upstream[0].refused_counts", at: "refused_counts", want: []string{"the shared quota exact (sliding_window) cannot"}},
	{name: "shared exact log too large", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"a\"\nkind = \"sliding_window\"\nlimit = 60000000\nwindow = \"1h\"\n\n[[quota]]\nname = \"b\"\nkind = \"sliding_window\"\nlimit = 60000000\nwindow = \"1h\"\n\n[[quota]]\nname = \"c\"\nkind = \"sliding_window\"\nlimit = 60000000 # c\nwindow = \"1h\"\n\n[client.retry]"}},
		key: "quota[2].limit", at: "# c", want: []string{"would remember", "GiB"}},
	{name: "shared adaptive concurrency filter", edits: []textEdit{{"[client.retry]", "[[quota]]\nname = \"gate\"\nkind = \"envoy_adaptive_concurrency\" # gate\nconcurrency_limit_params = { concurrency_update_interval = \"100ms\" }\n\n[client.retry]"}},
		key: "quota[0].kind", at: "# gate", want: []string{"a filter in front of one server"}},
	{name: "path cost below one", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"write\"\ncost = 0\nlimiters = [\"conns\"]\n\n[client.retry]"}},
		key: "client.path[0].cost", at: "cost = 0", want: []string{"at least 1"}},
	{name: "path cost a float", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"write\"\ncost = 2.5\nlimiters = [\"conns\"]\n\n[client.retry]"}},
		key: "client.path[0].cost", at: "cost = 2.5", want: []string{"integer"}},
	{name: "path cost above a limiter it takes", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"write\"\ncost = 50\nlimiters = [\"bucket\"]\n\n[client.retry]"}},
		key: "client.limiter[0].burst", at: "burst = 40", want: []string{"(40) is below one request's cost (client.path[0].cost = 50)"}},
	{name: "path method misspelt", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"read\"\nmethod = \"get\"\nlimiters = [\"conns\"]\n\n[client.retry]"}},
		key: "client.path[0].method", at: "method =", want: []string{`names no HTTP method "get"`, `did you mean "GET"?`}},
	{name: "path method not a string", edits: []textEdit{{"[client.retry]", "[[client.path]]\nname = \"read\"\nmethod = 1\nlimiters = [\"conns\"]\n\n[client.retry]"}},
		key: "client.path[0].method", at: "method =", want: []string{"must be a string"}, notWant: []string{"HTTP method"}},
}

func TestSharedQuotaAndPathBadInputs(t *testing.T) {
	for _, c := range sharedBadCases {
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

// TestPathCostOnlyForTheLimitersItTakes: a path's cost is checked against
// the limiters that path takes, not those of other paths: writes of 50
// beside a bucket of burst 40 that only reads take load fine.
func TestPathCostOnlyForTheLimitersItTakes(t *testing.T) {
	src := applyEdits(t, minimalScenario, []textEdit{{"[client.retry]",
		"[[client.path]]\nname = \"write\"\ncost = 50\nlimiters = [\"conns\"]\n\n[[client.path]]\nname = \"read\"\nlimiters = [\"bucket\", \"conns\"]\n\n[client.retry]"}})
	if _, err := Parse(badFile, []byte(src)); err != nil {
		t.Fatal(err)
	}
}

// Variants and sweeps reach a shared quota and a path by name, as --set
// does; one naming a quota that is not there is a problem naming the
// variant's line and the quotas there are.
func TestVariantsAndSweepsReachSharedQuotasAndPaths(t *testing.T) {
	src := pointsScenario + `
[[variant]]
name = "tight"
set = ["quota.points.limit=4000", "client.path.write.cost=3", "client.path.read.method=HEAD"]

[[sweep]]
key = "client.path.write.cost"
values = [3, 5, 8]

[[sweep]]
key = "quota.points.limit"
values = [1000000, 2000000]
`
	sc, err := Parse("scenario.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseWith("scenario.toml", []byte(src), sc.Variants[0].Overrides())
	if err != nil {
		t.Fatal(err)
	}
	if v.Quotas[0].Quota.Limit != 4000 || v.Client.Paths[1].Cost.N != 3 || v.Client.Paths[0].Method != "HEAD" {
		t.Fatalf("variant tight: limit %d, write cost %+v, read method %q", v.Quotas[0].Quota.Limit, v.Client.Paths[1].Cost, v.Client.Paths[0].Method)
	}
	bad := strings.Replace(src, "quota.points.limit=4000", "quota.pionts.limit=4000", 1)
	_, err = Parse("scenario.toml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `no quota with name "pionts" (known: points)`) || !strings.Contains(err.Error(), "variant[0].set") {
		t.Fatalf("a variant naming no quota: %v", err)
	}
}

// TestSharedQuotaPausesEveryHost: with the headers read and no
// Retry-After sent, the shared quota's zero shows in the answers of both
// hosts, so each instance pauses each host at its first answer at zero
// until the hour's reset: the 30th request's answer pauses its pair of
// instance and host, and each of the other 3 pairs meets at most one
// 429; the rest wait out their 60 s budget. Had the headers shown only
// each host's own quota (room for 100), a 429 would pause for the
// fallback's 1–5 s and every few seconds bring another.
func TestSharedQuotaPausesEveryHost(t *testing.T) {
	src := applyEdits(t, sharedHourly, []textEdit{
		{"[client.on_429]\npause = \"none\"\nhonor_retry_after = false", "request_timeout = \"60s\"\n\n[client.headers]\npause_at_zero = true"},
		{`retry_after = "reset"`, `retry_after = ""`}})
	r := runSource(t, src).Results
	if r.Requests.Succeeded != 30 || r.Requests.Throttled429 > 3 || r.Requests.TimedOut != 70-r.Requests.Throttled429 {
		t.Fatalf("succeeded %d, 429 %d, timed out %d; want 30, at most 3, the rest", r.Requests.Succeeded, r.Requests.Throttled429, r.Requests.TimedOut)
	}
	for _, u := range r.Upstreams {
		if u.Pauses == 0 {
			t.Fatalf("host %s never paused: the shared quota's zero did not reach its answers", u.Host)
		}
	}
}

// A workload.cost written where every path has its own cost has no
// effect, and says so; with a path that keeps it, it does not.
func TestWorkloadCostIdleUnderPathCosts(t *testing.T) {
	const warning = "workload.cost has no effect: every [[client.path]] has a cost of its own"
	for _, c := range []struct {
		src  string
		want bool
	}{
		{strings.Replace(pointsScenario, "rate = 100.0\n", "rate = 100.0\ncost = 3\n", 1), true},
		{pointsScenario, false}, // the default
		{strings.Replace(strings.Replace(pointsScenario, "rate = 100.0\n", "rate = 100.0\ncost = 3\n", 1), "cost = 5\n", "", 1), false},
	} {
		sc, err := Parse("scenario.toml", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range sc.Warnings {
			got = got || w.Text == warning
		}
		if got != c.want {
			t.Errorf("warned %v, want %v; warnings %v", got, c.want, sc.Warnings)
		}
	}
}

// TestRetryKeepsItsPathCost: a request refused by the host's own quota
// and retried takes, when admitted, the cost it drew at arrival from its
// path's distribution. Every request ends admitted exactly once, so what
// the shared quota took equals, exactly, the sum of the costs drawn at
// arrival; a retry that drew its cost again would take other costs.
func TestRetryKeepsItsPathCost(t *testing.T) {
	src := applyEdits(t, pointsScenario, []textEdit{
		{"requests = 20000", "requests = 2000"},
		{"rate = 100.0", "rate = 8.0"},
		{"cost = 5", "cost = { dist = \"uniform\", min = 2, max = 9 }"},
		{"latency = { dist = \"constant\", value = \"10ms\" }", "latency = { dist = \"constant\", value = \"10ms\" }\nquota = { kind = \"token_bucket\", rate = 5.0, burst = 1 }\nretry_after = \"\""},
		{"[[upstream]]", "[client.on_429]\npause = \"none\"\nhonor_retry_after = false\n\n[client.retry]\nattempts = 50\nbase = \"100ms\"\ncap = \"2s\"\n\n[[upstream]]"},
	})
	r := runSource(t, src).Results
	if r.Requests.Retries < 100 || r.Requests.Succeeded != r.Requests.Arrived {
		t.Fatalf("retries %d, succeeded %d of %d: want many retries and every request served", r.Requests.Retries, r.Requests.Succeeded, r.Requests.Arrived)
	}
	var drawn float64
	for _, u := range r.Upstreams {
		drawn += float64(u.Cost.Request.Count) * u.Cost.Request.Mean
	}
	if q := sharedStat(t, r, "points"); float64(q.Taken) != math.Round(drawn) || q.Admitted != r.Requests.Arrived {
		t.Fatalf("the shared quota took %d over %d admissions; the requests drew %v over %d", q.Taken, q.Admitted, drawn, r.Requests.Arrived)
	}
}
