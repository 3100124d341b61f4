package scenarios

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A data file's first column is read strictly: only the first line may be
// a header; a negative value, a byte-order mark, a line too long and a
// file with no value say so with the file and the line. Before, every
// non-numeric line up to the first value was taken as a header, so a
// negative first sample vanished; a mark hid the first value.
func TestReadColumn(t *testing.T) {
	read := columnOf(t, "data.csv")
	for _, c := range []struct {
		content   string
		durations bool
		want      []time.Duration
	}{
		{"seconds\n0.1\n0.2\n", false, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"\uFEFF0.1\n0.2\n", false, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"# comment\n\nlatency\n5ms\n0.25 \n", true, []time.Duration{5 * time.Millisecond, 250 * time.Millisecond}},
		{"latency_s\n 1e-3 \n\t0.5\n", true, []time.Duration{time.Millisecond, 500 * time.Millisecond}},
		{"t,host\n0.001,a\n2.5,b\n", false, []time.Duration{time.Millisecond, 2500 * time.Millisecond}},
	} {
		got, err := read(c.content, c.durations)
		if err != nil || len(got) != len(c.want) || got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("%q: %v (%v), want %v", c.content, got, err, c.want)
		}
	}
	for _, c := range []struct {
		content   string
		durations bool
		want      string
	}{
		{"-5ms\n100ms\n200ms\n", true, "data.csv:1: -5ms: a duration must not be negative"},
		{"-1\n2\n", false, "data.csv:1: the first column must be a non-negative number"},
		{"time\nfoo\n0.1\n", false, `data.csv:2: the first column is not a number of seconds: "foo"`},
		{"100ms\n200ms\n", false, `data.csv:1: the first column is not a number of seconds: "100ms"`},
		{"0.1;0.2\n", false, `data.csv:1: the first column is not a number of seconds: "0.1;0.2"`},
		{"0.1\n" + strings.Repeat("9", 2<<20) + "\n", false, "data.csv:2: bufio.Scanner: token too long (a line may hold at most 1 MiB)"},
	} {
		if _, err := read(c.content, c.durations); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: %v, want %q", c.content, err, c.want)
		}
	}
}

// A trace whose every instant comes after run.duration is refused: the
// run would end with no arrival and call itself healthy.
func TestTraceAfterTheRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "late.csv"), []byte("20\n30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(minimalScenario, "arrival = \"poisson\"\nrate = 50.0", "arrival = \"trace\"\ntrace = \"late.csv\"", 1), `duration = "60s"`, `duration = "10s"`, 1)
	src = strings.Replace(src, `warmup = "5s"`, `warmup = "1s"`, 1)
	_, err := Parse(filepath.Join(dir, "s.toml"), []byte(src))
	if err == nil || !strings.Contains(err.Error(), "at or after run.duration (10s): nothing would arrive") {
		t.Fatalf("%v", err)
	}
}

// A data file's values are read into room bounded by the file's size,
// whatever its count of lines: a file of one value and 4 MiB of blank
// lines allocated eight times its size when the room was a value a line.
func TestReadColumnRoomFollowsSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse.csv")
	size := 4 << 20
	if err := os.WriteFile(p, []byte("0.5\n"+strings.Repeat("\n", size)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	vals, err := readColumn(p, false)
	runtime.ReadMemStats(&after)
	if err != nil || len(vals) != 1 || vals[0] != 500*time.Millisecond {
		t.Fatalf("%v (%v), want one value of 0.5 s", vals, err)
	}
	// The file's bytes once, the values' room at most twice the file.
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(4*size) {
		t.Errorf("reading a %d-byte file allocated %d bytes, want at most %d", size, got, 4*size)
	}
}

// readColumn reads the data file at path as a scenario's load does.
func readColumn(path string, durations bool) ([]time.Duration, error) {
	data, err := readBounded(path, maxDataBytes)
	if err != nil {
		return nil, err
	}
	return parseColumn(path, data, durations)
}

// columnOf returns a function that writes content to a file named name
// in a folder of its own and reads its column as readColumn does.
func columnOf(t *testing.T, name string) func(content string, durations bool) ([]time.Duration, error) {
	p := filepath.Join(t.TempDir(), name)
	return func(content string, durations bool) ([]time.Duration, error) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return readColumn(p, durations)
	}
}
