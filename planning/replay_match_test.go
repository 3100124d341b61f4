package planning

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/sim/client"
)

// pointsScenario is github-style-points' structure: reads (GET, 1 point)
// and writes (POST, 5 points) drawn 70/30 by weight, and one quota of
// limit points a second over every host. Its extra text is added to the
// paths (a third [[client.path]], say).
func pointsScenario(t *testing.T, limit int, extra string) *client.Config {
	t.Helper()
	return buildScenario(t, "points.toml", fmt.Sprintf(`name = "points"
[run]
seed = 5
duration = "10s"
[workload]
rate = 1.0
[client.on_429]
pause = "none"
[[client.path]]
name = "read"
method = "GET"
weight = 0.7
cost = 1
limiters = []
[[client.path]]
name = "write"
method = "POST"
weight = 0.3
cost = 5
limiters = []
%s
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
[[quota]]
name = "points"
kind = "fixed_window"
limit = %d
window = "1s"
unit = "cost"
`, extra, limit))
}

// pointsLog writes a combined log of perSecond requests a second for
// seconds seconds, each a GET (half of them) or a POST with a query
// string and the HTTP version varied, and returns its path and the
// refusals and points taken that a quota of limit points a second gives
// it, computed directly: in each second, in the log's order, a request
// is refused when it would take the second past the limit.
func pointsLog(t *testing.T, seconds, perSecond, limit int) (path string, refused, taken int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 9))
	var b strings.Builder
	versions := []string{"HTTP/1.1", "HTTP/2.0", "HTTP/2"}
	for s := range seconds {
		at := genT0.Add(time.Duration(s) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		used := int64(0)
		for range perSecond {
			method, target, cost := "GET", "/repos/o/r/issues?page=2", int64(1)
			if rng.IntN(2) == 0 {
				method, target, cost = "POST", "/repos/o/r/issues", 5
			}
			if used+cost > int64(limit) {
				refused++
			} else {
				used += cost
				taken += cost
			}
			fmt.Fprintf(&b, "10.0.0.1 - - [%s] \"%s %s %s\" 200 12 \"-\" \"gh/1\" 0.010\n", at, method, target, versions[rng.IntN(len(versions))])
		}
	}
	path = filepath.Join(t.TempDir(), "points.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, refused, taken
}

// A combined log's request lines put each GET on the path of 1 point and
// each POST on the path of 5, whatever the paths' weights: the quota's
// refusals and the points it took are those of a direct computation.
// Drawn by weight (70/30 against the log's 50/50), both would differ.
func TestReplayPathsByLoggedMethod(t *testing.T) {
	const limit = 100
	path, refused, taken := pointsLog(t, 20, 40, limit)
	out, c, err := Replay(pointsScenario(t, limit, ""), ReplayLog{Path: path}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	q := out.Results.Quotas[0]
	if c.Total.Refusals != refused || q.Refused != refused || q.Taken != taken {
		t.Errorf("replay refused %d (quota %d) and took %d points; direct computation: %d refused, %d points", c.Total.Refusals, q.Refused, q.Taken, refused, taken)
	}
	if c.PathsMatched != 800 || c.PathsUnmatched != 0 || len(c.FirstUnmatched) != 0 {
		t.Errorf("%d matched, %d unmatched %v; want 800, 0", c.PathsMatched, c.PathsUnmatched, c.FirstUnmatched)
	}
}

// The same log in JSON lines matches only with its method mapped: not
// mapped, the paths are drawn by weight and nothing is counted.
func TestReplayPathsByMappedMethod(t *testing.T) {
	const limit = 100
	rng := rand.New(rand.NewPCG(4, 2))
	var b strings.Builder
	var refused int64
	used := int64(0)
	for i := range 300 { // 300 in 3 s, in windows of 1 s
		if i%100 == 0 {
			used = 0
		}
		method, cost := "GET", int64(1)
		if rng.IntN(2) == 0 {
			method, cost = "POST", 5
		}
		if used+cost > limit {
			refused++
		} else {
			used += cost
		}
		fmt.Fprintf(&b, "{\"time\":%d,\"verb\":%q,\"url\":\"https://api.example.com/repos/o/r\",\"status\":200,\"request_time\":0.01}\n", genT0.UnixMilli()+int64(i)*10, method)
	}
	path := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pointsScenario(t, limit, "")
	for _, tc := range []struct {
		method  string
		matched int64
	}{{"verb", 300}, {"", 0}} {
		out, c, err := Replay(cfg, ReplayLog{Path: path, Options: logs.Options{Mapping: logs.Mapping{Method: tc.method, Path: "url"}}}, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out.Series.Close()
		if c.PathsMatched != tc.matched {
			t.Errorf("method field %q: %d matched, want %d", tc.method, c.PathsMatched, tc.matched)
		}
		if tc.method != "" && c.Total.Refusals != refused {
			t.Errorf("method field %q: %d refused, direct computation %d", tc.method, c.Total.Refusals, refused)
		}
	}
}

// A record whose method no path declares (and no path takes any method)
// is counted and named, drawn by weight, or fails the replay when asked.
func TestReplayUnmatchedRecords(t *testing.T) {
	var b strings.Builder
	for i, m := range []string{"GET", "HEAD", "POST", "DELETE", "GET", "-"} {
		request := m + " /repos/o/r HTTP/1.1"
		if m == "-" {
			request = "-"
		}
		fmt.Fprintf(&b, "10.0.0.1 - - [01/Mar/2026:12:00:%02d +0000] \"%s\" 200 1 0.01\n", i, request)
	}
	path := filepath.Join(t.TempDir(), "u.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pointsScenario(t, 100, "")
	out, c, err := Replay(cfg, ReplayLog{Path: path}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out.Series.Close()
	want := []string{path + ":2", path + ":4", path + ":6"}
	if c.PathsMatched != 3 || c.PathsUnmatched != 3 || strings.Join(c.FirstUnmatched, " ") != strings.Join(want, " ") || c.Total.Sent != 6 {
		t.Errorf("%d matched, %d unmatched %v, %d sent; want 3, 3 %v, 6", c.PathsMatched, c.PathsUnmatched, c.FirstUnmatched, c.Total.Sent, want)
	}
	_, _, err = Replay(cfg, ReplayLog{Path: path, RefuseUnmatched: true}, client.Options{})
	if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "3 records matched no [[client.path]]") || !strings.Contains(err.Error(), want[0]) {
		t.Errorf("refusing unmatched records: %v", err)
	}
	// A path that declares no method takes the methods no path declares.
	out, c, err = Replay(pointsScenario(t, 100, "[[client.path]]\nname = \"other\"\nlimiters = []\n"), ReplayLog{Path: path, RefuseUnmatched: true}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out.Series.Close()
	if c.PathsMatched != 6 || c.PathsUnmatched != 0 {
		t.Errorf("with a path of any method: %d matched, %d unmatched; want 6, 0", c.PathsMatched, c.PathsUnmatched)
	}
}

// The matcher: by method when it names one path; among paths sharing a
// method, by the URL's last segment that names one.
func TestPathMatcher(t *testing.T) {
	m := newPathMatcher([]client.Path{{Name: "repos", Method: "GET"}, {Name: "issues", Method: "GET"}, {Name: "write", Method: "POST"}, {Name: "rest"}})
	for _, tc := range []struct {
		method, path string
		want         int32
	}{
		{"POST", "/anything", 3},
		{"GET", "/repos/o/r/issues/7", 2},
		{"GET", "/repos/o/r", 1},
		{"GET", "/users/u", matchNone},
		{"GET", "", matchNone},
		{"PATCH", "/repos/o/r", 4},
		{"", "", 4},
		{"get", "/repos", 4}, // methods are case-sensitive (RFC 9110, 9.1)
	} {
		var method, path []byte
		if tc.method != "" {
			method = []byte(tc.method)
		}
		if tc.path != "" {
			path = []byte(tc.path)
		}
		if got := m.match(method, path); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
	if newPathMatcher([]client.Path{{Name: "a"}, {Name: "b"}}) != nil || newPathMatcher([]client.Path{{Name: "a", Method: "GET"}}) != nil {
		t.Error("a matcher where there is nothing to match")
	}
	if n := testing.AllocsPerRun(100, func() { m.match([]byte("GET"), []byte("/repos/o/r/issues/7")) }); n != 0 {
		t.Errorf("%v allocations a match", n)
	}
}
