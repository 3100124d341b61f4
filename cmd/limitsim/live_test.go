package main

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// liveRun runs `limitsim live ARGS --json --quiet` and reads its output.
func liveRun(t *testing.T, args ...string) liveJSON {
	t.Helper()
	code, out, errOut := cli(append(append([]string{"live"}, args...), "--json", "--quiet")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got liveJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// A short live run — real HTTP to a loopback server, the client on the
// wall clock, four times as fast — agrees with the simulation of the same
// scenario: goodput and the 429 rate within 10%, on the healthy crawler
// (no 429s in either) and on the sustained-429 failure (a 130/s bucket
// against a 100/s quota: about 23% answered 429).
func TestLiveAgreesWithSimulation(t *testing.T) {
	for _, c := range []struct {
		scenario string
		args     []string
	}{
		{"seed-crawler", nil},
		{"fail-sustained-429", []string{"--duration", "40s"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			t.Parallel()
			got := liveRun(t, append([]string{c.scenario, "--speed", "4"}, c.args...)...)
			s, l := got.Simulated, got.Live
			if l.Requests.Attempts == 0 || got.WallS < 5 {
				t.Fatalf("live run made %d attempts in %.1f s of wall time: it did not run in real time", l.Requests.Attempts, got.WallS)
			}
			if g := l.Throughput.GoodputRPS; math.Abs(g-s.Throughput.GoodputRPS) > 0.1*s.Throughput.GoodputRPS {
				t.Errorf("goodput live %.2f/s, simulated %.2f/s: more than 10%% apart", g, s.Throughput.GoodputRPS)
			}
			switch {
			case s.Rate429 < 0.01:
				if l.Rate429 >= 0.01 {
					t.Errorf("429 rate live %.4f, simulated %.4f", l.Rate429, s.Rate429)
				}
			case math.Abs(l.Rate429-s.Rate429) > 0.1*s.Rate429:
				t.Errorf("429 rate live %.4f, simulated %.4f: more than 10%% apart", l.Rate429, s.Rate429)
			}
			if c.scenario == "fail-sustained-429" && s.Rate429 < 0.15 {
				t.Errorf("simulated 429 rate %.3f: the scenario should be well past its quota", s.Rate429)
			}
		})
	}
}

// A cluster limiter runs live against a real Redis through
// go-redis/redis_rate (a redis-server started for the run): four instances
// sharing 90/s, one taking 70% of the traffic, reach the same goodput as
// the simulated store. Set LIMITSIM_REDIS_TEST=1 to run it (CI does, after
// installing redis-server).
func TestLiveClusterLimitInRedis(t *testing.T) {
	if os.Getenv("LIMITSIM_REDIS_TEST") == "" {
		t.Skip("set LIMITSIM_REDIS_TEST=1 to run a cluster limiter against redis-server")
	}
	got := liveRun(t, "cluster-shared-limit", "--speed", "4", "--duration", "30s")
	s, l := got.Simulated, got.Live
	if g := l.Throughput.GoodputRPS; math.Abs(g-s.Throughput.GoodputRPS) > 0.1*s.Throughput.GoodputRPS || g > 95 {
		t.Errorf("goodput live %.2f/s, simulated %.2f/s: want within 10%% and the 90/s limit held", g, s.Throughput.GoodputRPS)
	}
	if st := l.Limiters[0].Store; st == nil || st.Calls < int64(l.Requests.Succeeded) || st.Failed != 0 {
		t.Errorf("redis calls %+v for %d successes: every grant is a call, none failing", st, l.Requests.Succeeded)
	}
}

// --redis on a scenario without a cluster limiter is said to do nothing,
// and the run goes on without calling it (the address is unreachable).
func TestLiveRedisWithoutClusterLimiterWarns(t *testing.T) {
	code, _, errOut := cli("live", "token-bucket", "--redis", "127.0.0.1:1", "--duration", "12s", "--set", "run.warmup=1s", "--speed", "100", "--quiet", "--json")
	if code != exitOK || !strings.Contains(errOut, `warning: --redis has no effect: token-bucket has no limiter with scope = "cluster"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
