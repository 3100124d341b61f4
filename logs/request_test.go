package logs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// matchRecorder is an Options.Match that notes each request it is given,
// method|path, and returns its number (from 1).
type matchRecorder struct{ seen []string }

func (m *matchRecorder) match(method, path []byte) int32 {
	m.seen = append(m.seen, fmt.Sprintf("%s|%s|%t|%t", method, path, method == nil, path == nil))
	return int32(len(m.seen))
}

// A CLF request line gives the method and the URL path without its query
// string, fragment, scheme or host, whatever the HTTP version; a line
// with no request ("-", "", a TLS handshake nginx logged) gives none.
func TestCLFRequestLine(t *testing.T) {
	for _, tc := range []struct{ request, want string }{
		{"GET /repos/o/r/issues?state=open&page=2 HTTP/1.1", "GET|/repos/o/r/issues|false|false"},
		{"-", "||true|true"},
		{"", "||true|true"},
		{"POST /graphql HTTP/2.0", "POST|/graphql|false|false"},
		{"DELETE /repos/o/r HTTP/2", "DELETE|/repos/o/r|false|false"},
		{"GET /", "GET|/|false|false"},
		{"GET https://api.github.com/user?x=1 HTTP/1.1", "GET|/user|false|false"},
		{"PATCH http://api.example.com HTTP/1.1", "PATCH|/|false|false"},
		{"GET /a#frag HTTP/1.1", "GET|/a|false|false"},
		{"GET ?q HTTP/1.1", "GET||false|true"},
		{"OPTIONS * HTTP/1.1", "OPTIONS|*|false|false"},
		{`\x16\x03\x01\x02\x00\x01`, `\x16\x03\x01\x02\x00\x01||false|true`},
		{`GET /say\"hi\" HTTP/1.1`, `GET|/say\"hi\"|false|false`},
	} {
		m := &matchRecorder{}
		line := fmt.Sprintf(`203.0.113.7 - - [10/Oct/2023:13:55:36 +0000] "%s" 200 5 "-" "ua" 0.1`+"\n", tc.request)
		recs, _ := readAll(t, line, Options{Match: m.match})
		if len(recs) != 1 || len(m.seen) != 1 || recs[0].Match != 1 || m.seen[0] != tc.want {
			t.Errorf("%q: %d records, match %v; want %q", tc.request, len(recs), m.seen, tc.want)
		}
	}
}

// JSON and CSV logs give a method and a URL path only when the mapping
// names their fields; a mapped field that a line lacks gives none.
func TestMappedMethodAndPath(t *testing.T) {
	jsonLog := `{"time":1,"verb":"POST","url":"/v1/chat?stream=1"}` + "\n" + `{"time":2,"url":"/v1/x"}` + "\n"
	csvLog := "time,verb,url\n1,POST,/v1/chat?stream=1\n2,,/v1/x\n"
	for _, log := range []string{jsonLog, csvLog} {
		m := &matchRecorder{}
		recs, _ := readAll(t, log, Options{Mapping: Mapping{Method: "verb", Path: "url"}, Match: m.match})
		if want := "POST|/v1/chat|false|false |/v1/x|true|false"; len(recs) != 2 || strings.Join(m.seen, " ") != want || recs[1].Match != 2 {
			t.Errorf("%q: %v; want %s", log, m.seen, want)
		}
		m = &matchRecorder{}
		if recs, _ = readAll(t, log, Options{Match: m.match}); len(m.seen) != 0 || recs[0].Match != 0 {
			t.Errorf("%q without a mapping: matched %v", log, m.seen)
		}
	}
	if _, err := firstRecord("time,url\n1,/x\n", Options{Mapping: Mapping{Method: "verb"}}); err == nil || !strings.Contains(err.Error(), `no column "verb"`) {
		t.Errorf("an unknown method column: %v", err)
	}
}

// firstRecord reads a log's first record, for its error.
func firstRecord(text string, opt Options) (Record, error) {
	var rec Record
	r, err := NewReader(strings.NewReader(text), "access.log", opt)
	if err != nil {
		return rec, err
	}
	_, err = r.Next(&rec)
	return rec, err
}

// Matching requests costs no allocation a record, however many distinct
// URLs the log holds.
func TestMatchAllocatesNothing(t *testing.T) {
	calls := 0
	r, err := NewReader(&clfGenerator{lines: 1 << 16}, "gen.log", Options{Match: func(method, path []byte) int32 {
		calls++
		return int32(bytes.Count(path, []byte("/")))
	}})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	next := func() {
		if ok, err := r.Next(&rec); !ok || err != nil || rec.Match != 3 {
			t.Fatalf("record %+v, %v, %v", rec, ok, err)
		}
	}
	for range 1 << 12 { // past the reorder window's growth
		next()
	}
	if n := testing.AllocsPerRun(1<<14, next); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
	if calls < 1<<14 {
		t.Errorf("match called %d times", calls)
	}
}

func TestURLPath(t *testing.T) {
	for in, want := range map[string]string{"/a/b?c=/d": "/a/b", "https://h.example/x/y": "/x/y", "http://h:80": "/", "-": "", "": "", "?x": "", "/p#f": "/p", "a://b/c": "/c", "/redirect?to=http://x/y": "/redirect"} {
		if got := string(URLPath([]byte(in))); got != want {
			t.Errorf("URLPath(%q) = %q, want %q", in, got, want)
		}
	}
}
