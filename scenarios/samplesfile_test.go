package scenarios

import (
	"strings"
	"testing"
	"time"
)

// A latency samples file holds one value a line: a line of more fields
// is refused at its line, not read by its first field (a status code
// taken for seconds). A first line is a header only when it holds no
// digit; otherwise it is a value, and a bad one is an error at line 1,
// not dropped. A trace still reads the first column of its CSV.
func TestSamplesFileOneValueALine(t *testing.T) {
	read := columnOf(t, "lat.csv")
	for _, c := range []struct {
		content   string
		durations bool
		want      string
	}{
		{"status,latency\n200,0.1\n200,0.2\n", true, `lat.csv:2: "200,0.1" holds 2 comma-separated fields: a samples file takes one latency a line`},
		{"latency_ms,status\n120,200\n", true, `lat.csv:2: "120,200" holds 2 comma-separated fields`},
		{"0.1,200\n0.2,200\n", true, `lat.csv:1: "0.1,200" holds 2 comma-separated fields`},
		{"120 ms\n130 ms\n", true, `lat.csv:1: "120 ms" is not a latency`},
		{"t1\n0.1\n", false, `lat.csv:1: the first column is not a number of seconds: "t1"`},
	} {
		if got, err := read(c.content, c.durations); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (%v), want an error %q", c.content, got, err, c.want)
		}
	}
	for _, c := range []struct {
		content   string
		durations bool
		want      []time.Duration
	}{
		{"latency\n0.1\n120ms\n", true, []time.Duration{100 * time.Millisecond, 120 * time.Millisecond}},
		{"\uFEFF0.1\n0.2\n0.3\n0.4\n", true, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}},
		{"t,host\n0.5,a\n1.5,b\n", false, []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}},
	} {
		got, err := read(c.content, c.durations)
		if err != nil || len(got) != len(c.want) || got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("%q: %v (%v), want %v", c.content, got, err, c.want)
		}
	}
}
