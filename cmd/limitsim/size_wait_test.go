package main

import (
	"strings"
	"testing"
)

// A waiting line bounded by its length is a long wait at a slow rate:
// 5,000 an hour over three instances is 1.25/s through one shared GCRA,
// and each instance's line of 19 drains in 19 ÷ (1.25/3) = 45.6 s, which
// size now says, with the acquisition timeout that bounds the wait. At
// 100/s a line of 30 an instance drains in a second, and nothing is said.
func TestSizeSaysHowLongTheLineWaits(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "5000/h", "--latency-p50", "250ms", "--latency-p99", "2s", "--instances", "3")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "max_waiting = 19") || !strings.Contains(out, "A full waiting line (19 an instance) takes 45.6s to drain at the sized rate") ||
		!strings.Contains(out, "client.acquire_timeout bounds the wait") || strings.Contains(out, "2s):") {
		t.Fatalf("no wait named for a line of 19 at 1.25/s over 3:\n%s", out)
	}
	_, out, _ = cli("size", "--quota", "100/s", "--latency-p50", "200ms", "--latency-p99", "1s", "--instances", "3")
	if !strings.Contains(out, "max_waiting = 30") || strings.Contains(out, "full waiting line") {
		t.Fatalf("a line of 30 at 30/s drains in a second, yet:\n%s", out)
	}
}
