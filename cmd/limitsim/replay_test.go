package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeLog writes a combined log of n requests, one every 100 ms from
// 10/Oct/2023:13:55:36 (so several a second), every tenth refused with
// 429, with bad lines after it.
func writeLog(t *testing.T, n int, bad ...string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		status := 200
		if i%10 == 9 {
			status = 429
		}
		fmt.Fprintf(&b, "203.0.113.1 - key-%d [10/Oct/2023:13:%02d:%02d +0000] \"GET /v1 HTTP/1.1\" %d 12 \"-\" \"ua\" 0.120\n",
			i%2, 55+(36+i/10)/60, (36+i/10)%60, status)
	}
	for _, line := range bad {
		b.WriteString(line + "\n")
	}
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// replay prints the usual summary and the comparison; bad lines are
// counted and named by file and line.
func TestReplayPrintsTheComparison(t *testing.T) {
	log := writeLog(t, 600, "not a log line", `{"time": 1}`)
	code, out, errText := cli("replay", log, "token-bucket", "--log-tenant", "remote_user")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errText)
	}
	for _, want := range []string{"goodput", "replay of " + log + " (clf, 600 records", "production: 60 of 600 requests refused",
		"bad line " + log + ":601: not a common or combined log line", "bad line " + log + ":602:", "tenant key-0", "minute 2023-10-10T13:55:00Z"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errText, "2 bad lines skipped") {
		t.Errorf("stderr %q does not count the bad lines", errText)
	}
}

// --json prints the run's results and the comparison; -o writes
// replay.json and the report's section beside the usual outputs.
func TestReplayJSONAndOutputs(t *testing.T) {
	log := writeLog(t, 300)
	dir := t.TempDir()
	code, out, errText := cli("replay", log, "token-bucket", "--json", "-o", dir, "--latency", "model")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errText)
	}
	var doc struct {
		Results struct {
			Requests struct{ Arrived int64 } `json:"requests"`
		} `json:"results"`
		Replay struct {
			Latency string
			Total   struct {
				Requests            int64
				ProductionThrottled int64 `json:"production_throttled"`
			} `json:"total"`
			Minutes []json.RawMessage
		} `json:"replay"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Results.Requests.Arrived != 300 || doc.Replay.Total.Requests != 300 || doc.Replay.Total.ProductionThrottled != 30 ||
		doc.Replay.Latency != "model" || len(doc.Replay.Minutes) != 2 {
		t.Errorf("JSON %+v", doc)
	}
	for _, f := range []string{"metrics.json", "replay.json", "replay.png", "replay.svg", "report.md", "timeseries.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("-o lacks %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "INCOMPLETE")); err == nil {
		t.Error("the folder is left marked incomplete")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "## Production against the replay") {
		t.Error("report.md has no replay section")
	}
	// Redrawn from the folder, the report keeps the replay's section and
	// chart, byte for byte.
	if code, _, errText := cli("report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errText)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if string(again) != string(md) {
		t.Errorf("report.md redrawn differs:\n%s\n--- was:\n%s", again, md)
	}
	for _, f := range []string{"replay.png", "replay.svg", "replay.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the redrawn folder lacks %s", f)
		}
	}
}

// A log with no usable line is invalid input (exit 2), named with its
// first bad line, as is a log that cannot be read, named; a misspelt
// --latency, --log-format, --log-time-format or --log-latency-unit is a
// usage error (exit 1), naming the flag.
func TestReplayRefusals(t *testing.T) {
	log := writeLog(t, 0, `{"time": "yesterday"}`, "{oops")
	code, _, errText := cli("replay", log, "token-bucket")
	if code != exitInvalid || !strings.Contains(errText, "no usable line") || !strings.Contains(errText, log+":1:") {
		t.Errorf("exit %d, stderr %q; want %d naming %s:1", code, errText, exitInvalid, log)
	}
	if code, _, _ := cli("replay", writeLog(t, 10), "token-bucket", "--latency", "recorder"); code != exitUsage {
		t.Errorf("--latency recorder: exit %d, want %d", code, exitUsage)
	}
	// A log without hosts through a scenario of several names the
	// scenario and its hosts.
	if code, _, errText := cli("replay", writeLog(t, 10), "github-style-points"); code != exitInvalid ||
		!strings.Contains(errText, `scenario "github-style-points" has 2, [repos issues]`) || !strings.Contains(errText, "--log-host") {
		t.Errorf("a log without hosts through two: exit %d, stderr %q; want %d naming the scenario's hosts", code, errText, exitInvalid)
	}
	missing := filepath.Join(t.TempDir(), "gone.log")
	if code, _, errText := cli("replay", missing, "token-bucket"); code != exitInvalid || !strings.Contains(errText, missing) {
		t.Errorf("a missing log: exit %d, stderr %q; want %d naming it", code, errText, exitInvalid)
	}
	if code, _, errText := cli("replay", writeLog(t, 10), "token-bucket", "--log-format", "xml"); code != exitUsage || !strings.Contains(errText, `"xml"`) {
		t.Errorf("--log-format xml: exit %d, stderr %q; want %d naming it", code, errText, exitUsage)
	}
	for flag, value := range map[string]string{"--log-time-format": "yesterday", "--log-latency-unit": "us"} {
		for _, command := range []string{"replay", "calibrate"} {
			args := []string{command, writeLog(t, 10), "token-bucket", flag, value}
			if command == "calibrate" {
				args = slices.Delete(args, 2, 3)
			}
			if code, _, errText := cli(args...); code != exitUsage || !strings.Contains(errText, flag+": ") || !strings.Contains(errText, `"`+value+`"`) {
				t.Errorf("%s %s %s: exit %d, stderr %q; want %d naming the flag", command, flag, value, code, errText, exitUsage)
			}
		}
	}
	if code, _, errText := cli("replay", writeLog(t, 10), "token-bucket", "--log-host", "bogus"); code != exitInvalid || !strings.Contains(errText, `"bogus"`) {
		t.Errorf("--log-host bogus: exit %d, stderr %q", code, errText)
	}
}

// Several scenarios replay the same log: one configuration twice gives
// the same figures and the verdict "same"; -o writes a folder each.
func TestReplaySeveralConfigurations(t *testing.T) {
	log := writeLog(t, 400)
	dir := t.TempDir()
	code, out, errText := cli("replay", log, "token-bucket", "token-bucket", "--json", "-o", dir, "--log-tenant", "remote_user")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errText)
	}
	var doc struct {
		Runs []struct {
			Name   string
			Replay json.RawMessage
		}
		Verdicts []struct{ Name, Against, Verdict string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || string(doc.Runs[0].Replay) != string(doc.Runs[1].Replay) {
		t.Errorf("two replays of one configuration differ")
	}
	if len(doc.Verdicts) != 1 || doc.Verdicts[0].Verdict != "same" || doc.Verdicts[0].Against != "token-bucket" {
		t.Errorf("verdicts %+v", doc.Verdicts)
	}
	for _, sub := range []string{"token-bucket", "token-bucket-2"} {
		if _, err := os.Stat(filepath.Join(dir, sub, "replay.json")); err != nil {
			t.Errorf("-o lacks %s/replay.json", sub)
		}
	}
	code, out, _ = cli("replay", log, "token-bucket", "fail-sustained-429")
	if code != 0 || !strings.Contains(out, "the same log through 2 configurations") || !strings.Contains(out, "== fail-sustained-429 ==") {
		t.Errorf("exit %d, text:\n%s", code, out)
	}
}

// A scenario's [log] table maps the log's fields; a --log-* flag given
// overrides its key.
func TestReplayLogTable(t *testing.T) {
	log := writeLog(t, 200)
	text, _ := os.ReadFile("../../scenarios/examples/token-bucket.toml")
	scenario := filepath.Join(t.TempDir(), "mapped.toml")
	if err := os.WriteFile(scenario, append(text, "\n[log]\nformat = \"clf\"\ntenant = \"remote_user\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := cli("replay", log, scenario)
	if !strings.Contains(out, "tenant key-1") {
		t.Errorf("the table's tenant field is not read:\n%s", out)
	}
	_, out, _ = cli("replay", log, scenario, "--log-tenant", "method")
	if strings.Contains(out, "tenant key-1") || !strings.Contains(out, "tenant GET") {
		t.Errorf("--log-tenant does not override the table:\n%s", out)
	}
}

// A combined log's request lines choose github-style-points' paths by
// method: the text counts the records matched and those not (a HEAD, no
// path declares), naming the first on stderr; --log-unmatched refuse (or
// the table's unmatched = "refuse") fails on them, naming it, and a
// misspelt value is a usage error.
func TestReplayPathsByMethod(t *testing.T) {
	var b strings.Builder
	for i, method := range []string{"GET", "POST", "GET", "HEAD", "POST"} {
		fmt.Fprintf(&b, "203.0.113.1 - - [10/Oct/2023:13:55:%02d +0000] \"%s /repos/o/r/issues?page=1 HTTP/2.0\" 200 12 \"-\" \"ua\" 0.120\n", 36+i, method)
	}
	log := filepath.Join(t.TempDir(), "gh.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("../../scenarios/examples/github-style-points.toml")
	if err != nil {
		t.Fatal(err)
	}
	oneHost := strings.Replace(string(text), `hosts = [{ name = "repos" }, { name = "issues" }]`, "", 1)
	scenario := filepath.Join(t.TempDir(), "gh.toml")
	if err := os.WriteFile(scenario, []byte(oneHost), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errText := cli("replay", log, scenario)
	if code != 0 || !strings.Contains(out, "paths: 4 matched by method and URL path, 1 matched none (drawn by weight)") || !strings.Contains(out, "unmatched "+log+":4") {
		t.Errorf("exit %d, text:\n%s", code, out)
	}
	if !strings.Contains(errText, "1 matched no path by method and URL path, each drawn by weight (first: "+log+":4)") {
		t.Errorf("stderr %q does not name the unmatched record", errText)
	}
	code, _, errText = cli("replay", log, scenario, "--log-unmatched", "refuse")
	if code != exitInvalid || !strings.Contains(errText, "1 record matched no [[client.path]]") || !strings.Contains(errText, log+":4") {
		t.Errorf("--log-unmatched refuse: exit %d, stderr %q", code, errText)
	}
	refusing := filepath.Join(t.TempDir(), "refusing.toml")
	if err := os.WriteFile(refusing, []byte(oneHost+"\n[log]\nunmatched = \"refuse\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := cli("replay", log, refusing); code != exitInvalid {
		t.Errorf("unmatched = \"refuse\": exit %d, want %d", code, exitInvalid)
	}
	if code, _, errText := cli("replay", log, refusing, "--log-unmatched", "draw"); code != 0 {
		t.Errorf("--log-unmatched draw over the table: exit %d, stderr %q", code, errText)
	}
	if code, _, _ := cli("replay", log, scenario, "--log-unmatched", "skip"); code != exitUsage {
		t.Errorf("--log-unmatched skip: exit %d, want %d", code, exitUsage)
	}
}

// A log that logs no status (a CSV of times and latencies, or a JSON log
// whose status is under another name than the one mapped) leaves
// production's refusals unknown: replay says so and counts the records,
// and calibrate, which infers quotas from the 429s, refuses it rather
// than report "no 429s: no quota".
func TestLogWithoutStatus(t *testing.T) {
	var b strings.Builder
	b.WriteString("ts,latency_ms,code\n")
	for i := range 400 {
		fmt.Fprintf(&b, "%d.%03d,%d,%d\n", 1772366400+i/10, (i%10)*100, 20+i%7, map[bool]int{true: 429, false: 200}[i%10 == 9])
	}
	log := filepath.Join(t.TempDir(), "calls.csv")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--log-time", "ts", "--log-time-format", "unix", "--log-latency", "latency_ms", "--log-latency-unit", "ms"}
	code, out, errText := cli(append([]string{"replay", log, "token-bucket", "--json"}, flags...)...)
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errText)
	}
	if !strings.Contains(out, `"records_without_status": 400`) || !strings.Contains(errText, "no record logged a status") || !strings.Contains(errText, "--log-status") {
		t.Errorf("replay of a log without status: stderr %q; JSON without records_without_status 400", errText)
	}
	code, out, errText = cli(append([]string{"replay", log, "token-bucket", "--json", "--log-status", "code"}, flags...)...)
	if code != exitOK || strings.Contains(out, "records_without_status") || strings.Contains(errText, "status") {
		t.Errorf("replay with the status mapped: exit %d, stderr %q, or records_without_status printed", code, errText)
	}
	code, _, errText = cli(append([]string{"calibrate", log}, flags...)...)
	if code != exitInvalid || !strings.Contains(errText, log+": no record logged a status") {
		t.Errorf("calibrate of a log without status: exit %d, want %d naming the log: %s", code, exitInvalid, errText)
	}
}

// Two scenarios of one name replayed on the same log are told apart, the
// second as name-2, as their folders are.
func TestReplayNamesAlikeScenariosApart(t *testing.T) {
	log := writeLog(t, 200)
	dir := t.TempDir()
	var paths []string
	for _, f := range []struct{ file, rate string }{{"a.toml", "30.0"}, {"b.toml", "3.0"}} {
		body := "name = \"provider\"\n[run]\nduration = \"5s\"\n[workload]\nrate = 10.0\n[[client.limiter]]\nname = \"pace\"\nkind = \"token_bucket\"\nrate = " + f.rate + "\nburst = 1\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"
		p := filepath.Join(dir, f.file)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	code, out, errText := cli("replay", log, paths[0], paths[1], "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if !strings.Contains(out, `"name": "provider-2"`) || !strings.Contains(out, `"name": "provider"`) {
		t.Errorf("the second run is not named provider-2:\n%.2000s", out)
	}
}

// Records whose latency field does not read as a number take the model's
// latency, as production's refusals do, and replay says how many rather
// than "latency recorded" alone (1 unreadable and 20 429s of 201 here);
// a log with none that reads says the latencies are the model's.
func TestReplaySaysWhichLatenciesAreTheModels(t *testing.T) {
	log := writeLog(t, 200, `203.0.113.1 - key-0 [10/Oct/2023:13:55:56 +0000] "GET /v1 HTTP/1.1" 200 12 "-" "ua" abc`)
	code, out, errText := cli("replay", log, "token-bucket")
	if code != 0 || !strings.Contains(out, "latency recorded, but 21 of the 201 records took the model's (no latency logged that reads as a number, or a refusal's)") {
		t.Errorf("exit %d: %s\n%s", code, out, errText)
	}
	log = writeLog(t, 0, `203.0.113.1 - key-0 [10/Oct/2023:13:55:40 +0000] "GET /v1 HTTP/1.1" 200 12 "-" "ua"`,
		`203.0.113.1 - key-1 [10/Oct/2023:13:55:41 +0000] "GET /v1 HTTP/1.1" 200 12 "-" "ua"`)
	if code, out, errText := cli("replay", log, "token-bucket"); code != 0 || !strings.Contains(out, "latency the model's: no record logged a latency") {
		t.Errorf("exit %d: %s\n%s", code, out, errText)
	}
}
