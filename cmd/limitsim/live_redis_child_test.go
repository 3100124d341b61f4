package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The redis-server a live run starts dies with it, even when the run is
// killed outright (SIGKILL: no handler runs): it was left running under
// init, as nginx never is. Set LIMITSIM_REDIS_TEST=1 to run it.
func TestLiveRedisDiesWithTheRun(t *testing.T) {
	if os.Getenv("LIMITSIM_REDIS_TEST") == "" {
		t.Skip("set LIMITSIM_REDIS_TEST=1 to run a cluster limiter against redis-server")
	}
	cmd := exec.Command(binary(t), "live", "cluster-shared-limit", "--duration", "1h", "--quiet", "--json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := waitForChild(t, cmd.Process.Pid, "redis-server")
	cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it is running
	cmd.Wait()                          //nolint:errcheck // killed on purpose
	// A watchdog for the kernel's signal, not a measure.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if os.IsNotExist(err) || err == nil && zombie(string(data)) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL) //nolint:errcheck // cleaning up
			t.Fatalf("redis-server (pid %d) outlived the killed run", child)
		}
	}
}

// zombie reports whether a /proc/PID/stat line is a process that has
// exited and awaits its parent's wait.
func zombie(stat string) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return len(stat) > i+2 && stat[i+2] == 'Z'
		}
	}
	return false
}
