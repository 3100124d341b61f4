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
