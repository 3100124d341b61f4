package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim/client"
)

// traceInstants replays the trace of sc's workload as a run does, and
// returns its instants and the error that ended the replay.
func traceInstants(sc *Scenario) ([]time.Duration, error) {
	w := sc.Workload
	p := arrivals.Spec{Kind: arrivals.KindTrace, Times: w.TraceTimes, Source: w.TraceStream}.New()
	var out []time.Duration
	for {
		at, ok := p.Next(0, nil)
		if !ok {
			break
		}
		out = append(out, at)
	}
	if c, ok := p.(io.Closer); ok {
		return out, c.Close()
	}
	return out, nil
}

// bigTraceScenario replays trace.csv on one host of a 1 ms constant
// latency, with no limiter, until its last arrival.
const bigTraceScenario = `name = "big-trace"
[run]
seed = 3
requests = 1_000_000_000
interval = "1s"
[workload]
arrival = "trace"
trace = "trace.csv"
[client]
[[upstream]]
host = "*"
latency = { dist = "constant", value = "1ms" }
`

// writeTrace writes a trace of n instants spaced gap apart, from gap on,
// with a header, to path.
func writeTrace(tb testing.TB, path string, n int, gap time.Duration) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("t\n")
	var line []byte
	for i := 1; i <= n; i++ {
		ns := time.Duration(i) * gap
		line = fmt.Appendf(line[:0], "%d.%06d\n", ns/time.Second, ns%time.Second/time.Microsecond)
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// A trace file is read a line at a time in the formats, and with the
// errors (file:line), of the data files read whole: each text below
// replays what parseColumn reads (sorted, when out of order), or fails as
// it does. A trace in ascending order is streamed; one out of order is
// held in memory, sorted.
func TestTraceReadsAsDataFiles(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{
		"0\n0.01\n0.5\n0.5\n3\n",
		"t,host\n0.5,api\n1.5,cdn\n",
		"\uFEFFt\n1\n2\n",
		"\uFEFF1\r\n2\r\n",
		"# recorded\n\n1\n  \n# more\n2",
		"3\n1\n2\n",
		"1\n2\nx\n",
		"1\n-2\n",
		"1\n9e9\n",
		"1\nNaN\n",
		"t\n",
		"",
		"\n# nothing\n",
		"1\n" + strings.Repeat("9", 2<<20) + "\n",
	} {
		path := filepath.Join(dir, "trace.csv")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := parseColumn(path, []byte(text), false)
		slices.Sort(want)
		tf, err := readTrace(path, nil)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("%.40q: %v, want %v", text, err, werr)
			continue
		}
		if err != nil {
			continue
		}
		w := &Workload{TraceTimes: tf.sorted}
		if tf.sorted == nil {
			w.TraceStream = tf
		}
		got, err := traceInstants(&Scenario{Workload: *w})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%.40q replays %v (%v), want %v", text, got, err, want)
		}
		if ascending := slices.IsSorted(got) && text != "3\n1\n2\n"; ascending != (tf.sorted == nil) {
			t.Errorf("%.40q: streamed %v, want %v", text, tf.sorted == nil, ascending)
		}
	}
}

// A trace of more than 64 MiB out of order is refused at the first line
// out of order: it would be held whole to be sorted.
func TestLargeTraceOutOfOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte("t\n2\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readTrace(path, nil); err != nil {
		t.Fatalf("a small trace out of order: %v, want it sorted", err)
	}
	if err := os.Truncate(path, maxDataBytes+1); err != nil { // the rest, zeros, is never read
		t.Fatal(err)
	}
	_, err := readTrace(path, nil)
	if want := path + ":3: an instant before the one above it"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

// A run reads the trace as the scenario's load first read it, or fails
// naming the file: a byte changed in any chunk it reads (also in the rest
// of the chunk of a run that stopped early), a file cut shorter. The
// file's checksums are taken chunk by chunk, so that a run need not read
// the whole file to check what it read.
func TestTraceChangedUnderARun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.csv")
	const n = 400_000 // about 3.4 MB: 4 chunks
	writeTrace(t, path, n, 10*time.Microsecond)
	load := func() *Scenario {
		sc, err := Parse(filepath.Join(dir, "s.toml"), []byte(bigTraceScenario))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc := load()
	if got, err := traceInstants(sc); err != nil || len(got) != n {
		t.Fatalf("%d instants (%v), want %d", len(got), err, n)
	}
	changed := path + ": the file changed after it was first read"
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		read int // instants a run reads, 0: all
		want string
	}{
		{"a digit in the third chunk", func(b []byte) []byte { return flipDigit(b, 2<<20+100) }, 0, "bytes 2097152 to 3145728 differ"},
		{"a digit past a run's last read", func(b []byte) []byte { return flipDigit(b, 500<<10) }, 1, "bytes 0 to 1048576 differ"},
		{"a line cut", func(b []byte) []byte { return b[:len(b)-5] }, 1, fmt.Sprintf("%d bytes, now %d", len(orig), len(orig)-5)},
		{"as it was", func(b []byte) []byte { return b }, 1, ""},
	} {
		if err := os.WriteFile(path, c.edit(bytes.Clone(orig)), 0o644); err != nil {
			t.Fatal(err)
		}
		p := arrivals.Spec{Kind: arrivals.KindTrace, Source: sc.Workload.TraceStream}.New()
		for i := 0; c.read == 0 || i < c.read; i++ {
			if _, ok := p.Next(0, nil); !ok {
				break
			}
		}
		err := p.(io.Closer).Close()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), changed) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A run whose trace changed has no results: its error names the file.
	if err := os.WriteFile(path, flipDigit(bytes.Clone(orig), 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate(sc); err == nil || !strings.Contains(err.Error(), changed) {
		t.Errorf("a run of a changed trace: %v, want an error naming it", err)
	}
	restore()
	if _, err := simulate(sc); err != nil {
		t.Errorf("a run of the trace restored: %v", err)
	}
}

// flipDigit changes the first digit at or after offset i of b to another
// digit: the same size, another instant.
func flipDigit(b []byte, i int) []byte {
	for ; b[i] < '1' || b[i] > '8'; i++ {
	}
	b[i]++
	return b
}

// The same trace replayed streamed (a file in ascending order) and held in
// memory (the same instants out of order, sorted on loading) gives the
// same results and timeline, byte for byte.
func TestTraceStreamedRunsAsHeld(t *testing.T) {
	dir := t.TempDir()
	const n = 20_000
	writeTrace(t, filepath.Join(dir, "trace.csv"), n, 200*time.Microsecond)
	data, err := os.ReadFile(filepath.Join(dir, "trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimPrefix(string(data), "t\n"), "\n")
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	if err := os.WriteFile(filepath.Join(dir, "shuffled.csv"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A limiter and retries, so that the instants matter beyond their count.
	src := bigTraceScenario + "[[client.limiter]]\nname = \"bucket\"\nkind = \"token_bucket\"\nrate = 3000.0\nburst = 10\n"
	render := func(file string) (string, *Scenario) {
		sc, err := Parse(filepath.Join(dir, "s.toml"), []byte(strings.Replace(src, "trace.csv", file, 1)))
		out, err := mustSimulateErr(sc, err)
		if err != nil {
			t.Fatal(err)
		}
		if out.Results.Requests.Arrived != n {
			t.Fatalf("%s: %d arrivals, want %d", file, out.Results.Requests.Arrived, n)
		}
		var b bytes.Buffer
		metrics.WriteJSON(&b, out.Results)
		out.Series.WriteCSV(&b)
		return b.String(), sc
	}
	streamed, a := render("trace.csv")
	held, b := render("shuffled.csv")
	if a.Workload.TraceStream == nil || b.Workload.TraceTimes == nil {
		t.Fatalf("streamed %v, held %d instants: want one of each", a.Workload.TraceStream != nil, len(b.Workload.TraceTimes))
	}
	if streamed != held {
		t.Error("the trace streamed and held in memory give different results")
	}
}

// mustSimulateErr simulates a scenario that loaded with err.
func mustSimulateErr(sc *Scenario, err error) (*client.Outcome, error) {
	if err != nil {
		return nil, err
	}
	return simulate(sc)
}

// A run of the same scenario with the same trace twice reads the file
// twice, and gives the same bytes.
func TestTraceStreamedRunIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, filepath.Join(dir, "trace.csv"), 5_000, time.Millisecond)
	sc, err := NewLoader().LoadWith(writeScenario(t, dir, bigTraceScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	for i := range outs {
		out, err := simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		metrics.WriteJSON(&b, out.Results)
		outs[i] = b.String()
	}
	if outs[0] != outs[1] {
		t.Error("two runs of one streamed trace differ")
	}
	if !reflect.DeepEqual(sc.DataFiles(), []string{"trace.csv"}) {
		t.Errorf("data files %v", sc.DataFiles())
	}
}

// writeScenario writes src as s.toml in dir and returns its path.
func writeScenario(t *testing.T, dir, src string) string {
	t.Helper()
	path := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Loader that read a file whole as latency samples checks it as a trace
// from those bytes: a later load replaying it as a trace sees the text
// the samples saw, or fails naming the file if it changed in between.
func TestTraceFromFileReadAsSamples(t *testing.T) {
	dir := t.TempDir()
	samples := strings.Replace(minimalScenario, `latency = { dist = "exponential", mean = "50ms" }`, `latency = { dist = "empirical", samples = "data.csv" }`, 1)
	trace := strings.Replace(traceScenario(t), `trace = "trace.csv"`, `trace = "data.csv"`, 1)
	writeFiles(t, dir, map[string]string{"a.toml": samples, "b.toml": trace, "data.csv": "0.5\n1.5\n", "samples.csv": "0.1\n"})
	for _, change := range []bool{false, true} {
		ld := NewLoader()
		if _, err := ld.LoadWith(filepath.Join(dir, "a.toml"), nil); err != nil {
			t.Fatal(err)
		}
		if change {
			writeFiles(t, dir, map[string]string{"data.csv": "0.5\n2.5\n"})
		}
		sc, err := ld.LoadWith(filepath.Join(dir, "b.toml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := traceInstants(sc)
		if change && (err == nil || !strings.Contains(err.Error(), "data.csv: the file changed after it was first read")) {
			t.Errorf("a trace changed since it was read as samples replays %v (%v), want an error naming it", got, err)
		}
		if !change && (err != nil || !slices.Equal(got, []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond})) {
			t.Errorf("the trace replays %v (%v), want 0.5s and 1.5s", got, err)
		}
	}
}
