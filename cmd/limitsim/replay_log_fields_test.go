package main

import (
	"fmt"
	"strings"
	"testing"
)

// A Go layout without a time zone replays, its times read as UTC, and one
// without seconds spreads each minute's records within it; a layout that
// holds no date and time is a usage error naming the flag.
func TestReplayZonelessTimeLayout(t *testing.T) {
	var seconds, minutes strings.Builder
	seconds.WriteString("ts,status\n")
	minutes.WriteString("ts,status\n")
	for i := range 300 {
		fmt.Fprintf(&seconds, "2023-10-10 13:%02d:%02d,200\n", 55+(36+i/10)/60, (36+i/10)%60)
		fmt.Fprintf(&minutes, "2023-10-10 13:%02d,200\n", 55+i/100)
	}
	for _, c := range []struct{ log, layout, want string }{
		{writeFile(t, t.TempDir(), "seconds.csv", seconds.String()), "2006-01-02 15:04:05", "(csv, 300 records over 29s from 2023-10-10T13:55:00Z; 0 bad lines"},
		{writeFile(t, t.TempDir(), "minutes.csv", minutes.String()), "2006-01-02 15:04", "(csv, 300 records over 120s from 2023-10-10T13:55:00Z; 0 bad lines"},
	} {
		code, out, errText := cli("replay", c.log, "token-bucket", "--log-time", "ts", "--log-time-format", c.layout)
		if code != exitOK || !strings.Contains(out, c.want) {
			t.Errorf("--log-time-format %q: exit %d, want %q in:\n%s%s", c.layout, code, c.want, out, errText)
		}
	}
	log := writeFile(t, t.TempDir(), "seconds.csv", seconds.String())
	if code, _, errText := cli("replay", log, "token-bucket", "--log-time", "ts", "--log-time-format", "hello"); code != exitUsage || !strings.Contains(errText, "--log-time-format: ") {
		t.Errorf("--log-time-format hello: exit %d, stderr %q; want %d naming the flag", code, errText, exitUsage)
	}
}
