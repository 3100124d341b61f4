package main

import (
	"bytes"
	"testing"
	"time"
)

// A progress line gives the points done, their rate and the time left from
// that rate; to a log it is a plain line, to a terminal a redrawn one.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, what: "plan", total: 10}
	p.done.Store(3)
	p.print(2*time.Second, false)
	if got, want := b.String(), "plan: 3 of 10 done, 1.5/s, about 5s left\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	b.Reset()
	p.print(2*time.Second, true)
	if got, want := b.String(), "\rplan: 3 of 10 done, 1.5/s, about 5s left\x1b[K"; got != want {
		t.Fatalf("terminal: %q, want %q", got, want)
	}
	if isTerminal(&b) {
		t.Fatal("a buffer is no terminal")
	}
}
