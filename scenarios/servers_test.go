package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

const tokenQuota = `quota = { kind = "token_bucket", rate = 100.0, burst = 100 }`

// serverQuotaBadCases are the server quota kinds' and the statuses' bad
// inputs: each names the file, the line and the key.
var serverQuotaBadCases = []badCase{
	{name: "nginx rate as a float", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = 50.5 }`}},
		key: "upstream[0].quota.rate", at: "nginx_limit_req", want: []string{"whole number", "50r/s"}},
	{name: "nginx rate in another unit", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = "50r/h" }`}},
		key: "upstream[0].quota.rate", at: "nginx_limit_req", want: []string{`"50r/h" is not a rate as nginx writes it`}},
	{name: "nginx rate of zero", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = "0r/m" }`}},
		key: "upstream[0].quota.rate", at: "nginx_limit_req", want: []string{"from 1 to", "per minute"}},
	{name: "nginx limit_req without rate", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", burst = 5 }`}},
		key: "upstream[0].quota.rate", at: "nginx_limit_req", want: []string{"is required"}},
	{name: "nginx burst as a float", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = "50r/s", burst = 2.5 }`}},
		key: "upstream[0].quota.burst", at: "nginx_limit_req", want: []string{"must be an integer"}},
	{name: "nginx nodelay and delay", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = "50r/s", burst = 20, nodelay = true, delay = 5 }`}},
		key: "upstream[0].quota.delay", at: "nginx_limit_req", want: []string{"keep one of them"}},
	{name: "nginx nodelay not a boolean", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_req", rate = "50r/s", nodelay = "yes" }`}},
		key: "upstream[0].quota.nodelay", at: "nginx_limit_req", want: []string{"true or false"}},
	{name: "nginx limit_conn with permits", edits: []textEdit{{tokenQuota, `quota = { kind = "nginx_limit_conn", permits = 5 }`}},
		key: "upstream[0].quota.permits", at: "nginx_limit_conn", want: []string{"unknown key"}},
	{name: "envoy without fill_interval", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_local_rate_limit", max_tokens = 10 }`}},
		key: "upstream[0].quota.fill_interval", at: "envoy_local_rate_limit", want: []string{"is required"}},
	{name: "envoy tokens_per_fill of zero", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_local_rate_limit", max_tokens = 10, tokens_per_fill = 0, fill_interval = "1s" }`}},
		key: "upstream[0].quota.tokens_per_fill", at: "envoy_local_rate_limit", want: []string{"at least 1"}},
	{name: "envoy misspelt key", edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_local_rate_limit", max_token = 10, fill_interval = "1s" }`}},
		key: "upstream[0].quota.max_token", at: "envoy_local_rate_limit", want: []string{"did you mean max_tokens?"}},
	{name: "quota status not a limit status", edits: []textEdit{{tokenQuota, `quota = { kind = "token_bucket", rate = 100.0, burst = 100, status = 500 }`}},
		key: "upstream[0].quota.status", at: "status = 500", want: []string{"500 is not a status", "429, 503 or 403"}},
	{name: "on_limit status not a limit status", edits: []textEdit{{"[client.retry]", "[client.on_limit]\nstatuses = [429, 500]\n\n[client.retry]"}},
		key: "client.on_limit.statuses[1]", at: "statuses", want: []string{"must be 429, 503 or 403"}},
	{name: "on_limit status twice", edits: []textEdit{{"[client.retry]", "[client.on_limit]\nstatuses = [503, 503]\n\n[client.retry]"}},
		key: "client.on_limit.statuses[1]", at: "statuses", want: []string{"listed twice"}},
	{name: "on_limit statuses empty", edits: []textEdit{{"[client.retry]", "[client.on_limit]\nstatuses = []\n\n[client.retry]"}},
		key: "client.on_limit.statuses", at: "statuses", want: []string{"non-empty array"}},
	{name: "on_limit unknown key", edits: []textEdit{{"[client.retry]", "[client.on_limit]\nstatus = [503]\n\n[client.retry]"}},
		key: "client.on_limit.status", at: "status = [503]", want: []string{"did you mean statuses?"}},
}

func TestParseServerQuotaBadInputs(t *testing.T) {
	for _, c := range serverQuotaBadCases {
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

// The server quotas decode to their fields (nginx's rate per second and
// the unit it was written in, the defaults), a status equal to the kind's
// default is left out, and on_limit.statuses reaches the client; a
// resolved scenario writes them back as they load.
func TestServerQuotasDecode(t *testing.T) {
	for _, c := range []struct {
		quota, client string
		want          upstream.Quota
		statuses      []int
	}{
		{quota: `{ kind = "nginx_limit_req", rate = "600r/m" }`,
			want: upstream.Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 10, Per: time.Minute}},
		{quota: `{ kind = "nginx_limit_req", rate = 50, burst = 20, delay = 8, status = 429 }`,
			want: upstream.Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 20, Delay: 8, Status: 429}},
		{quota: `{ kind = "nginx_limit_req", rate = "50r/s", burst = 20, nodelay = true, status = 503 }`,
			want: upstream.Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 20, NoDelay: true}},
		{quota: `{ kind = "nginx_limit_conn", conn = 10, status = 403 }`, client: "statuses = [403, 429]",
			want: upstream.Quota{Kind: kindname.QuotaNginxLimitConn, Permits: 10, Status: 403}, statuses: []int{403, 429}},
		{quota: `{ kind = "envoy_local_rate_limit", max_tokens = 10, tokens_per_fill = 5, fill_interval = "1s" }`, client: "statuses = [429]",
			want: upstream.Quota{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 10, TokensPerFill: 5, FillInterval: time.Second}},
		{quota: `{ kind = "envoy_local_rate_limit", max_tokens = 10, fill_interval = "250ms", status = 503 }`,
			want: upstream.Quota{Kind: kindname.QuotaEnvoyLocal, MaxTokens: 10, TokensPerFill: 1, FillInterval: 250 * time.Millisecond, Status: 503}},
	} {
		edits := []textEdit{{tokenQuota, "quota = " + c.quota}}
		if c.client != "" {
			edits = append(edits, textEdit{"[client.retry]", "[client.on_limit]\n" + c.client + "\n\n[client.retry]"})
		}
		src := applyEdits(t, minimalScenario, edits)
		sc, err := Parse("t.toml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.quota, err)
		}
		got := upstream.Quota(sc.Upstreams[0].Quota[0])
		if got.Kind != c.want.Kind || got.Rate != c.want.Rate || got.Per != c.want.Per || got.Burst != c.want.Burst ||
			got.Delay != c.want.Delay || got.NoDelay != c.want.NoDelay || got.Permits != c.want.Permits || got.Status != c.want.Status ||
			got.MaxTokens != c.want.MaxTokens || got.TokensPerFill != c.want.TokensPerFill || got.FillInterval != c.want.FillInterval {
			t.Errorf("%s decodes as %+v, want %+v", c.quota, got, c.want)
		}
		cfg, err := sc.Build()
		if err != nil {
			t.Fatalf("%s: %v", c.quota, err)
		}
		if s := cfg.On429.Statuses; len(s) != len(c.statuses) || (len(s) > 0 && s[0] != c.statuses[0]) {
			t.Errorf("%s: client statuses %v, want %v", c.client, s, c.statuses)
		}
		text, err := Quota(got).MarshalTOML()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("t.toml", []byte(applyEdits(t, minimalScenario, []textEdit{{tokenQuota, "quota = " + string(text)}})))
		if err != nil || !reflect.DeepEqual(upstream.Quota(again.Upstreams[0].Quota[0]), got) {
			t.Errorf("%s written as %s loads as %+v (%v)", c.quota, text, again.Upstreams[0].Quota[0], err)
		}
	}
}

// onLimitScenario offers 10 requests a second, one every 100 ms, to an
// nginx limit_req of 5r/s without burst that refuses with status: it
// admits every other request (the one 200 ms after the last admission
// finds excess 0; the one between, 500 > 0). client.on_limit.statuses
// is statuses ("" for the default).
func onLimitScenario(status, statuses string) string {
	src := `name = "on-limit"
[run]
duration = "10s"
[workload]
arrival = "constant"
rate = 10.0
[client]
request_timeout = "10s"
[client.on_429]
pause = "none"
[client.retry]
attempts = 2
backoff = "constant"
base = "50ms"
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
quota = { kind = "nginx_limit_req", rate = "5r/s", nodelay = true` + status + ` }
retry_after = ""
reject_latency = "0s"
`
	if statuses != "" {
		src += "[client.on_limit]\nstatuses = " + statuses + "\n"
	}
	return src
}

// A refusal whose status the client lists is a 429 to it (retried,
// counted as throttled); one it does not list is a failure: the request
// ends with it, unretried, counted in failed and responses_failed, and
// the 429 counts stay at zero.
func TestOnLimitStatuses(t *testing.T) {
	for _, c := range []struct {
		name, status, statuses string
		throttles              bool
	}{
		{name: "503 by default, not listed", status: "", statuses: ""},
		{name: "503 listed", status: "", statuses: "[429, 503]", throttles: true},
		{name: "429 by default", status: ", status = 429", statuses: "", throttles: true},
		{name: "403 not listed", status: ", status = 403", statuses: "[429, 503]"},
		{name: "403 listed", status: ", status = 403", statuses: "[403]", throttles: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := parseRun(t, "t.toml", onLimitScenario(c.status, c.statuses)).Results
			checkAccounting(t, r)
			q, u := r.Requests, r.Upstreams[0]
			if c.throttles {
				// The retry 50 ms later finds 0 − 750 + 1000 = 250 > 0: every
				// refused request is refused twice and ends throttled.
				if q.Failed != 0 || q.ResponsesFailed != 0 || u.Failed != 0 || q.Retries != q.Throttled429 ||
					q.Responses429 != 2*q.Throttled429 || q.Succeeded+q.Throttled429 != q.Arrived {
					t.Fatalf("listed: %+v, upstream failed %d", q, u.Failed)
				}
			} else if q.Throttled429 != 0 || q.Responses429 != 0 || q.Retries != 0 || u.Throttled != 0 ||
				q.Failed != q.ResponsesFailed || u.Failed != q.Failed || q.Succeeded+q.Failed != q.Arrived {
				t.Fatalf("not listed: %+v, upstream throttled %d, failed %d", q, u.Throttled, u.Failed)
			}
			if q.Arrived != 99 || q.Succeeded != 50 { // arrivals at 0.1 s … 9.9 s
				t.Errorf("%d admitted of %d, want every other one: 50 of 99", q.Succeeded, q.Arrived)
			}
		})
	}
}

// refused_counts = "all" with a server quota that never counts a refusal
// names the key and its line.
func TestRefusedCountsAllWithServerQuota(t *testing.T) {
	c := badCase{edits: []textEdit{{tokenQuota, `quota = { kind = "envoy_local_rate_limit", max_tokens = 10, fill_interval = "1s" }` + "\nrefused_counts = \"all\""}},
		key: "upstream[0].refused_counts", at: "refused_counts", want: []string{"envoy_local_rate_limit never does"}}
	src := applyEdits(t, minimalScenario, c.edits)
	_, err := Parse(badFile, []byte(src))
	if fails := checkProblem(t, err, c.key, lineContaining(t, src, c.at), c.want, nil); len(fails) > 0 {
		t.Error(strings.Join(fails, "\n"))
	}
}
