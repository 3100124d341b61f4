package main

import (
	"strings"
	"testing"
)

// fit latency reads one latency a line: a CSV row is refused at its line
// (status codes were fitted as seconds), a byte-order mark is skipped (it
// hid the first sample as a header), and only a first line without a
// digit is a header (a bad first line was dropped silently).
func TestFitLatencyOneValueALine(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"status,latency\n200,0.1\n200,0.2\n429,0.3\n": `lat.csv:2: "200,0.1" holds 2 fields: fit latency reads one latency a line (cut the column out first, e.g. cut -d, -f2 lat.csv)`,
		"latency_ms,status\n120,200\n130,200\n":       `lat.csv:2: "120,200" holds 2 fields`,
		"0.1;0.2\n0.3;0.4\n":                          `lat.csv:1: "0.1;0.2" holds 2 fields`,
		"120 ms\n130 ms\n":                            `lat.csv:1: "120 ms" is not a latency`,
	} {
		code, _, errOut := cli("fit", "latency", writeFitInput(t, dir, "lat.csv", content))
		if code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d: %s, want %q", content, code, errOut, want)
		}
	}
	for content, want := range map[string]string{
		"\uFEFF0.1\n0.2\n0.3\n0.4\n": "4 samples",
		"latency (s)\n0.1\n0.2\n":    "2 samples",
		"\uFEFFp50,0.1\np90,0.3\n":   "2 percentiles",
	} {
		code, out, errOut := cli("fit", "latency", writeFitInput(t, dir, "lat.csv", content))
		if code != exitOK || !strings.HasPrefix(out, want) {
			t.Errorf("%q: exit %d: %s%s, want %q", content, code, out, errOut, want)
		}
	}
}

// fit arrivals takes a first line for a header only when it holds no
// digit: a first timestamp it cannot read is an error at line 1.
func TestFitArrivalsHeaderHasNoDigit(t *testing.T) {
	path := writeFitInput(t, t.TempDir(), "t.csv", "1x\n1\n2\n")
	code, _, errOut := cli("fit", "arrivals", path)
	if want := `t.csv:1: "1x" is not a number`; code != exitInvalid || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s, want %q", code, errOut, want)
	}
}
