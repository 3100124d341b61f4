package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// report DIR refuses a folder whose files are not a run's rather than
// draw it as a run of zeros: a metrics.json without a run's fields, with
// null lists or a negative time, and a series without t_s or whose
// instants do not advance.
func TestReportRefusesFilesNotARuns(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := cli("run", "--quiet", "../../scenarios/examples/token-bucket.toml", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, c := range []struct {
		file, want string
		spoil      func(string) string
	}{
		{"metrics.json", "not a limitsim metrics.json", func(string) string { return "{}" }},
		{"metrics.json", `"limiters" is null`, func(s string) string {
			return regexp.MustCompile(`(?s)"limiters": \[.*?\n  \],`).ReplaceAllString(s, `"limiters": null,`)
		}},
		{"metrics.json", "elapsed_s -5", func(s string) string {
			return regexp.MustCompile(`"elapsed_s": [0-9.e+]+`).ReplaceAllString(s, `"elapsed_s": -5`)
		}},
		{"timeseries.csv", "not a limitsim timeseries.csv", func(string) string { return "garbage\n1\n" }},
		{"timeseries.csv", "column t_s", func(s string) string {
			head, rest, _ := strings.Cut(s, "\n")
			_, rest, _ = strings.Cut(rest, ",")
			return head + "\nNaN," + rest
		}},
	} {
		broken := t.TempDir()
		for _, f := range []string{"metrics.json", "timeseries.csv", "scenario.toml"} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if f == c.file {
				data = []byte(c.spoil(string(data)))
			}
			if err := os.WriteFile(filepath.Join(broken, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, errOut := cli("report", broken); code != exitInvalid || !strings.Contains(errOut, c.want) {
			t.Errorf("report with a broken %s (%s): exit %d: %s", c.file, c.want, code, errOut)
		}
	}
}
