package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nginxTest skips t unless LIMITSIM_NGINX_TEST=1 (CI sets it, after
// installing nginx-light).
func nginxTest(t *testing.T) {
	t.Helper()
	if os.Getenv("LIMITSIM_NGINX_TEST") == "" {
		t.Skip("set LIMITSIM_NGINX_TEST=1 to run live against a real nginx (apt-get install nginx-light)")
	}
}

// Three nginx quotas run simulated and live behind a real nginx started
// for the run, in real time (30 s of wall time each, all three at once):
// limit_req nodelay, limit_req delay=3 (three excess requests served at
// once, the next seven held), and limit_conn. Offered 24/s against
// 20r/s, or 9.6 in service on average against conn 8, each refuses a
// quarter to a third of its requests. Goodput, the refused rate and the
// end-to-end p50 and p99 of the successes agree within 10%; the refusals
// are nginx's (the loopback server behind it enforces no quota), and -o
// holds the configuration nginx ran with. Real time and slow requests
// (150-600 ms) rather than --speed: at twice real time on a two-core
// machine under a load average of 12, a busy scheduler's delays put the
// p99 of 40-120 ms requests 27% over the simulation.
func TestLiveBehindNginx(t *testing.T) {
	nginxTest(t)
	for _, c := range []struct{ scenario, directive string }{
		{"nginx-nodelay", "limit_req zone=h0_q0 burst=5 nodelay;"},
		{"nginx-delay", "limit_req zone=h0_q0 burst=10 delay=3;"},
		{"nginx-limit-conn", "limit_conn h0_q0 8;"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "out")
			got := liveRun(t, filepath.Join("testdata", c.scenario+".toml"), "--nginx", "auto", "-o", dir)
			s, l := got.Simulated, got.Live
			t.Logf("%s: goodput %.2f/%.2f, refused %.4f/%.4f, p50 %.4f/%.4f s, p99 %.4f/%.4f s (simulated/live)", c.scenario,
				s.Throughput.GoodputRPS, l.Throughput.GoodputRPS, s.Rate429, l.Rate429, s.RequestS.P50, l.RequestS.P50, s.RequestS.P99, l.RequestS.P99)
			if s.Rate429 < 0.1 {
				t.Fatalf("simulated refused rate %.3f: the scenario should be well past its limit", s.Rate429)
			}
			for _, m := range []struct {
				name      string
				sim, live float64
			}{
				{"goodput", s.Throughput.GoodputRPS, l.Throughput.GoodputRPS},
				{"refused rate", s.Rate429, l.Rate429},
				{"end-to-end p50", s.RequestS.P50, l.RequestS.P50},
				{"end-to-end p99", s.RequestS.P99, l.RequestS.P99},
			} {
				if math.Abs(m.live-m.sim) > 0.1*m.sim {
					t.Errorf("%s live %.4g, simulated %.4g: more than 10%% apart", m.name, m.live, m.sim)
				}
			}
			if len(l.Upstreams) != 1 || l.Upstreams[0].QuotaUtilisation != nil || s.Upstreams[0].QuotaUtilisation == nil {
				t.Errorf("the loopback server enforced a quota behind nginx: utilisation live %v, simulated %v",
					l.Upstreams[0].QuotaUtilisation, s.Upstreams[0].QuotaUtilisation)
			}
			conf, err := os.ReadFile(filepath.Join(dir, "nginx.conf"))
			if err != nil || !strings.Contains(string(conf), c.directive) || !strings.Contains(string(conf), "keepalive 512;") {
				t.Errorf("-o nginx.conf (%v) lacks %q:\n%s", err, c.directive, conf)
			}
		})
	}
}

// --nginx refuses, before anything runs and with exit 2, a scenario
// without an nginx quota kind, and an nginx that is not there.
func TestLiveNginxRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"token-bucket", "--nginx", "auto"}, "token-bucket: --nginx: client: not expressible in nginx's configuration: no upstream has a quota of kind nginx_limit_req or nginx_limit_conn"},
		{[]string{"testdata/nginx-delay.toml", "--nginx", "/nonexistent/nginx"}, `--nginx /nonexistent/nginx: nginx "/nonexistent/nginx"`},
		{[]string{"testdata/nginx-delay.toml", "--nginx", "auto", "--speed", "1.5", "--set", "upstream.*.quota.rate=15r/m"}, "rate 15r/m at speed 1.5 is 22.5r/m"},
		// nginx counts what it passes and the loopback's bucket refuses:
		// live drew 8% more failures than simulated.
		{[]string{"testdata/nginx-with-bucket.toml", "--nginx", "auto"}, "quota[1]: a token_bucket with nginx's quotas on one host"},
		// An nginx that exits at once is the environment's, not a bug.
		{[]string{"testdata/nginx-delay.toml", "--nginx", "/bin/true", "--duration", "12s"}, "nginx exited before listening (exit status 0)"},
	} {
		code, out, errOut := cli(append([]string{"live", "--quiet"}, c.args...)...)
		if code != exitInvalid || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", c.args, code, out, errOut, exitInvalid, c.want)
		}
	}
}

// A live run behind nginx stopped by SIGINT or SIGTERM stops its nginx:
// no nginx outlives it.
func TestLiveNginxStoppedWithTheRun(t *testing.T) {
	nginxTest(t)
	bin := binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(bin, "live", "testdata/nginx-nodelay.toml", "--nginx", "auto", "--duration", "1h", "--quiet", "--json")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForHandler(t, cmd.Process.Pid)
		child := waitForChild(t, cmd.Process.Pid, "nginx")
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // a watchdog for a run that ignored the signal, not a measure
			cmd.Process.Kill()
			t.Fatalf("%v: the live run did not stop", sig)
		}
		if want := map[syscall.Signal]int{syscall.SIGINT: exitSignal, syscall.SIGTERM: exitTerminated}[sig]; exitCode(err) != want {
			t.Errorf("%v: exit %d, want %d", sig, exitCode(err), want)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", child)); !os.IsNotExist(err) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Errorf("%v: nginx (pid %d) outlived the run", sig, child)
		}
	}
}

// waitForChild waits until process pid has a child running name and
// returns the child's pid (Linux: /proc/*/stat).
func waitForChild(t *testing.T, pid int, name string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, path := range stats {
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			text := string(data)
			open, shut := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
			if open < 0 || shut < open {
				continue
			}
			fields := strings.Fields(text[shut+1:])
			if text[open+1:shut] != name || len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
				continue
			}
			child, err := strconv.Atoi(strings.TrimSpace(text[:open]))
			if err == nil {
				return child
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d started no %s", pid, name)
	return 0
}
