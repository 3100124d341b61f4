package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A progress line gives the points done, their rate and the time left from
// that rate; to a log it is a plain line, to a terminal a bar with the
// same line.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, what: "plan", total: 10}
	p.done.Store(3)
	p.print(2*time.Second, false)
	if got, want := b.String(), "plan: 3 of 10 done, 1.5/s, about 5s left\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	b.Reset()
	p.bar = newBar(&b, p.total)
	p.print(2*time.Second, true)
	if got := b.String(); !strings.Contains(got, " 30% ") || !strings.Contains(got, "plan: 3 of 10 done, 1.5/s, about 5s left") || !strings.HasPrefix(got, "\r") {
		t.Fatalf("terminal: %q, want a redrawn bar at 30%% with the progress line", got)
	}
	if isTerminal(&b) {
		t.Fatal("a buffer is no terminal")
	}
}

// A run's progress reads in simulated time, or in requests with thousands
// grouped, and its time left comes from the rate so far.
func TestRunProgressLine(t *testing.T) {
	sc, err := load("token-bucket", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := startRunProgress(&b, cfg)
	p.finish()
	p.done.Store(int64(30 * time.Second))
	p.print(time.Second, false)
	if got, want := b.String(), "run: simulated 30s of 2m0s, about 3s left\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	cfg.Run.Duration, cfg.Run.Requests = 0, 20000
	p = startRunProgress(&b, cfg)
	p.finish()
	b.Reset()
	p.done.Store(12500)
	p.print(5*time.Second, false)
	if got, want := b.String(), "run: 12,500 of 20,000 requests arrived, about 3s left\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	// Every request arrived, the last still inside: no "0s left" for a
	// drain of unknown length, but how far the simulated clock has gone.
	b.Reset()
	p.done.Store(20000)
	p.clock.Store(int64(3*time.Hour + 25*time.Minute))
	p.print(5*time.Second, false)
	if got, want := b.String(), "run: 20,000 of 20,000 requests arrived; the last requests are finishing, simulated clock at 3h25m0s\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	// With replications the amount sums them, the clock is the last one's.
	cfg.Run.Replications = 3
	p = startRunProgress(&b, cfg)
	p.finish()
	b.Reset()
	p.done.Store(60000)
	p.clock.Store(int64(90 * time.Minute))
	p.print(5*time.Second, false)
	if got, want := b.String(), "run: 60,000 of 60,000 requests arrived; the last replication's last requests are finishing, simulated clock at 1h30m0s\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
