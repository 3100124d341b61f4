package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run its duration cut ends there, and its series reaches it: a run of
// 200 s whose arrivals stopped early (one every 20 s on average) had 193
// rows, and one with no arrival a single row, so its time charts were
// left out as shorter than two intervals.
func TestSeriesReachesTheRunsEnd(t *testing.T) {
	for _, c := range []struct {
		rate, duration string
		rows           int
	}{{"0.05", "200s", 200}, {"0.0001", "20s", 20}} {
		dir := filepath.Join(t.TempDir(), "out")
		duration := c.duration
		code, _, errOut := cli("run", "token-bucket", "--quiet", "--set", "workload.rate="+c.rate, "--set", "run.duration="+duration, "-o", dir)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		data, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		last := strings.SplitN(lines[len(lines)-1], ",", 2)[0]
		if len(lines)-1 != c.rows || last != strings.TrimSuffix(duration, "s") {
			t.Errorf("rate %s: %d rows, the last at %s s; want %d to %s", c.rate, len(lines)-1, last, c.rows, duration)
		}
	}
}
