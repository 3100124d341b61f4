package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// contractDir is the pinned run -o folder of the bundled scenario name.
func contractDir(name string) string { return filepath.Join("testdata", "contract", name) }

// mixedFolder is a run's folder made of files of pinned run -o folders:
// each file name from the folder of the scenario given, with edit, when
// set, applied to its text.
func mixedFolder(t *testing.T, from map[string]string, edit func(name, text string) string) string {
	t.Helper()
	dir := t.TempDir()
	for name, scenario := range from {
		data, err := os.ReadFile(filepath.Join(contractDir(scenario), name))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			data = []byte(edit(name, string(data)))
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// renameLimiter is metrics.json's text with its first limiter renamed to
// name.
func renameLimiter(t *testing.T, text, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	m["limiters"].([]any)[0].(map[string]any)["name"] = name
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// report DIR refuses a timeseries.csv that is not of the run its
// metrics.json describes, exit 2 naming the file and the column: one of
// another scenario, one whose metrics.json has a limiter renamed, one
// with a column of no limiter, host or tenant of the run. It drew them
// before and crashed on the missing limiter's column (exit 70).
func TestReportRefusesAnotherRunsSeries(t *testing.T) {
	for _, c := range []struct {
		name string
		from map[string]string
		edit func(name, text string) string
		want string
	}{
		{"another scenario's series", map[string]string{"metrics.json": "reference-model", "timeseries.csv": "fail-tenant-starvation"}, nil,
			"timeseries.csv: no column bucket.waiting, which the limiter bucket of metrics.json has"},
		{"a limiter renamed", map[string]string{"metrics.json": "reference-model", "timeseries.csv": "reference-model"}, func(name, text string) string {
			if name == "metrics.json" {
				return renameLimiter(t, text, "zzz")
			}
			return text
		}, "timeseries.csv: no column zzz.waiting, which the limiter zzz of metrics.json has"},
		{"a column of no one", map[string]string{"metrics.json": "reference-model", "timeseries.csv": "reference-model"}, func(name, text string) string {
			if name != "timeseries.csv" {
				return text
			}
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			lines[0] += ",shared.waiting"
			for i := 1; i < len(lines); i++ {
				lines[i] += ",0"
			}
			return strings.Join(lines, "\n") + "\n"
		}, "timeseries.csv: column shared.waiting is of no limiter, host or tenant of metrics.json"},
	} {
		dir := mixedFolder(t, c.from, c.edit)
		code, _, errOut := cli("report", dir)
		if code != exitInvalid || !strings.Contains(errOut, filepath.Join(dir, c.want)) {
			t.Errorf("%s: exit %d: %s", c.name, code, errOut)
		}
	}
}

// Every bundled scenario's own run -o folder (as pinned) passes the
// checks report DIR makes of a folder before it redraws it.
func TestEveryBundledRunsFolderReads(t *testing.T) {
	dirs, err := filepath.Glob(contractDir("*"))
	if err != nil || len(dirs) < 15 {
		t.Fatalf("%d pinned folders (%v)", len(dirs), err)
	}
	for _, dir := range dirs {
		r, s, _, err := report.ReadRun(dir)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(dir), err)
			continue
		}
		if s.Len() == 0 || r.IntervalS <= 0 {
			t.Errorf("%s: %d rows", filepath.Base(dir), s.Len())
		}
		s.Close()
	}
}

// report DIR refuses a replay's folder whose replay.json holds no
// replayed minute (exit 2, naming the file) rather than fail to chart it
// as a bug (exit 70).
func TestReportRefusesAReplayOfNoMinute(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := cli("replay", writeLog(t, 600), "token-bucket", "--quiet", "-o", dir); code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	for _, text := range []string{"{}", "null", `{"start": "yesterday", "minutes": [{"minute": "2023-10-10T13:55:00Z"}]}`} {
		if err := os.WriteFile(filepath.Join(dir, "replay.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := cli("report", dir); code != exitInvalid || !strings.Contains(errOut, filepath.Join(dir, "replay.json")+":") {
			t.Errorf("replay.json %s: exit %d: %s", text, code, errOut)
		}
	}
}
