package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binary builds limitsim once for the tests that need a real process.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "limitsim")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func readMetrics(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("metrics.json is not valid JSON: %v", err)
	}
	return m
}

const longScenario = `name = "long"
[run]
duration = "1000000s"
[workload]
rate = 1000.0
[client]
[[client.limiter]]
name = "b"
kind = "token_bucket"
rate = 900.0
[[upstream]]
host = "*"
latency = { dist = "exponential", mean = "50ms" }
`

// interrupted starts bin with args, sends it n SIGINTs once it runs and
// waits for it to exit. The Go runtime catches SIGINT from its first
// instruction, before main installs limitsim's handler, and a signal in
// that window kills the process: so a start that dies of the signal
// without a word is retried with a longer head start (a loaded machine),
// instead of the test depending on one guessed delay.
func interrupted(t *testing.T, bin string, n int, args ...string) (code int, stderr string) {
	t.Helper()
	for head := 100 * time.Millisecond; head <= 10*time.Second; head *= 2 {
		cmd := exec.Command(bin, args...)
		var errBuf bytes.Buffer
		cmd.Stderr = &errBuf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForHandler(t, cmd.Process.Pid)
		time.Sleep(head)
		for range n {
			cmd.Process.Signal(syscall.SIGINT)
		}
		// The full run is a billion requests (many minutes): a process that
		// ignored SIGINT would still be running when the watchdog fires. The
		// watchdog only bounds a broken run; it is not a timing assertion.
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			t.Fatal("the run did not stop after SIGINT")
		}
		if code = exitCode(err); code == -1 && errBuf.Len() == 0 {
			continue // the signal beat signal.Notify: start again, later
		}
		return code, errBuf.String()
	}
	t.Fatal("every start died of SIGINT before installing its handler")
	return 0, ""
}

func TestInterruptWritesPartialOutputs(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "long.toml")
	os.WriteFile(sc, []byte(longScenario), 0o644)
	out := filepath.Join(dir, "out")
	code, stderr := interrupted(t, bin, 1, "run", sc, "-o", out)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, stderr)
	}
	m := readMetrics(t, out)
	if m["complete"] != false || m["stop_reason"] != "interrupted" {
		t.Fatalf("complete %v stop_reason %v", m["complete"], m["stop_reason"])
	}
	if e, _ := m["elapsed_s"].(float64); !(e > 0 && e < 1e6) {
		t.Fatalf("elapsed_s %v: the partial outputs should cover the simulated time up to the interrupt", m["elapsed_s"])
	}
	for _, name := range []string{"timeseries.csv", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Every output is written, yet the folder keeps its marker: it covers
	// the run only up to the stop, and `report` says so when it redraws.
	marker, err := os.ReadFile(filepath.Join(out, "INCOMPLETE"))
	if err != nil || !strings.Contains(string(marker), "interrupted") {
		t.Fatalf("an interrupted run's folder carries no INCOMPLETE marker saying so: %q, %v", marker, err)
	}
	cmd := exec.Command(bin, "report", out)
	var redrawn bytes.Buffer
	cmd.Stderr = &redrawn
	if err := cmd.Run(); err != nil {
		t.Fatalf("report: %v; %s", err, redrawn.String())
	}
	if !strings.Contains(redrawn.String(), "was interrupted") {
		t.Fatalf("report redrew an interrupted run's folder without saying so: %s", redrawn.String())
	}
	if _, err := os.Stat(filepath.Join(out, "INCOMPLETE")); err != nil {
		t.Fatal("report removed the marker of an interrupted run's folder")
	}
}

// Two SIGINTs in a row (as `timeout -s INT` may send) exit at once with
// 130 and a message saying what is on disk, and leave a consistent folder:
// either no results, or results marked incomplete (complete false and
// the INCOMPLETE marker) and, unless stderr says the second signal cut
// the writing short, every report beside them. Whatever
// the second signal interrupts, no assertion depends on timing.
func TestSecondInterruptLeavesAConsistentFolder(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "long.toml")
	os.WriteFile(sc, []byte(longScenario), 0o644)
	out := filepath.Join(dir, "out")
	code, stderr := interrupted(t, bin, 2, "run", sc, "-o", out)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "metrics.json")); err != nil {
		if !strings.Contains(stderr, "second interrupt") {
			t.Fatalf("no results and no second-interrupt message; stderr: %s", stderr)
		}
		return // stopped before any result was written
	}
	if m := readMetrics(t, out); m["complete"] != false {
		t.Fatalf("an interrupted run's metrics.json says complete = %v", m["complete"])
	}
	// The run was interrupted: its folder stays marked whether the second
	// signal cut the writing short or came after it.
	if _, err := os.Stat(filepath.Join(out, "INCOMPLETE")); err != nil {
		t.Fatal("the folder has an interrupted run's results and no INCOMPLETE marker: it looks complete")
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil && !strings.Contains(stderr, "second interrupt") {
		t.Fatalf("the folder has no report but stderr does not say why: %s", stderr)
	}
}

// waitForHandler waits until the process has installed its SIGINT handler
// (Linux: bit 2 of SigCgt in /proc/PID/status), so the signal is not
// delivered to the default action while the process is still starting.
func waitForHandler(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Skipf("cannot read the process status: %v", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
				if v, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && v&(1<<(int(syscall.SIGINT)-1)) != 0 {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the process never installed its SIGINT handler")
}

func TestGuardsStopRunaways(t *testing.T) {
	bin := binary(t)
	cases := map[string]struct{ extra, want string }{
		"live requests": {"max_live_requests = 2000\n", "max_live_requests"},
		"events":        {"max_events = 5000\n", "max_events"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sc := filepath.Join(dir, "s.toml")
			os.WriteFile(sc, []byte(strings.Replace(longScenario, "[run]\n", "[run]\n"+c.extra, 1)), 0o644)
			cmd := exec.Command(bin, "run", sc, "-o", filepath.Join(dir, "out"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := exitCode(err); code != 4 || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			m := readMetrics(t, filepath.Join(dir, "out"))
			if m["complete"] != false || !strings.Contains(m["stop_reason"].(string), c.want) {
				t.Fatalf("metrics: complete %v reason %v", m["complete"], m["stop_reason"])
			}
		})
	}
	// A zero-delay retry storm: the first request holds the server's only
	// permit for an hour; the second is refused at once and retries at once.
	storm := `name = "storm"
[run]
requests = 2
max_events_per_instant = 50
[workload]
arrival = "backlog"
[client]
[client.on_429]
pause = "none"
honor_retry_after = false
[client.retry]
attempts = 100
backoff = "none"
[[upstream]]
host = "*"
latency = { dist = "constant", value = "1h" }
quota = { kind = "concurrency", permits = 1 }
reject_latency = "0s"
`
	dir := t.TempDir()
	sc := filepath.Join(dir, "storm.toml")
	os.WriteFile(sc, []byte(storm), 0o644)
	cmd := exec.Command(bin, "run", sc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if code := exitCode(err); code != 4 || !strings.Contains(stderr.String(), "max_events_per_instant") {
		t.Fatalf("storm: exit %d, stderr %s", code, stderr.String())
	}
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	bin := binary(t)
	var outs []string
	for _, procs := range []string{"1", "2", "1"} {
		cmd := exec.Command(bin, "run", "--json", "composed-limits")
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Fatal("JSON differs across GOMAXPROCS or reruns")
	}
	if strings.Contains(outs[0], "/") && strings.Contains(outs[0], os.TempDir()) {
		t.Fatal("output contains a temporary path")
	}
}
