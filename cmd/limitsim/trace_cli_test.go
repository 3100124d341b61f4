package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unfinishedArgs are the args of a span closed at a run's stop.
type unfinishedArgs struct {
	Unfinished bool   `json:"unfinished"`
	Stop       string `json:"stop"`
}

// The deadlock's trace shows every request in progress at the stall
// parked on acquire(): a wait span on db or cache that runs to the stop,
// marked unfinished, on each of their rows; with --trace-from as without.
func TestTraceShowsTheDeadlock(t *testing.T) {
	code, stdout, errOut := cli("run", "fail-deadlock", "--json", "--quiet")
	if code != exitModel {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Requests struct {
			InProgress int `json:"in_progress"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Requests.InProgress < 100 {
		t.Fatalf("in progress %d (%v)", res.Requests.InProgress, err)
	}
	for _, args := range [][]string{{"fail-deadlock"}, {"fail-deadlock", "--trace-from", "10s"}} {
		rows, spans := map[int]bool{}, map[int]int{}
		waits := map[string]int{}
		for _, e := range readTrace(t, args...) {
			if e.Pid == 0 {
				continue
			}
			if e.Ph == "M" && e.Name == "thread_name" {
				rows[e.Tid] = true
			}
			if e.Ph != "X" {
				continue
			}
			spans[e.Tid]++
			var a unfinishedArgs
			if err := json.Unmarshal(e.Args, &a); err == nil && a.Unfinished {
				if a.Stop != "deadlock" || e.Ts+e.Dur != 30e6 {
					t.Fatalf("%v: unfinished span %+v does not run to the stall at 30s", args, e)
				}
				waits[e.Name]++
			}
		}
		for tid := range rows {
			if spans[tid] == 0 {
				t.Fatalf("%v: request %d has a row and no span", args, tid)
			}
		}
		if waits["limiter db"] == 0 || waits["limiter cache"] == 0 || len(waits) != 2 {
			t.Errorf("%v: unfinished spans %v, want waits on db and on cache", args, waits)
		}
		if len(args) == 1 && waits["limiter db"]+waits["limiter cache"] != res.Requests.InProgress {
			t.Errorf("%v: %v unfinished waits, want the %d requests in progress", args, waits, res.Requests.InProgress)
		}
	}
}

// Requests refused at once have an instant at their refusal naming the
// bound: reference-model refuses at client.max_waiting.
func TestTraceShowsRefusals(t *testing.T) {
	evs := readTrace(t, "reference-model", "--set", "run.requests=20000", "--no-verify", "--trace-from", "0s", "--trace-outcome", "rejected", "--trace-requests", "200000")
	rows, refused := 0, map[int]int{}
	for _, e := range evs {
		switch {
		case e.Pid == 0:
		case e.Ph == "M" && e.Name == "thread_name":
			rows++
		case e.Ph == "i" && e.Name == "rejected by client.max_waiting":
			refused[e.Tid]++
		}
	}
	if rows < 1000 || len(refused) != rows {
		t.Fatalf("%d rows, %d with a refusal instant: want one on each", rows, len(refused))
	}
}

// A trace that holds no request says why on stderr, and the run exits 0:
// the run ended before --trace-from, or no request followed ended as
// --trace-outcome asks. A trace that holds some says nothing of it.
func TestEmptyTraceSaysWhy(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace-from", "1000s"}, "no request matched, so the trace holds none: the run ended at 66.913s, before --trace-from 1000s"},
		{[]string{"--trace-from", "60s"}, "no request arrived at or after --trace-from 60s (the last arrived at "},
		{[]string{"--trace-from", "0s", "--trace-outcome", "timed_out"}, "no request matched, so the trace holds none: none of the 4826 requests followed ended timed_out"},
		{[]string{"--trace-from", "30s", "--trace-requests", "10"}, ""},
	} {
		file := filepath.Join(t.TempDir(), "t.json")
		code, _, errOut := cli(append([]string{"run", "fail-thundering-herd", "--no-verify", "--quiet", "--trace", file}, c.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		if got := strings.Contains(errOut, "no request matched"); got != (c.want != "") || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut, c.want)
		}
		var tr struct {
			TraceEvents []traceEvent `json:"traceEvents"`
		}
		if err := json.Unmarshal([]byte(mustRead(t, file)), &tr); err != nil {
			t.Fatalf("%v: trace is not JSON: %v", c.args, err)
		}
	}
}

// --trace naming a file that -o writes (an output, a chart, the copy of
// a data file) is refused before the run, exit 2, and nothing is written;
// a file elsewhere in the folder is taken.
func TestTraceIsNotAnOutputOfO(t *testing.T) {
	sc := traceDataScenario(t)
	for _, name := range []string{"metrics.json", "report.html", "in-flight.png", "x/../timeseries.csv", "t.csv"} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, errOut := cli("run", sc, "--no-verify", "--quiet", "-o", out, "--trace", filepath.Join(out, name))
		if code != exitInvalid || !strings.Contains(errOut, "--trace: ") || !strings.Contains(errOut, "choose another file") {
			t.Errorf("--trace %s in -o: exit %d: %s", name, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(out, "metrics.json")); err == nil {
			t.Errorf("--trace %s in -o: the run went ahead", name)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	file := filepath.Join(out, "trace.json")
	if code, _, errOut := cli("run", sc, "--no-verify", "--quiet", "-o", out, "--trace", file); code != exitOK {
		t.Fatalf("--trace beside the outputs: exit %d: %s", code, errOut)
	}
	if data := mustRead(t, file); !strings.Contains(data, `"traceEvents"`) {
		t.Errorf("the trace beside the outputs was not kept: %s", fmt.Sprint(len(data)))
	}
}

// traceDataScenario writes a scenario whose arrivals are the data file
// t.csv beside it ("0\n0.5\n1\n"), and returns its path.
func traceDataScenario(t *testing.T) string {
	t.Helper()
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "t.csv"), []byte("0\n0.5\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(proj, "s.toml")
	if err := os.WriteFile(sc, []byte("name = \"data\"\n[run]\nduration = \"2s\"\n[workload]\narrival = \"trace\"\ntrace = \"t.csv\"\n"+
		"[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sc
}
