package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// keepLines is a timeseries.csv's text with its header and the rows keep
// chooses (k counts the rows from 0).
func keepLines(text string, keep func(k, rows int) bool) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	out := lines[:1]
	for k, l := range lines[1:] {
		if keep(k, len(lines)-1) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// report DIR refuses a series that does not span the run metrics.json
// describes (exit 2, naming the file and the line), rather than draw
// charts of part of it: one cut short (head), begun late (tail), with a
// row missing, or of another interval. It drew them before, with charts
// up to t=990s of a 6659s run.
func TestReportRefusesASeriesNotSpanningTheRun(t *testing.T) {
	for _, c := range []struct {
		name string
		keep func(k, rows int) bool
		want string
	}{
		{"cut short", func(k, _ int) bool { return k < 99 }, "timeseries.csv: the last row (line 100) ends at t=990s, short by more than an interval (10s) of the run's 6659.171504425s"},
		{"begun late", func(k, rows int) bool { return k >= rows-100 }, "timeseries.csv: line 2, column t_s: 5670, where the run's row 1 ends its interval at 10"},
		{"a row missing", func(k, _ int) bool { return k != 48 }, "timeseries.csv: line 50, column t_s: 500, where the run's row 49 ends its interval at 490"},
		{"every other row", func(k, _ int) bool { return k%2 == 1 }, "timeseries.csv: line 2, column t_s: 20, where the run's row 1 ends its interval at 10"},
	} {
		dir := mixedFolder(t, map[string]string{"metrics.json": "reference-model", "timeseries.csv": "reference-model", "scenario.toml": "reference-model"},
			func(name, text string) string {
				if name == "timeseries.csv" {
					return keepLines(text, c.keep)
				}
				return text
			})
		code, _, errOut := cli("report", dir)
		if code != exitInvalid || !strings.Contains(errOut, filepath.Join(dir, c.want)) {
			t.Errorf("%s: exit %d: %s", c.name, code, errOut)
		}
	}
	// The whole series, and one shorter by its last row (within an
	// interval of the run's end, as a run a signal stopped leaves it),
	// are drawn.
	for name, keep := range map[string]func(k, rows int) bool{
		"whole":        func(int, int) bool { return true },
		"but its last": func(k, rows int) bool { return k < rows-1 },
	} {
		dir := mixedFolder(t, map[string]string{"metrics.json": "reference-model", "timeseries.csv": "reference-model"},
			func(n, text string) string {
				if n == "timeseries.csv" {
					return keepLines(text, keep)
				}
				return text
			})
		if code, _, errOut := cli("report", dir); code != exitOK {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
		}
	}
}
