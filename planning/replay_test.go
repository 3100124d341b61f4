package planning

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// genT0 is the generated log's first instant: a whole second, so that the
// replay's instant 0 (the first record's) starts a quota window as it
// did in production.
var genT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// generatedLog is what the generator wrote and knows.
type generatedLog struct {
	path     string
	arrivals []time.Duration // since genT0
	refused  int             // the quota's 429s
}

// generateLog writes a JSON-lines log of n Poisson arrivals at rate per
// second with millisecond timestamps, answered by a fixed-window quota of
// limit per second (windows from genT0) with 429 in 1 ms, or else 200
// after a lognormal latency (median 200 ms, σ 0.5). It is independent of
// the simulator: its own random numbers, its own quota.
func generateLog(t *testing.T, n int, rate float64, limit int) generatedLog {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	g := generatedLog{path: filepath.Join(t.TempDir(), "access.jsonl")}
	var b strings.Builder
	at := time.Duration(0)
	window, used := int64(-1), 0
	for i := range n {
		if i > 0 {
			at += time.Duration(rng.ExpFloat64() / rate * 1e9).Truncate(time.Millisecond)
		}
		g.arrivals = append(g.arrivals, at)
		if w := int64(at / time.Second); w != window {
			window, used = w, 0
		}
		status, latency := 200, time.Duration(math.Exp(math.Log(0.2)+0.5*rng.NormFloat64())*1e9).Round(time.Millisecond)
		if used < limit {
			used++
		} else {
			status, latency = 429, time.Millisecond
			g.refused++
		}
		fmt.Fprintf(&b, `{"time":%d,"status":%d,"request_time":%.3f,"key":"k%d"}`+"\n",
			genT0.Add(at).UnixMilli(), status, latency.Seconds(), i%3)
	}
	if err := os.WriteFile(g.path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return g
}

// replayScenario is a scenario whose upstream enforces the generator's
// quota, with the client limiter limiter (a TOML block, or "").
func replayScenario(t testing.TB, limit int, limiter string) *client.Config {
	t.Helper()
	text := fmt.Sprintf(`name = "replayed"
[run]
seed = 3
duration = "10s"
[workload]
rate = 1.0
%s
[[upstream]]
host = "*"
latency = { dist = "lognormal", median = "200ms", sigma = 0.5 }
quota = { kind = "fixed_window", limit = %d, window = "1s" }
`, limiter, limit)
	return buildScenario(t, "replayed.toml", text)
}

// buildScenario parses and builds a scenario's text, failing t if either
// fails.
func buildScenario(t testing.TB, file, text string) *client.Config {
	t.Helper()
	sc, err := scenarios.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bucketDelays is a token bucket of rate per second (a whole number of
// nanoseconds between tokens) and burst, full at 0, computed directly in
// integer nanoseconds of credit: the delay of each arrival through it,
// first come first served.
func bucketDelays(arrivals []time.Duration, rate, burst int64) []time.Duration {
	interval := time.Second / time.Duration(rate)
	capacity := time.Duration(burst) * interval
	level, last, granted := capacity, time.Duration(0), time.Duration(0)
	out := make([]time.Duration, len(arrivals))
	for i, a := range arrivals {
		g := max(a, granted)
		level = min(capacity, level+g-last)
		if level < interval {
			g += interval - level
			level = interval
		}
		level -= interval
		last, granted = g, g
		out[i] = g - a
	}
	return out
}

var jsonLog = logs.Options{Mapping: logs.Mapping{Tenant: "key"}}

// A candidate that paces below the quota (40/s with bursts of 5 against
// 45 a second) draws no 429, and delays each arrival exactly as a token
// bucket computed directly on the same arrivals does: the mean and the
// largest to the nanosecond, the count delayed, each minute's, and the
// quantiles within the sketch's 1%.
func TestReplayPacedBelowTheQuota(t *testing.T) {
	const limit = 45
	g := generateLog(t, 5000, 42, limit)
	if g.refused == 0 {
		t.Fatal("the generated production saw no 429: the test would prove nothing")
	}
	want := bucketDelays(g.arrivals, 40, 5)
	for _, kind := range []string{"gcra", "token_bucket"} {
		t.Run(kind, func(t *testing.T) {
			cfg := replayScenario(t, limit, fmt.Sprintf("[[client.limiter]]\nname = \"pace\"\nkind = %q\nrate = 40.0\nburst = 5\n", kind))
			out, c, err := Replay(cfg, ReplayLog{Path: g.path, Options: jsonLog}, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer out.Series.Close()
			tot := c.Total
			if tot.Refusals != 0 || tot.Throttled != 0 || tot.Succeeded != int64(len(g.arrivals)) {
				t.Errorf("upstream refusals %d, throttled %d, succeeded %d of %d", tot.Refusals, tot.Throttled, tot.Succeeded, len(g.arrivals))
			}
			if tot.Requests != int64(len(g.arrivals)) || tot.ProductionThrottled != int64(g.refused) || tot.Avoided != int64(g.refused) {
				t.Errorf("production %d requests, %d refused, avoided %d; want %d, %d, %d", tot.Requests, tot.ProductionThrottled, tot.Avoided, len(g.arrivals), g.refused, g.refused)
			}
			checkDelays(t, "total", tot.Delayed, tot.DelayMeanS, tot.DelayMaxS, tot.DelayP50S, tot.DelayP99S, want)
			for _, m := range c.Minutes {
				at, _ := time.Parse(time.RFC3339, m.Minute)
				var in []time.Duration
				for i, a := range g.arrivals {
					if genT0.Add(a).Truncate(time.Minute).Equal(at) {
						in = append(in, want[i])
					}
				}
				if m.Requests != int64(len(in)) {
					t.Errorf("minute %s: %d requests, want %d", m.Minute, m.Requests, len(in))
				}
				checkDelays(t, "minute "+m.Minute, m.Delayed, m.DelayMeanS, m.DelayMaxS, m.DelayP50S, m.DelayP99S, in)
			}
		})
	}
}

// checkDelays holds a row's delay figures against the delays computed.
func checkDelays(t *testing.T, row string, delayed int64, mean, largest, p50, p99 float64, want []time.Duration) {
	t.Helper()
	var n int64
	var sum, top time.Duration
	for _, d := range want {
		if d > 0 {
			n++
		}
		sum += d
		top = max(top, d)
	}
	sorted := slices.Sorted(slices.Values(want))
	rank := func(q float64) float64 { return sorted[int(math.Ceil(q*float64(len(sorted))))-1].Seconds() }
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.01*want+2e-6 }
	if delayed != n || mean != sum.Seconds()/float64(len(want)) || largest != top.Seconds() {
		t.Errorf("%s: delayed %d, mean %v, max %v; want %d, %v, %v", row, delayed, mean, largest, n, sum.Seconds()/float64(len(want)), top.Seconds())
	}
	if !near(p50, rank(0.5)) || !near(p99, rank(0.99)) {
		t.Errorf("%s: delay p50 %v, p99 %v; want %v, %v within 1%%", row, p50, p99, rank(0.5), rank(0.99))
	}
}

// Through no client limiter, and no pause after a 429, the replay sends
// each arrival when it came,
// and the scenario's quota, the generator's, refuses exactly the requests
// production's did.
func TestReplayWithoutALimiterReproducesProduction(t *testing.T) {
	const limit = 45
	g := generateLog(t, 5000, 42, limit)
	out, c, err := Replay(replayScenario(t, limit, "[client.on_429]\npause = \"none\"\n"), ReplayLog{Path: g.path, Options: jsonLog}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	tot := c.Total
	if tot.Refusals != int64(g.refused) || tot.Throttled != int64(g.refused) || tot.Delayed != 0 || tot.Avoided != 0 {
		t.Errorf("replay refused %d, throttled %d, delayed %d, avoided %d; production refused %d", tot.Refusals, tot.Throttled, tot.Delayed, tot.Avoided, g.refused)
	}
	for _, m := range c.Minutes {
		if m.Refusals != m.ProductionThrottled {
			t.Errorf("minute %s: replay refused %d, production %d", m.Minute, m.Refusals, m.ProductionThrottled)
		}
	}
	if len(c.Tenants) != 3 || c.Tenants[0].Tenant != "k0" || c.Tenants[0].Requests != 1667 {
		t.Errorf("tenants %+v", c.Tenants)
	}
}

// spreadArrivals replays a CLF log of n records in one second through
// the feed alone and returns their instants.
func spreadArrivals(t *testing.T, n int, seed uint64) []time.Duration {
	t.Helper()
	var b strings.Builder
	for range n {
		b.WriteString(`1.2.3.4 - - [01/Mar/2026:12:00:07 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.100` + "\n")
	}
	b.WriteString(`1.2.3.4 - - [01/Mar/2026:12:00:09 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.100` + "\n")
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	log := ReplayLog{Path: path}
	sv, err := survey(log)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	rd, _ := logs.NewReader(f, path, logs.Options{})
	feed := &recordFeed{reader: rd, survey: sv, tally: newTally(sv.origin, nil), spread: newSpreader(seed)}
	var out []time.Duration
	for {
		a, ok := feed.Next()
		if !ok {
			break
		}
		out = append(out, a.At)
	}
	return out
}

// Times logged to the second are spread within their second, in order,
// the same for the same seed and otherwise for another.
func TestSecondsAreSpreadFromTheSeed(t *testing.T) {
	const n = 200
	a, b, c := spreadArrivals(t, n, 1), spreadArrivals(t, n, 1), spreadArrivals(t, n, 2)
	if len(a) != n+1 || !slices.IsSorted(a) {
		t.Fatalf("%d arrivals, sorted %v", len(a), slices.IsSorted(a))
	}
	if a[0] < 0 || a[n-1] >= time.Second || a[n] < 2*time.Second || a[n] >= 3*time.Second {
		t.Errorf("arrivals from %v to %v, the last at %v: not within their seconds", a[0], a[n-1], a[n])
	}
	// Uniform in the second: the mean of 200 is near 500 ms (σ ≈ 20 ms).
	var sum time.Duration
	for _, x := range a[:n] {
		sum += x
	}
	if mean := sum / n; mean < 400*time.Millisecond || mean > 600*time.Millisecond {
		t.Errorf("mean instant %v, want about 500ms", mean)
	}
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("the spread is not a function of the seed")
	}
}

// The least rate-limit remaining header production logged is reported
// per minute and over the log.
func TestReplayRemainingHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	t0 := genT0.UnixMilli()
	text := fmt.Sprintf("{\"time\":%d,\"rem\":7}\n{\"time\":%d,\"rem\":3}\n{\"time\":%d}\n{\"time\":%d,\"rem\":5}\n", t0, t0+10, t0+20, t0+60_000)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, c, err := Replay(replayScenario(t, 100, ""), ReplayLog{Path: path, Options: logs.Options{Mapping: logs.Mapping{Remaining: "rem"}}}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	least := func(r *int64) int64 {
		if r == nil {
			return -1
		}
		return *r
	}
	if got := []int64{least(c.Total.ProductionRemainingMin), least(c.Minutes[0].ProductionRemainingMin), least(c.Minutes[1].ProductionRemainingMin)}; !slices.Equal(got, []int64{3, 3, 5}) {
		t.Errorf("least remaining %v, want [3 3 5]", got)
	}
}

// A record whose cost the log does not give takes the cost the scenario
// gives its path; a logged cost replaces it. Against a quota shared by
// every host ([[quota]]) of 100 units a second, 40 requests a second on a
// path of cost 5 see half of each second's refused; logged at cost 1,
// none.
func TestReplayCostFromPathUnlessLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	var b strings.Builder
	for i := range 80 {
		fmt.Fprintf(&b, "{\"time\":%d,\"status\":200,\"request_time\":0.010,\"tokens\":1}\n", genT0.UnixMilli()+int64(i)*25)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := buildScenario(t, "cost.toml", `name = "cost"
[run]
seed = 3
duration = "10s"
[workload]
rate = 1.0
[client.on_429]
pause = "none"
[[client.path]]
name = "write"
limiters = []
cost = 5
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
[[quota]]
name = "all"
kind = "fixed_window"
limit = 100
window = "1s"
unit = "cost"
`)
	for _, tc := range []struct {
		cost    string
		refused int64
	}{{"", 40}, {"tokens", 0}} {
		out, c, err := Replay(cfg, ReplayLog{Path: path, Options: logs.Options{Mapping: logs.Mapping{Cost: tc.cost}}}, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out.Series.Close()
		if c.Total.Requests != 80 || c.Total.Refusals != tc.refused || c.Total.Succeeded != 80-tc.refused {
			t.Errorf("cost field %q: %d requests, %d refused, %d succeeded; want 80, %d, %d", tc.cost, c.Total.Requests, c.Total.Refusals, c.Total.Succeeded, tc.refused, 80-tc.refused)
		}
	}
}

// A log host the scenario of several hosts does not have is refused,
// naming the log's file and the host's first line, not just the host.
func TestReplayUnknownHostNamesItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts.jsonl")
	t0 := genT0.UnixMilli()
	text := fmt.Sprintf("{\"time\":%d,\"host\":\"a\"}\n{\"time\":%d,\"host\":\"a\"}\n{\"time\":%d,\"host\":\"api.example.com\"}\n", t0, t0+10, t0+20)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := buildScenario(t, "two.toml", `name = "two"
[run]
duration = "10s"
[workload]
rate = 1.0
hosts = [{ name = "a", weight = 1 }, { name = "b", weight = 1 }]
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
`)
	_, _, err := Replay(cfg, ReplayLog{Path: path, Options: logs.Options{Mapping: logs.Mapping{Host: "host"}}}, client.Options{})
	if want := path + `:3: the log names host "api.example.com"`; err == nil || !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want ErrReplay saying %q", err, want)
	}
}
