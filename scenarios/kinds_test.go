package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// base is a small scenario; each case appends or replaces sections.
const base = `
name = "k"
[run]
seed = 3
duration = "20s"
warmup = "2s"
[workload]
arrival = "poisson"
rate = 60.0
hosts = [{ name = "a" }, { name = "b" }]
[client]
request_timeout = "5s"
%s
[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "50ms", sigma = 0.5 }
quota = { kind = "token_bucket", rate = 100.0, burst = 20 }
%s
`

func parseCase(t *testing.T, client, extra string) *Scenario {
	t.Helper()
	sc, err := Parse("testdata/case.toml", []byte(fmt.Sprintf(base, client, extra)))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Every limiter kind runs through the pipeline, with the accounting exact.
func TestEveryLimiterKindRuns(t *testing.T) {
	kinds := map[string]string{
		"token_bucket":           `rate = 40.0` + "\nburst = 5\ninitial_fill = 0.2",
		"gcra":                   `rate = 40.0` + "\nburst = 5",
		"xrate":                  `rate = 40.0` + "\nburst = 5",
		"polling_bucket":         `rate = 40.0` + "\nburst = 5\nlag = \"1ms\"",
		"locked_bucket":          `rate = 40.0` + "\nburst = 5\nhandoff = \"1ms\"",
		"sliding_window":         `limit = 40` + "\nwindow = \"1s\"",
		"sliding_window_counter": `limit = 40` + "\nwindow = \"1s\"",
		"fixed_window":           `limit = 40` + "\nwindow = \"1s\"",
		"semaphore":              `permits = 3`,
	}
	for kind, params := range kinds {
		t.Run(kind, func(t *testing.T) {
			sc := parseCase(t, fmt.Sprintf("acquire_timeout = \"1s\"\n[[client.limiter]]\nname = \"l\"\nkind = %q\n%s", kind, params), "")
			out, err := simulate(sc)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Results
			checkAccounting(t, r)
			l := r.Limiters[0]
			if l.Acquired == 0 || l.PWait == 0 {
				t.Fatalf("limiter never bound: %+v", l)
			}
			// 60/s offered against a 40/s limit: about a third must fail
			// their 1 s acquisition timeout (semaphore: 3 / 57 ms ≈ 50/s).
			// x/time/rate refuses at once what it could not grant in time:
			// that is an acquisition timeout too, only known earlier.
			if r.Requests.AcquireTimeouts == 0 || r.Requests.RejectedLimiter != 0 || l.Timeouts != r.Requests.AcquireTimeouts {
				t.Fatalf("at 150%% load: %+v, limiter timeouts %d", r.Requests, l.Timeouts)
			}
			switch kind {
			case "semaphore":
			case "fixed_window":
				// 40 at every boundary at once: the upstream's burst of 20
				// per host answers part of each clump with 429.
				if r.Requests.Throttled429 == 0 {
					t.Fatalf("fixed window clumps did not trip the quota: %+v", r.Requests)
				}
			default:
				if g := r.Throughput.GoodputRPS; g < 30 || g > 45 {
					t.Fatalf("goodput %.1f/s for a 40/s limit", g)
				}
			}
		})
	}
}

func TestClientOptions(t *testing.T) {
	cases := []struct {
		name, client, extra string
		check               func(t *testing.T, o *client.Outcome)
	}{
		{"queue reject", "ingest = \"queue\"\nqueue_capacity = 5\nqueue_full = \"reject\"\nworkers = 2\n[[client.limiter]]\nname = \"s\"\nkind = \"semaphore\"\npermits = 1", "",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Requests.RejectedIngest == 0 || o.Results.Queue.MaxDepth != 5 {
					t.Fatalf("%+v %+v", o.Results.Requests, o.Results.Queue)
				}
			}},
		{"tasks max_waiting", "max_waiting = 10\n[[client.limiter]]\nname = \"s\"\nkind = \"semaphore\"\npermits = 1", "",
			func(t *testing.T, o *client.Outcome) {
				// An arrival that finds 10 waiting is refused before it
				// takes anything: at ingest, never at the limiter.
				q := o.Results.Requests
				if q.RejectedIngest == 0 || q.RejectedLimiter != 0 || o.Results.Limiters[0].MaxWaiting > 10 {
					t.Fatalf("%+v max waiting %d", q, o.Results.Limiters[0].MaxWaiting)
				}
			}},
		{"limiter max_waiting 0", "[[client.limiter]]\nname = \"s\"\nkind = \"polling_bucket\"\nrate = 10.0\nmax_waiting = 0", "",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Limiters[0].Rejected == 0 || o.Results.Limiters[0].MaxWaiting != 0 {
					t.Fatalf("%+v", o.Results.Limiters[0])
				}
			}},
		{"retry caller", "[client.on_429]\npause = \"caller\"\n[client.retry]\nattempts = 3", "retry_after = \"200ms\"",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Requests.Retries == 0 || o.Results.Upstreams[0].Pauses != 0 {
					t.Fatalf("%+v", o.Results.Requests)
				}
			}},
		{"retry none backoff", "[client.on_429]\npause = \"none\"\nhonor_retry_after = false\n[client.retry]\nattempts = 4\nbase = \"50ms\"\ncap = \"1s\"\njitter = \"decorrelated\"", "",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Requests.Retries == 0 {
					t.Fatalf("%+v", o.Results.Requests)
				}
			}},
		{"server workers and in-flight timeouts", "", "workers = 2",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Requests.TimedOut == 0 {
					t.Fatalf("%+v", o.Results.Requests)
				}
			}},
		{"pause checked at send", "[[client.limiter]]\nname = \"s\"\nkind = \"semaphore\"\npermits = 8\n[client.on_429]\npause_check = \"send\"\nresume_jitter = \"exponential(100ms)\"\n[client.retry]\nattempts = 2", "",
			func(t *testing.T, o *client.Outcome) {
				if o.Results.Upstreams[0].Pauses == 0 {
					t.Fatalf("%+v", o.Results.Upstreams[0])
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := parseCase(t, c.client, c.extra)
			sc.Workload.Rate = 300 // 150/s per host, above each host's 100/s quota
			if c.extra == "workers = 2" {
				sc.Client.RequestTimeout = Duration(100 * time.Millisecond)
			}
			out, err := simulate(sc)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, out.Results)
			c.check(t, out)
		})
	}
}

func TestArrivalProcesses(t *testing.T) {
	for name, wl := range map[string]string{
		"constant": `arrival = "constant"` + "\nrate = 10.0",
		"onoff":    `arrival = "onoff"` + "\nrate = 50.0\non = \"1s\"\noff = \"3s\"",
		"ramp":     `arrival = "ramp"` + "\nrate = 10.0\nrate_to = 50.0",
		"trace":    `arrival = "trace"` + "\ntrace = \"trace.csv\"",
	} {
		t.Run(name, func(t *testing.T) {
			src := fmt.Sprintf("name = \"a\"\n[run]\nduration = \"20s\"\n[workload]\n%s\n[client]\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"empirical\", samples = \"samples.csv\" }\n", wl)
			r := parseRun(t, "testdata/a.toml", src).Results
			checkAccounting(t, r)
			want := map[string][2]int64{"constant": {199, 200}, "onoff": {150, 350}, "ramp": {450, 750}, "trace": {7, 7}}[name]
			if r.Requests.Arrived < want[0] || r.Requests.Arrived > want[1] {
				t.Fatalf("%d arrivals, want %v", r.Requests.Arrived, want)
			}
			if lat := r.Upstreams[0].LatencyS; lat.Max > 0.0501 || lat.P50 < 0.0099 {
				t.Fatalf("empirical samples latency %+v", lat)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	sc := parseCase(t, "[[client.limiter]]\nname = \"conns\"\nkind = \"semaphore\"\npermits = 4\n[[client.limiter]]\nname = \"rate\"\nkind = \"token_bucket\"\nrate = 10.0", "")
	if len(sc.Warnings) != 1 || sc.Warnings[0].Code != metrics.AcquireOrder || !strings.Contains(sc.Warnings[0].Text, "before rate limiter rate") {
		t.Fatalf("warnings %q", sc.Warnings)
	}
}

// A request whose deadline fires at the instant its parked acquisition is
// granted ends as timed out, and gives the permit back.
func TestDeadlineRacingGrant(t *testing.T) {
	src := `name = "race"
[run]
requests = 3
interval = "50ms"
[workload]
arrival = "backlog"
[client]
request_timeout = "100ms"
[[client.limiter]]
name = "s"
kind = "semaphore"
permits = 1
[[upstream]]
host = "*"
latency = { dist = "constant", value = "100ms" }
`
	out := parseRun(t, "race.toml", src)
	r := out.Results
	checkAccounting(t, r)
	// A holds the permit and times out in flight at 100 ms, which grants B
	// at 100 ms, the instant B's own deadline fires: B times out too, and
	// so does C, still parked.
	if r.Requests.TimedOut != 3 || r.Requests.Succeeded != 0 || r.Limiters[0].Acquired != 2 {
		t.Fatalf("%+v, acquisitions %d", r.Requests, r.Limiters[0].Acquired)
	}
	// B gave its permit back: the semaphore is idle in the last interval.
	if u := col(t, out.Series, "s.usage"); len(u) == 0 || u[len(u)-1] != 0 {
		t.Fatalf("semaphore usage at the end %v: a permit leaked", u)
	}
}

// parseRun loads scenario text and runs it.
func parseRun(t *testing.T, file, src string) *client.Outcome {
	t.Helper()
	sc, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
