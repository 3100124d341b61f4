package main

import (
	"strings"
	"testing"
)

// A first line with a digit is data, so a header such as nginx's
// time_iso8601 is refused: the error says why it was not taken as one.
func TestFitHeaderWithADigitIsExplained(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"fit", "arrivals", writeFitInput(t, dir, "a.txt", "time_iso8601\n1700000000\n1700000001\n")}},
		{[]string{"fit", "latency", writeFitInput(t, dir, "l.txt", "latency_2\n0.1\n0.2\n")}},
	} {
		code, _, errOut := cli(c.args...)
		if code != exitInvalid || !strings.Contains(errOut, ":1: ") || !strings.Contains(errOut, "a first line is taken as a header only when it holds no digit") {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}
