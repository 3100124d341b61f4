package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// redisServer is a redis-server a test started on a loopback port,
// without persistence.
type redisServer struct {
	bin, addr string
	port      int
	cmd       *exec.Cmd
}

// startRedisServer starts redis-server on a free loopback port; the test's
// cleanup kills it.
func startRedisServer(t *testing.T) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &redisServer{bin: bin, port: port, addr: "127.0.0.1:" + strconv.Itoa(port)}
	t.Cleanup(s.kill)
	s.start(t)
	return s
}

// start starts the server on its port and waits until it answers.
func (s *redisServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := s.client()
	defer c.Close()
	// A start-up watchdog, not a measure: generous for a loaded machine.
	for deadline := time.Now().Add(time.Minute); c.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer", s.addr)
		}
	}
}

// kill stops the server with SIGKILL, as a crash would, and reaps it.
func (s *redisServer) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have gone already
	s.cmd.Wait()                          //nolint:errcheck // killed on purpose
	s.cmd = nil
}

// client connects to the server, without retries.
func (s *redisServer) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr, DialTimeout: time.Second, MaxRetries: -1})
}

// outageRun is a live run whose Redis was killed and restarted part way,
// and when, in the run's own time (as its clock last said: up to one
// interval behind).
type outageRun struct {
	out          *client.Outcome
	interval     time.Duration // of the series
	killed, back time.Duration
}

// restart is an outage: the server killed (SIGKILL), and restarted on
// the same port a second later.
func restart(t *testing.T, srv *redisServer) {
	srv.kill()
	time.Sleep(time.Second)
	srv.start(t)
}

// runThroughOutage runs cluster-shared-limit live at speed 4 for 40 s of
// scenario time (10 s of wall time) against srv, with on_store_error =
// policy, and calls outage once the run's clock passes 12 s. It fails the
// test if the run does not end on its own, complete.
func runThroughOutage(t *testing.T, srv *redisServer, policy string, outage func(*testing.T, *redisServer)) outageRun {
	t.Helper()
	const speed, length = 4, 40 * time.Second
	_, cfg, err := loadBuilt("cluster-shared-limit", overrides{{Key: "run.duration", Value: length.String()},
		{Key: "client.limiter.shared.on_store_error", Value: policy}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clk atomic.Int64
	type result struct {
		out *client.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := client.RunLive(ctx, cfg, client.LiveOptions{Speed: speed, Redis: srv.addr, Clock: &clk, MaxWall: 2 * time.Minute})
		done <- result{out, err}
	}()
	run := outageRun{interval: cfg.Run.Interval}
	for run.killed = time.Duration(clk.Load()); run.killed < 12*time.Second; run.killed = time.Duration(clk.Load()) {
		select {
		case r := <-done:
			t.Fatalf("the run ended (%v) before the outage", r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	outage(t, srv)
	run.back = time.Duration(clk.Load())
	// A store that held a call for good would run into the run's own
	// wall-clock cap (MaxWall), which ends it as capped: the run must
	// end on its own, complete.
	r := <-done
	if r.err != nil {
		t.Fatalf("%v: a dead store held the run", r.err)
	}
	if !r.out.Results.Complete {
		t.Fatalf("the run stopped early (%v): a dead store held it", r.out.Results.Stop)
	}
	run.out = r.out
	return run
}

// perSecond sums the series' columns over the intervals that end within
// (from, to] of the run's time, and returns them with the seconds covered.
func perSecond(s *metrics.Series, interval, from, to time.Duration, names ...string) (sums []float64, seconds float64) {
	sums = make([]float64, len(names))
	s.ScanNamed(0, append([]string{"t_s"}, names...), func(_ int, v []float64) bool {
		end := time.Duration(v[0] * float64(time.Second))
		if end-interval >= from && end <= to {
			for k := range names {
				sums[k] += v[k+1]
			}
			seconds += interval.Seconds()
		}
		return true
	})
	return sums, seconds
}

// A Redis that dies mid-run (SIGKILL) and comes back on the same port a
// second later: the cluster limiter follows on_store_error while it is
// down — allow lets requests through, deny refuses them (they end as
// acquire timeouts) — the failed calls are counted in store.failed, calls
// succeed again on the restarted server, and the run ends on time. Set
// LIMITSIM_REDIS_TEST=1 to run it.
func TestLiveRedisRestart(t *testing.T) {
	if os.Getenv("LIMITSIM_REDIS_TEST") == "" {
		t.Skip("set LIMITSIM_REDIS_TEST=1 to run a cluster limiter against redis-server")
	}
	for _, policy := range []string{"allow", "deny"} {
		t.Run(policy, func(t *testing.T) {
			srv := startRedisServer(t)
			run := runThroughOutage(t, srv, policy, restart)
			res := run.out.Results
			st := res.Limiters[0].Store
			t.Logf("Redis down from %v to %v of the run; store %+v; acquire timeouts %d",
				run.killed.Round(time.Millisecond), run.back.Round(time.Millisecond), *st, res.Requests.AcquireTimeouts)
			if st.Failed == 0 || st.Calls <= st.Failed {
				t.Errorf("store calls %+v: want some failed, and more made", *st)
			}
			// The intervals wholly within the outage: the clock read at
			// the kill may be late by the loop's lag, the one read at the
			// restart is behind the restart by up to an interval.
			iv := run.interval
			down, secs := perSecond(run.out.Series, iv, run.killed+iv/2, run.back, "arrivals", "succeeded", "timeouts")
			before, secsBefore := perSecond(run.out.Series, iv, 3*time.Second, 12*time.Second, "succeeded")
			after, secsAfter := perSecond(run.out.Series, iv, run.back+6*time.Second, 40*time.Second, "succeeded")
			t.Logf("per second: before %.1f succeeded; down (%.0f s) %.1f arrived, %.1f succeeded, %.1f acquire timeouts; after %.1f succeeded",
				before[0]/secsBefore, secs, down[0]/secs, down[1]/secs, down[2]/secs, after[0]/secsAfter)
			if secs < 2 || secsBefore == 0 || secsAfter == 0 {
				t.Fatalf("%.0f s of outage in the series (want at least 2), %.0f s before, %.0f s after", secs, secsBefore, secsAfter)
			}
			switch policy {
			case "allow":
				if down[1]/secs < 0.5*before[0]/secsBefore || down[2] > 0.05*down[0] {
					t.Errorf("Redis down, on_store_error = allow: %.0f succeeded and %.0f timed out of %.0f arrived; want them let through", down[1], down[2], down[0])
				}
			case "deny":
				if down[1] > 0.05*down[0] || down[2] < 0.5*down[0] {
					t.Errorf("Redis down, on_store_error = deny: %.0f succeeded and %.0f timed out of %.0f arrived; want them refused", down[1], down[2], down[0])
				}
			}
			if after[0]/secsAfter < 0.8*before[0]/secsBefore {
				t.Errorf("after the restart %.1f succeeded a second, before the outage %.1f", after[0]/secsAfter, before[0]/secsBefore)
			}
			c := srv.client()
			defer c.Close()
			if info, err := c.Info(context.Background(), "commandstats").Result(); err != nil || !strings.Contains(info, "cmdstat_eval") {
				t.Errorf("the restarted Redis ran no limiter call (%v):\n%s", err, info)
			}
		})
	}
}

// A Redis that stops answering mid-run (SIGSTOP: connections still open,
// no answers) for 2 s of wall time: every call in that time fails at its
// timeout instead of waiting, the failures are counted, the run ends on
// time, and calls succeed again once it answers. Set LIMITSIM_REDIS_TEST=1
// to run it.
func TestLiveRedisFrozen(t *testing.T) {
	if os.Getenv("LIMITSIM_REDIS_TEST") == "" {
		t.Skip("set LIMITSIM_REDIS_TEST=1 to run a cluster limiter against redis-server")
	}
	srv := startRedisServer(t)
	freeze := func(t *testing.T, srv *redisServer) {
		if err := srv.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := srv.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	run := runThroughOutage(t, srv, "allow", freeze)
	st := run.out.Results.Limiters[0].Store
	iv := run.interval
	before, secsBefore := perSecond(run.out.Series, iv, 3*time.Second, 12*time.Second, "succeeded")
	down, secs := perSecond(run.out.Series, iv, run.killed+iv/2, run.back, "succeeded", "timeouts")
	after, secsAfter := perSecond(run.out.Series, iv, run.back+4*time.Second, 40*time.Second, "succeeded")
	t.Logf("Redis frozen from %v to %v of the run; store %+v; per second: before %.1f succeeded; frozen (%.0f s) %.1f succeeded, %.1f acquire timeouts; after %.1f succeeded",
		run.killed.Round(time.Millisecond), run.back.Round(time.Millisecond), *st,
		before[0]/secsBefore, secs, down[0]/max(secs, 1), down[1]/max(secs, 1), after[0]/secsAfter)
	if st.Failed == 0 || st.Calls <= st.Failed {
		t.Errorf("store calls %+v: want some failed, and more made", *st)
	}
	if secsBefore == 0 || secsAfter == 0 || after[0]/secsAfter < 0.8*before[0]/secsBefore {
		t.Errorf("after the freeze %.0f succeeded in %.0f s, before it %.0f in %.0f s", after[0], secsAfter, before[0], secsBefore)
	}
}
