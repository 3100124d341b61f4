package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// signalExits are the exit codes of a command its first signal stopped.
var signalExits = map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated}

// runSignalled runs args in a session that sig has already interrupted.
func runSignalled(sig syscall.Signal, args ...string) (code int, stdout, stderr string) {
	st := new(session)
	st.signal.Store(int32(sig))
	st.interrupt.Store(true)
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut, st)
	return code, out.String(), errOut.String()
}

// A comparison stopped by a signal compares nothing: it exits 130 (143
// for SIGTERM), prints no verdict and writes no report.
func TestInterruptedCompareGivesNoVerdict(t *testing.T) {
	for sig, want := range signalExits {
		dir := filepath.Join(t.TempDir(), "cmp")
		code, stdout, stderr := runSignalled(sig, "compare", "token-bucket", "sliding-window", "--quiet", "-o", dir)
		if code != want || stdout != "" || !strings.Contains(stderr, "interrupted") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "compare.md")); !os.IsNotExist(err) {
			t.Errorf("%v: compare.md written (%v)", sig, err)
		}
	}
}

// size --verify and bench stop on a signal as every command that runs
// simulations does: exit 130 (143 for SIGTERM), saying so. size keeps its
// table (arithmetic, not simulation) and proves nothing; bench times
// nothing.
func TestSizeVerifyAndBenchStopOnASignal(t *testing.T) {
	for sig, want := range signalExits {
		for _, c := range []struct {
			args   []string
			stdout string // what stdout still holds ("": nothing)
		}{
			{[]string{"size", "--quota", "100/s", "--latency-p50", "200ms", "--latency-p99", "1s", "--verify"}, "token bucket rate"},
			{[]string{"bench", "-n", "20000"}, ""},
		} {
			code, stdout, stderr := runSignalled(sig, c.args...)
			if code != want || !strings.Contains(stderr, "interrupted") {
				t.Errorf("%v %v: exit %d, stderr %q", sig, c.args[0], code, stderr)
			}
			if (c.stdout == "") != (stdout == "") || !strings.Contains(stdout, c.stdout) {
				t.Errorf("%v %v: stdout %q, want %q in it", sig, c.args[0], stdout, c.stdout)
			}
			if strings.Contains(stdout, "verify (simulated") && strings.Contains(stdout, "holds") && !strings.Contains(stdout, "nothing is proven") {
				t.Errorf("%v: an interrupted check claims a verdict: %s", sig, stdout)
			}
		}
	}
}

// calibrate stops on a signal while it reads the log (a week of logs
// takes a while), as every command that runs simulations does: exit 130
// (143 for SIGTERM), saying where, and nothing written.
func TestCalibrateStopsOnASignal(t *testing.T) {
	path := writeWindowLog(t, 30, 1500)
	for sig, want := range signalExits {
		dir := filepath.Join(t.TempDir(), "cal")
		code, stdout, stderr := runSignalled(sig, "calibrate", path, "--log-time-format", "unix", "-o", dir)
		if code != want || stdout != "" || !strings.Contains(stderr, "interrupted: reading "+path+" at line") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, calibratedScenarioFile)); !os.IsNotExist(err) {
			t.Errorf("%v: %s written (%v)", sig, calibratedScenarioFile, err)
		}
	}
}

// replay stops on a signal while it first reads the log, before anything
// runs: exit 130 (143 for SIGTERM), saying where, nothing printed.
func TestReplayStopsOnASignal(t *testing.T) {
	path := writeLog(t, 600)
	for sig, want := range signalExits {
		code, stdout, stderr := runSignalled(sig, "replay", path, "token-bucket")
		if code != want || stdout != "" || !strings.Contains(stderr, "token-bucket: planning: interrupted: reading "+path+" at line") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout, stderr)
		}
	}
}
