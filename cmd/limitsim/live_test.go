package main

import (
	"encoding/json"
	"math"
	"testing"
)

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
			args := append([]string{"live", c.scenario, "--speed", "4", "--json", "--quiet"}, c.args...)
			code, out, errOut := cli(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got liveJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
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
