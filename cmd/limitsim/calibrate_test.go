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
	rng := rand.New(rand.NewPCG(3, 5))
	var b strings.Builder
	b.WriteString("time,status,request_time\n")
	start := float64(time.Date(2026, 5, 4, 9, 0, 30, 0, time.UTC).Unix())
	window, admitted := -1.0, 0
	for at := start; at < start+240; at += rng.ExpFloat64() / rate {
		if w := math.Floor(at / 60); w != window {
			window, admitted = w, 0
		}
		status, latency := 200, 0.08*math.Exp(0.3*rng.NormFloat64())
		if admitted >= limit {
			status, latency = 429, 0.001
		} else {
			admitted++
		}
		fmt.Fprintf(&b, "%.6f,%d,%.6f\n", at, status, latency)
	}
	path := filepath.Join(t.TempDir(), "access.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
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
	for _, bad := range [][]string{{"--threshold", "0"}, {"--threshold", "NaN"}, {"--log-format", "xml"}} {
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
