package main

import (
	"strings"
	"testing"
)

// live refuses, before anything runs and with exit 2, what it cannot
// hold against its simulation: an attempt timeout (refused only after
// the whole simulation, as an internal error, exit 70), a store failing
// on purpose (its -100% 429 rate compared a failing store with a healthy
// Redis), and a --redis that is no address (refused after the simulation
// and 5 s of retries).
func TestLiveRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"seed-crawler", "--set", "client.retry.attempt_timeout=1s"}, "seed-crawler: client.retry.attempt_timeout is simulated only"},
		{[]string{"cluster-shared-limit", "--set", "client.limiter.shared.store_errors=0.3"}, "client.limiter shared: store_errors fails the simulated store's calls on purpose"},
		{[]string{"cluster-shared-limit", "--redis", "bogus"}, "--redis bogus: want host:port"},
	} {
		code, out, errOut := cli(append([]string{"live", "--quiet"}, c.args...)...)
		if code != exitInvalid || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", c.args, code, out, errOut, exitInvalid, c.want)
		}
	}
}
