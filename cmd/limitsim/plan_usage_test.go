package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// plan needs exactly one of a sweep (flags or the scenario's [[sweep]]
// blocks) and a search; each mistake is a usage error saying which.
func TestPlanSaysWhatItNeeds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "token-bucket"}, "the scenario declares no sweep"},
		{[]string{"plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "--search", "client.limiter.quota.rate=50:150"}, "not both"},
	} {
		code, _, errOut := cli(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q: want exit %d saying %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

// A point the plan ran again on a longer run counts its timeouts and
// refusals over that run: the table marks those counts and says so, and
// leaves the other rows' counts unmarked.
func TestPlanTableMarksCountsOfLongerRuns(t *testing.T) {
	res := &planning.Result{Keys: []string{"k"}, Objective: "max:k", Complete: true, Points: []planning.Point{
		{Params: map[string]float64{"k": 1}, Metrics: map[string]float64{"requests.rejected": 100}},
		{Params: map[string]float64{"k": 2}, Metrics: map[string]float64{"requests.rejected": 900}, Horizon: &planning.Horizon{Lengthened: 300}},
	}}
	var b strings.Builder
	if err := writePlan(&b, res, nil); err != nil {
		t.Fatal(err)
	}
	markedApart := func(format, out string) {
		t.Helper()
		if !strings.Contains(out, "900*") || strings.Contains(out, "100*") || !strings.Contains(out, "longer run (see the horizon warning)") {
			t.Errorf("%s: the longer run's counts are not marked apart:\n%s", format, out)
		}
	}
	markedApart("terminal", b.String())
	doc := planDocument(planning.Spec{}, res)
	for format, write := range map[string]func(io.Writer) error{"plan.md": doc.WriteMarkdown, "plan.html": doc.WriteHTML} {
		b.Reset()
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		markedApart(format, b.String())
	}
	res.Points[1].Horizon = nil
	b.Reset()
	if err := writePlan(&b, res, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "*") {
		t.Errorf("a table with no longer run marks something:\n%s", b.String())
	}
	b.Reset()
	if err := planDocument(planning.Spec{}, res).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "longer run") {
		t.Errorf("plan.md with no longer run has the note:\n%s", b.String())
	}
}

// An empty range is a value that cannot be used, for a search as for a
// sweep: invalid input (exit 2), as the exit codes say of a flag's value.
func TestPlanEmptyRangesAreInvalidInput(t *testing.T) {
	for _, spec := range [][]string{{"--search", "client.limiter.quota.rate=90:10"}, {"--sweep", "client.limiter.quota.rate=90:10:5"}} {
		args := append(append([]string{"plan", "token-bucket"}, spec...), "--constraint", "rate_429<0.01")
		if code, _, errOut := cli(args...); code != exitInvalid || !strings.Contains(errOut, spec[0]) {
			t.Errorf("%v: exit %d, %q: want exit %d naming %s", spec, code, errOut, exitInvalid, spec[0])
		}
	}
}

// A flag's value that cannot be used is invalid input (exit 2), as the
// exit-code table says (`--instances 0`): replications, workers, draws
// and headroom out of range, for plan and compare alike.
func TestFlagValuesOutOfRangeAreInvalidInput(t *testing.T) {
	plan := []string{"plan", "token-bucket", "--sweep", "client.limiter.quota.rate=80,90"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(plan), "--replications", "0"), "--replications"},
		{append(slices.Clone(plan), "--workers", "0"), "--workers must be at least 1"},
		{append(slices.Clone(plan), "--uncertain", "-1"), "--uncertain takes a number of draws"},
		{append(slices.Clone(plan), "--headroom", "-10%"), "--headroom"},
		{[]string{"compare", "token-bucket", "token-bucket", "--replications", "0"}, "--replications 0"},
	} {
		if code, _, errOut := cli(c.args...); code != exitInvalid || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q: want exit %d naming %s", c.args, code, errOut, exitInvalid, c.want)
		}
	}
}

// A search bisects one key run after run: it cannot be sharded, and
// --shard with it is refused (exit 1) rather than ignored, which made
// every "shard" run the whole search and merge fail on them.
func TestSearchCannotBeSharded(t *testing.T) {
	args := []string{"plan", "token-bucket", "--search", "workload.rate=10:100", "--constraint", "rate_429<0.01", "--shard", "0/2"}
	if code, _, errOut := cli(args...); code != exitUsage || !strings.Contains(errOut, "--shard splits a grid") {
		t.Errorf("exit %d, %q: want exit %d refusing --shard with --search", code, errOut, exitUsage)
	}
}

// bench times a run that does its work: a deadlocked scenario stops
// early, so its rate is no measure, and bench says so with the model
// error's exit code rather than printing a rate.
func TestBenchRefusesARunStoppedEarly(t *testing.T) {
	code, out, errOut := cli("bench", "-n", "2000", "--scenario", "fail-deadlock")
	if code != exitModel || strings.Contains(out, "req_per_s") || !strings.Contains(errOut, "times nothing") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit %d and no rate", code, out, errOut, exitModel)
	}
}

// size's flags that go together, given alone, are a usage error (exit
// 1) as the exit-code table says; a value out of range stays invalid
// input (2).
func TestSizeFlagsThatGoTogether(t *testing.T) {
	base := []string{"size", "--quota", "100/s", "--latency-p50", "200ms", "--latency-p99", "1s"}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--window-limit", "5000"}, exitUsage},
		{[]string{"--memory-budget", "1GiB"}, exitUsage},
		{[]string{"--cost-quota", "1000/min"}, exitUsage},
		{[]string{"--cost-p50", "10"}, exitUsage},
		{[]string{"--cost-quota", "1000/min", "--cost-p50", "800", "--cost-p99", "800"}, exitInvalid},
		{[]string{"--instances", "0"}, exitInvalid},
	} {
		if code, _, errOut := cli(append(slices.Clone(base), c.args...)...); code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, errOut)
		}
	}
}

// A problem a swept, searched or --duration value causes names that flag,
// not --set, which the user did not give.
func TestProblemsNameTheFlagThatCausedThem(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "token-bucket", "--sweep", "client.limiter.quota.burst=0,5"}, "--sweep: client.limiter[0].burst"},
		{[]string{"plan", "token-bucket", "--search", "client.limiter.quota.burst=0:5", "--constraint", "rate_429<0.01"}, "--search: client.limiter[0].burst"},
		{[]string{"live", "token-bucket", "--duration", "-1s"}, "--duration: run.duration"},
	} {
		if code, _, errOut := cli(c.args...); code != exitInvalid || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d, %q: want exit %d starting %q", c.args, code, errOut, exitInvalid, c.want)
		}
	}
}
