package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A comparison stopped by a signal compares nothing: it exits 130 (143
// for SIGTERM), prints no verdict and writes no report.
func TestInterruptedCompareGivesNoVerdict(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated} {
		st := new(session)
		st.signal.Store(int32(sig))
		st.interrupt.Store(true)
		dir := filepath.Join(t.TempDir(), "cmp")
		var stdout, stderr bytes.Buffer
		code := run([]string{"compare", "token-bucket", "sliding-window", "--quiet", "-o", dir}, &stdout, &stderr, st)
		if code != want || stdout.Len() != 0 || !strings.Contains(stderr.String(), "interrupted") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout.String(), stderr.String())
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
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated} {
		for _, c := range []struct {
			args   []string
			stdout string // what stdout still holds ("": nothing)
		}{
			{[]string{"size", "--quota", "100/s", "--latency-p50", "200ms", "--latency-p99", "1s", "--verify"}, "token bucket rate"},
			{[]string{"bench", "-n", "20000"}, ""},
		} {
			st := new(session)
			st.signal.Store(int32(sig))
			st.interrupt.Store(true)
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr, st)
			if code != want || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("%v %v: exit %d, stderr %q", sig, c.args[0], code, stderr.String())
			}
			if got := stdout.String(); (c.stdout == "") != (got == "") || !strings.Contains(got, c.stdout) {
				t.Errorf("%v %v: stdout %q, want %q in it", sig, c.args[0], got, c.stdout)
			}
			if strings.Contains(stdout.String(), "verify (simulated") && strings.Contains(stdout.String(), "holds") && !strings.Contains(stdout.String(), "nothing is proven") {
				t.Errorf("%v: an interrupted check claims a verdict: %s", sig, stdout.String())
			}
		}
	}
}

// calibrate stops on a signal while it reads the log (a week of logs
// takes a while), as every command that runs simulations does: exit 130
// (143 for SIGTERM), saying where, and nothing written.
func TestCalibrateStopsOnASignal(t *testing.T) {
	path := writeWindowLog(t, 30, 1500)
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated} {
		st := new(session)
		st.signal.Store(int32(sig))
		st.interrupt.Store(true)
		dir := filepath.Join(t.TempDir(), "cal")
		var stdout, stderr bytes.Buffer
		code := run([]string{"calibrate", path, "--log-time-format", "unix", "-o", dir}, &stdout, &stderr, st)
		if code != want || stdout.Len() != 0 || !strings.Contains(stderr.String(), "interrupted: reading "+path+" at line") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout.String(), stderr.String())
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
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated} {
		st := new(session)
		st.signal.Store(int32(sig))
		st.interrupt.Store(true)
		var stdout, stderr bytes.Buffer
		code := run([]string{"replay", path, "token-bucket"}, &stdout, &stderr, st)
		if code != want || stdout.Len() != 0 || !strings.Contains(stderr.String(), "token-bucket: planning: interrupted: reading "+path+" at line") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", sig, code, stdout.String(), stderr.String())
		}
	}
}
