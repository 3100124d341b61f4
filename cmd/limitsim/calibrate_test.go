package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/scenarios"
)

// writeWindowLog writes a CSV log of four minutes of Poisson arrivals at
// rate per second, lognormal latencies of median 80 ms, behind a server
// that admits limit a minute (epoch-aligned windows) and answers 429
// after; it returns the log's path.
func writeWindowLog(t *testing.T, rate float64, limit int) string {
	t.Helper()
	return quotaLog{start: time.Date(2026, 5, 4, 9, 0, 30, 0, time.UTC), span: 240, window: 60, limit: limit, median: 0.08,
		rate: func(float64) float64 { return rate }, seed1: 3, seed2: 5}.write(t, "access.csv")
}

// The calibrated scenario loads and plans; the verdict is the exit code.
func TestCalibrateWritesAScenarioThatPlans(t *testing.T) {
	path := writeWindowLog(t, 30, 1500)
	dir := filepath.Join(t.TempDir(), "calibrated")
	code, out, errOut := cli("calibrate", path, "-o", dir, "--log-time-format", "unix")
	if code != exitOK {
		t.Fatalf("calibrate exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"fixed_window 1500/1m0s", "trusted for planning"} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate printed no %q:\n%s", want, out)
		}
	}
	text, err := os.ReadFile(filepath.Join(dir, calibrationTextFile))
	if err != nil || string(text) != out {
		t.Errorf("%s differs from what was printed (%v)", calibrationTextFile, err)
	}
	var c planning.Calibration
	data, err := os.ReadFile(filepath.Join(dir, calibrationJSONFile))
	if err != nil || json.Unmarshal(data, &c) != nil || !c.Trusted || c.Hosts[0].Quota.Limit != 1500 {
		t.Fatalf("%s: %v, %+v", calibrationJSONFile, err, c)
	}
	scenarioPath := filepath.Join(dir, calibratedScenarioFile)
	sc, err := scenarios.Load(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Build(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli("plan", scenarioPath, "--sweep", "workload.rate=20,40", "--constraint", "rate_429<0.01",
		"--set", "run.duration=2m", "--quiet")
	if code != exitOK {
		t.Fatalf("plan on the calibrated scenario: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "workload.rate") {
		t.Errorf("plan printed no sweep of workload.rate:\n%s", out)
	}
}

// A threshold the model cannot meet is the verdict "not trusted" and its
// own exit code; a threshold that is no percentage is bad input.
func TestCalibrateExitCodes(t *testing.T) {
	path := writeWindowLog(t, 30, 1500)
	dir := t.TempDir()
	code, _, errOut := cli("calibrate", path, "--log-time-format", "unix", "--threshold", "0.001", "-o", dir)
	if code != exitUntrusted || !strings.Contains(errOut, "not trusted for planning") {
		t.Errorf("threshold 0.001%%: exit %d, want %d\n%s", code, exitUntrusted, errOut)
	}
	for _, name := range []string{calibratedScenarioFile, calibrationTextFile, calibrationJSONFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("not trusted, and %s not written: %v", name, err)
		}
	}
	// A percentage may carry its sign, as compare's --threshold does; it
	// is the same threshold as the bare number.
	for _, threshold := range []string{"0.001%", "50", "50%"} {
		want := map[bool]int{true: exitUntrusted, false: exitOK}[strings.HasPrefix(threshold, "0.001")]
		if code, out, errOut := cli("calibrate", path, "--log-time-format", "unix", "--threshold", threshold, "--json"); code != want ||
			!strings.Contains(out, `"threshold": `+map[int]string{exitOK: "0.5,", exitUntrusted: "0.00001,"}[want]) {
			t.Errorf("--threshold %s: exit %d, want %d\n%s", threshold, code, want, errOut)
		}
	}
	for _, bad := range [][]string{{"--threshold", "0"}, {"--threshold", "NaN"}, {"--threshold", "ten%"}, {"--log-format", "xml"}} {
		if code, _, errOut := cli(append([]string{"calibrate", path}, bad...)...); code == exitOK || code == exitUntrusted {
			t.Errorf("%v: exit %d, want a refusal\n%s", bad, code, errOut)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(empty, []byte("time,status\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("calibrate", empty); code != exitInvalid {
		t.Errorf("a log with no line: exit %d, want %d\n%s", code, exitInvalid, errOut)
	}
	failed := filepath.Join(t.TempDir(), "failed.csv")
	if err := os.WriteFile(failed, []byte("time,status\n1772366400,500\n1772366401,500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("calibrate", failed); code != exitInvalid || !strings.Contains(errOut, failed+": no request answered or refused") {
		t.Errorf("a log of 500s: exit %d, want %d naming the log\n%s", code, exitInvalid, errOut)
	}
	var lines strings.Builder
	lines.WriteString("time,status\n")
	for i := range 100 {
		fmt.Fprintf(&lines, "%d.%d,200\n", 1772366400+i/10, i%10)
	}
	noLatency := filepath.Join(t.TempDir(), "no-latency.csv")
	if err := os.WriteFile(noLatency, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("calibrate", noLatency); code != exitInvalid || !strings.Contains(errOut, "0 answered requests with a latency logged") {
		t.Errorf("a log without latencies: exit %d, want %d saying so\n%s", code, exitInvalid, errOut)
	}
	if code, _, errOut := cli("calibrate", filepath.Join(t.TempDir(), "missing.log")); code != exitInvalid {
		t.Errorf("a missing log: exit %d, want %d\n%s", code, exitInvalid, errOut)
	}
}

// writeCostLog writes a CSV log of five minutes of Poisson arrivals at
// rate per second, each a read (1 point, key "a", 70%) or a write (5
// points, key "b"), behind a server that admits limit points a minute
// (epoch-aligned windows); it returns the log's path.
func writeCostLog(t *testing.T, rate float64, limit int64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 9))
	var b strings.Builder
	b.WriteString("time,status,request_time,points,key\n")
	start := float64(time.Date(2026, 5, 4, 9, 0, 30, 0, time.UTC).Unix())
	window, used := -1.0, int64(0)
	for at := start; at < start+300; at += rng.ExpFloat64() / rate {
		if w := math.Floor(at / 60); w != window {
			window, used = w, 0
		}
		cost, key := int64(1), "a"
		if rng.Float64() < 0.3 {
			cost, key = 5, "b"
		}
		status, latency := 200, 0.08*math.Exp(0.3*rng.NormFloat64())
		if used+cost > limit {
			status, latency = 429, 0.001
		} else {
			used += cost
		}
		fmt.Fprintf(&b, "%.6f,%d,%.6f,%d,%s\n", at, status, latency, cost, key)
	}
	path := filepath.Join(t.TempDir(), "points.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --log-cost and --log-tenant reach the calibration: the quota counts
// cost, the workload carries the costs and the tenants, and the scenario
// loads; a cost field the log lacks is refused, naming the file and line.
func TestCalibrateCostAndTenantFlags(t *testing.T) {
	path := writeCostLog(t, 30, 3000)
	dir := filepath.Join(t.TempDir(), "calibrated")
	code, out, errOut := cli("calibrate", path, "-o", dir, "--log-time-format", "unix", "--log-cost", "points", "--log-tenant", "key")
	if code != exitOK {
		t.Fatalf("calibrate exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"fixed_window 3000/1m0s cost", "tenant a: ", "tenant b: ", "cost: "} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate printed no %q:\n%s", want, out)
		}
	}
	sc, err := scenarios.Load(filepath.Join(dir, calibratedScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	if q := sc.Upstreams[0].Quota; len(q) != 1 || q[0].Unit != "cost" {
		t.Errorf("the scenario's quota is %+v, want one counting cost", q)
	}
	if len(sc.Workload.Tenants) != 2 || sc.Workload.Cost.Dist == nil {
		t.Errorf("the scenario's workload is %+v, want two tenants and a cost distribution", sc.Workload)
	}
	jsonl := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(jsonl, []byte("{\"time\": 1772366400.5, \"status\": 200, \"request_time\": 0.05}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ log, want string }{
		{path, path + `:1: logs: invalid options: the CSV header has no column "tokens"`},
		{jsonl, jsonl + `:1: no cost field "tokens"`},
	} {
		code, _, errOut := cli("calibrate", c.log, "--log-time-format", "unix", "--log-cost", "tokens")
		if code != exitInvalid || !strings.Contains(errOut, c.want) {
			t.Errorf("--log-cost tokens on %s: exit %d, want %d saying %q\n%s", filepath.Base(c.log), code, exitInvalid, c.want, errOut)
		}
	}
}
