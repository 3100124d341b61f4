package logs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// readAll reads every record of text.
func readAll(t *testing.T, text string, opt Options) ([]Record, *Reader) {
	t.Helper()
	r, err := NewReader(strings.NewReader(text), "access.log", opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for {
		var rec Record
		ok, err := r.Next(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out, r
		}
		out = append(out, rec)
	}
}

// t0 is 10/Oct/2023:13:55:36 +0000 in Unix nanoseconds.
var t0 = time.Date(2023, 10, 10, 13, 55, 36, 0, time.UTC).UnixNano()

func TestCombinedWithRequestTime(t *testing.T) {
	log := `203.0.113.7 - key-a [10/Oct/2023:13:55:36 +0000] "GET /v1/chat HTTP/1.1" 200 2326 "-" "curl/8.0" 0.250
203.0.113.8 - - [10/Oct/2023:13:55:37 +0000] "POST /v1/embed HTTP/1.1" 429 0 "https://x" "python \"req\"" 0.003
203.0.113.9 - key-b [10/Oct/2023:14:55:38 +0100] "GET /v1/chat HTTP/1.1" 503 12
`
	recs, r := readAll(t, log, Options{Mapping: Mapping{Tenant: "remote_user", Host: "path"}})
	if r.Format() != FormatCLF || len(recs) != 3 {
		t.Fatalf("format %v, %d records", r.Format(), len(recs))
	}
	want := []Record{
		{Time: t0, Precision: time.Second, Host: "/v1/chat", Tenant: "key-a", Status: 200, Latency: 250 * time.Millisecond, HasLatency: true, Cost: 1, Remaining: -1, Reset: -1, Line: 1},
		{Time: t0 + 1e9, Precision: time.Second, Host: "/v1/embed", Tenant: "", Status: 429, Latency: 3 * time.Millisecond, HasLatency: true, Cost: 1, Remaining: -1, Reset: -1, Line: 2},
		{Time: t0 + 2e9, Precision: time.Second, Host: "/v1/chat", Tenant: "key-b", Status: 503, Cost: 1, Remaining: -1, Reset: -1, Line: 3},
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, recs[i], want[i])
		}
	}
	if !recs[1].Throttled() || !recs[2].Throttled() || recs[0].Throttled() {
		t.Error("429 and 503 are throttled, 200 is not")
	}
}

func TestJSONLines(t *testing.T) {
	log := `{"ts":"2023-10-10T13:55:36.125Z","tenant":"t1","status":200,"latency_ms":"12.5","tokens":300,"rl_remaining":"7"}
{"ts":"2023-10-10T13:55:36.5Z","tenant":"t2","status":"429","latency_ms":1,"tokens":5,"rl_remaining":null}
`
	m := Mapping{Time: "ts", Tenant: "tenant", Latency: "latency_ms", LatencyUnit: "ms", Cost: "tokens", Remaining: "rl_remaining"}
	recs, _ := readAll(t, log, Options{Mapping: m})
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	a, b := recs[0], recs[1]
	if a.Time != t0+125e6 || a.Precision != time.Millisecond || a.Latency != 12500*time.Microsecond || a.Cost != 300 || a.Remaining != 7 || a.Tenant != "t1" {
		t.Errorf("first: %+v", a)
	}
	if b.Time != t0+500e6 || b.Precision != 100*time.Millisecond || b.Status != 429 || b.Remaining != -1 || b.Cost != 5 {
		t.Errorf("second: %+v", b)
	}
}

func TestCSVUnixTimes(t *testing.T) {
	log := "time,host,status,request_time,key\n" +
		"1696946136.001,\"api.example.com\",200,0.1,\"a,b\"\n" +
		"1696946136123,api.example.com,429,0.002,\"say \"\"hi\"\"\"\n"
	recs, _ := readAll(t, log, Options{Mapping: Mapping{Host: "host", Tenant: "key"}})
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0].Time != t0+1e6 || recs[0].Precision != time.Millisecond || recs[0].Tenant != "a,b" {
		t.Errorf("first: %+v", recs[0])
	}
	// 1696946136123 is past 10¹¹: milliseconds.
	if recs[1].Time != t0+123e6 || recs[1].Precision != time.Millisecond || recs[1].Tenant != `say "hi"` || recs[1].Status != 429 {
		t.Errorf("second: %+v", recs[1])
	}
}

// A line a little late is put in its place; one later than the window is
// bad, and named with its file and line.
func TestReorderWindow(t *testing.T) {
	log := "time\n100\n103\n101\n110\n102\n111\n"
	recs, r := readAll(t, log, Options{Reorder: 5 * time.Second})
	var got []int64
	for _, rec := range recs {
		got = append(got, rec.Time/1e9)
	}
	if want := []int64{100, 101, 103, 110, 111}; !equal(got, want) {
		t.Errorf("times %v, want %v", got, want)
	}
	n, named := r.Bad()
	if n != 1 || len(named) != 1 || !strings.HasPrefix(named[0].String(), "access.log:6: out of order") {
		t.Errorf("bad %d %v", n, named)
	}
}

// MaxHeld bounds what the reader holds, whatever the window.
func TestMaxHeld(t *testing.T) {
	log := "time\n10\n11\n12\n13\n1\n"
	recs, r := readAll(t, log, Options{Reorder: time.Hour, MaxHeld: 2})
	if len(recs) != 4 {
		t.Errorf("%d records, want 4", len(recs))
	}
	if n, _ := r.Bad(); n != 1 {
		t.Errorf("%d bad, want the late line", n)
	}
}

func TestBadLinesNamed(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"time\":1,\"status\":200}\n")
	for range 7 {
		b.WriteString("{\"time\":2,\"status\":999}\n")
	}
	b.WriteString("not json\n")
	b.WriteString(strings.Repeat("x", MaxLine+10) + "\n")
	b.WriteString("{\"time\":3}\n")
	recs, r := readAll(t, b.String(), Options{})
	n, named := r.Bad()
	if len(recs) != 2 || n != 9 || len(named) != MaxBadNamed {
		t.Fatalf("%d records, %d bad, %d named", len(recs), n, len(named))
	}
	if s := named[0].String(); s != `access.log:2: status "999" is not an HTTP status` {
		t.Errorf("first bad line %q", s)
	}
	if r.Lines() != 11 {
		t.Errorf("%d lines, want 11", r.Lines())
	}
}

func TestNoUsableLine(t *testing.T) {
	for name, log := range map[string]string{"empty": "", "comments": "# a\n\n", "bad": "{\"time\":\"x\"}\n"} {
		r, err := NewReader(strings.NewReader(log), "a.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		ok, err := r.Next(&rec)
		if ok || !errors.Is(err, ErrNoRecords) {
			t.Errorf("%s: ok %v, err %v; want ErrNoRecords", name, ok, err)
		}
		if name == "bad" && !strings.Contains(err.Error(), "a.log:1: time") {
			t.Errorf("%s: %v does not name the line", name, err)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, opt := range []Options{{Mapping: Mapping{TimeFormat: "yesterday"}}, {Mapping: Mapping{LatencyUnit: "h"}}, {MaxHeld: -1}} {
		if _, err := NewReader(strings.NewReader(""), "a", opt); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", opt, err)
		}
	}
	r, _ := NewReader(strings.NewReader("a,b\n1,2\n"), "a.csv", Options{Mapping: Mapping{Tenant: "key"}})
	var rec Record
	if _, err := r.Next(&rec); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "a.csv:1:") {
		t.Errorf("a missing CSV column: %v", err)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The CLF fast path reads what time.Parse reads, and refuses what it
// refuses.
func TestCLFTimeFastPath(t *testing.T) {
	for _, s := range []string{"10/Oct/2023:13:55:36 +0000", "29/Feb/2024:23:59:59 -0930", "01/Jan/1970:00:00:00 +1400",
		"31/Feb/2023:13:55:36 +0000", "10/Okt/2023:13:55:36 +0000", "10/Oct/2023:24:55:36 +0000", "1/Oct/2023:13:55:36 +0000", "10/Oct/2023:13:55:36 0000"} {
		want, werr := time.Parse(clfLayout, s)
		got, ok := parseCLFTime([]byte(s))
		if ok != (werr == nil) || (ok && got != want.UnixNano()) {
			t.Errorf("%s: got %d, %v; time.Parse %v, %v", s, got, ok, want.UnixNano(), werr)
		}
	}
}

// An explicit Unix unit whose magnitude says the other unit is a bad
// line naming the likely format, not a log moved to 1970 (seconds read
// as milliseconds) or refused as out of range without a hint.
func TestUnixUnitMismatch(t *testing.T) {
	for _, c := range []struct {
		format, time, want string
	}{
		{"unix_ms", "1696946136.001", "as Unix milliseconds, before 1973-03-03: Unix seconds? (time format unix)"},
		{"unix", "1696946136001", "too large for Unix seconds: Unix milliseconds? (time format unix_ms)"},
	} {
		r, err := NewReader(strings.NewReader(`{"time":`+c.time+`,"status":200}`+"\n"), "a.log", Options{Mapping: Mapping{TimeFormat: c.format}})
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		ok, err := r.Next(&rec)
		if ok || !errors.Is(err, ErrNoRecords) || !strings.Contains(err.Error(), "a.log:1: time") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: ok %v (time %d), err %v; want a bad line saying %q", c.format, c.time, ok, rec.Time, err, c.want)
		}
	}
	// Each unit still reads its own magnitude.
	for format, raw := range map[string]string{"unix": "1696946136.001", "unix_ms": "1696946136001"} {
		recs, _ := readAll(t, `{"time":`+raw+`,"status":200}`+"\n", Options{Mapping: Mapping{TimeFormat: format}})
		if len(recs) != 1 || recs[0].Time != t0+1e6 {
			t.Errorf("%s %s: %+v, want time %d", format, raw, recs, t0+1e6)
		}
	}
}
