package main

import (
	"fmt"
	"os"
	"path/filepath"
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

// nginx's $upstream_response_time named with --log-latency: "-" (nginx
// answered itself) takes the model's latency rather than dropping the
// request from the arrivals, several servers' times are summed, and
// "fast" is a bad line named by file and line.
func TestReplayNamedLatencyLenient(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		urt := map[int]string{0: "0.120", 1: "-", 2: "", 3: "0.012, 0.034"}[i%4]
		fmt.Fprintf(&b, "{\"time\": %d.%d, \"status\": 200, \"upstream_response_time\": %q}\n", 1696946136+i/10, i%10, urt)
	}
	b.WriteString("{\"time\": 1696946160, \"status\": 200, \"upstream_response_time\": \"fast\"}\n")
	log := writeFile(t, t.TempDir(), "access.jsonl", b.String())
	code, out, errText := cli("replay", log, "token-bucket", "--log-latency", "upstream_response_time")
	if code != exitOK || !strings.Contains(out, "(json, 200 records over 19.9s from 2023-10-10T13:55:00Z; 1 bad line;") ||
		!strings.Contains(out, "latency recorded, but 100 of the 200 records took the model's") ||
		!strings.Contains(out, log+`:201: latency "fast"`) {
		t.Errorf("exit %d:\n%s%s", code, out, errText)
	}
}

// A JSON lines log that opens with a byte-order mark replays as JSON.
func TestReplayLogWithByteOrderMark(t *testing.T) {
	var b strings.Builder
	b.WriteString("\uFEFF")
	for i := range 100 {
		fmt.Fprintf(&b, "{\"time\": %d, \"status\": 200}\n", 1696946136+i/10)
	}
	log := writeFile(t, t.TempDir(), "calls.jsonl", b.String())
	if code, out, errText := cli("replay", log, "token-bucket"); code != exitOK || !strings.Contains(out, "(json, 100 records") {
		t.Errorf("exit %d:\n%s%s", code, out, errText)
	}
}

// An anonymous request's "-" in CLF's $remote_user is no tenant: replay
// lists no tenant "-" (the record is the scenario's first tenant's), and
// calibrate writes none into its scenario.
func TestAnonymousTenantIsNone(t *testing.T) {
	var b strings.Builder
	for i := range 600 {
		user := map[bool]string{true: "key-a", false: "-"}[i%3 == 0]
		fmt.Fprintf(&b, "203.0.113.1 - %s [10/Oct/2023:13:%02d:%02d +0000] \"GET /v1 HTTP/1.1\" 200 12 \"-\" \"ua\" 0.%03d\n",
			user, 55+(36+i/10)/60, (36+i/10)%60, 80+(i*37)%90)
	}
	log := writeFile(t, t.TempDir(), "anon.log", b.String())
	code, out, errText := cli("replay", log, "token-bucket", "--log-tenant", "remote_user")
	if code != exitOK || !strings.Contains(out, "tenant key-a") || strings.Contains(out, "tenant -") || !strings.Contains(out, "0 bad lines") {
		t.Errorf("replay: exit %d:\n%s%s", code, out, errText)
	}
	dir := t.TempDir()
	code, _, errText = cli("calibrate", log, "--log-tenant", "remote_user", "-o", dir)
	scenario, err := os.ReadFile(filepath.Join(dir, calibratedScenarioFile))
	if code == exitInvalid || code == exitUsage || err != nil || !strings.Contains(string(scenario), `name = "key-a"`) || strings.Contains(string(scenario), `name = "-"`) {
		t.Errorf("calibrate: exit %d, %v: %s\n%s", code, err, errText, scenario)
	}
}
