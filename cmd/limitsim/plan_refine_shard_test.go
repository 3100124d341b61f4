package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// A refined plan sharded round by round: each round's parts merged into
// the state the next round resumes from, and the last state resumed
// whole with -o, writes the plan.json of the refined plan run whole, byte
// for byte, on 2 shards and on 3. The buckets' bursts outlast the 10 s
// run, so points run again longer, the recommended one among them: its
// robustness check, resumed, runs on the same longer horizon.
func TestShardedRefinedPlanIsTheWholeOne(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	args := []string{"plan", sc, "--set", "run.duration=10s", "--set", "run.warmup=2s", "--set", "upstream.*.quota.burst=1000",
		"--sweep", "client.limiter.bucket.rate=30:70:2.5", "--sweep", "client.limiter.bucket.burst=200:400:50",
		"--constraint", "rate_429<0.01", "--objective", "max:client.limiter.bucket.rate", "--replications", "2", "--refine", "--quiet"}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	if code, _, errOut := cli(append(slices.Clone(args), "-o", whole)...); code != exitOK {
		t.Fatalf("the whole plan: exit %d: %s", code, errOut)
	}
	want, err := os.ReadFile(filepath.Join(whole, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan planning.Result
	if err := json.Unmarshal(want, &plan); err != nil || plan.Recommended == nil {
		t.Fatalf("the whole plan recommends nothing (%v)", err)
	}
	for _, p := range plan.Points {
		if fmt.Sprint(p.Params) == fmt.Sprint(plan.Recommended) && (p.Horizon == nil || p.Horizon.Lengthened == 0) {
			t.Fatalf("the recommended point %v ran on its run as given: the test no longer covers a longer horizon", p.Params)
		}
	}
	for _, shards := range []int{2, 3} {
		state, rounds := runShardedRounds(t, args, dir, shards)
		out := filepath.Join(dir, fmt.Sprintf("sharded%d", shards))
		if code, _, errOut := cli(append(slices.Clone(args), "--from-merged", state, "-o", out)...); code != exitOK {
			t.Fatalf("%d shards, resumed whole: exit %d: %s", shards, code, errOut)
		}
		got, err := os.ReadFile(filepath.Join(out, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d shards in %d rounds: plan.json differs from the whole plan's:\n%s\nvs\n%s", shards, rounds, got, want)
		}
		if rounds < 3 {
			t.Errorf("%d shards: %d rounds; the plan refines in more", shards, rounds)
		}
	}
}

// runShardedRounds runs a refined plan on shards, round by round, until
// the merge of a round leaves none pending; it returns the last merge's
// file and the rounds run.
func runShardedRounds(t *testing.T, args []string, dir string, shards int) (string, int) {
	t.Helper()
	state := ""
	for round := 1; ; round++ {
		var parts []string
		for i := range shards {
			more := []string{"--shard", fmt.Sprintf("%d/%d", i, shards)}
			if state != "" {
				more = append(more, "--from-merged", state)
			}
			code, out, errOut := cli(append(slices.Clone(args), more...)...)
			if code != exitOK {
				t.Fatalf("%d shards, round %d, shard %d: exit %d: %s", shards, round, i, code, errOut)
			}
			parts = append(parts, writeFile(t, dir, fmt.Sprintf("s%d-r%d-p%d.json", shards, round, i), out))
		}
		code, out, errOut := cli(append([]string{"merge", "--json"}, parts...)...)
		if code != exitOK {
			t.Fatalf("%d shards, round %d: merge: exit %d: %s", shards, round, code, errOut)
		}
		state = writeFile(t, dir, fmt.Sprintf("s%d-r%d.json", shards, round), out)
		var merged planning.Result
		if err := json.Unmarshal([]byte(out), &merged); err != nil || merged.Refined == nil {
			t.Fatalf("round %d: the merge is no refined plan (%v):\n%s", round, err, out)
		}
		if merged.Refined.Pending == 0 {
			if !merged.Complete || merged.Recommended == nil {
				t.Fatalf("round %d: the last merge recommends nothing:\n%s", round, out)
			}
			return state, round
		}
		if merged.Complete || merged.Recommended != nil || round > 10 {
			t.Fatalf("round %d: a merge with a round pending is complete or recommends:\n%s", round, out)
		}
	}
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A round's parts merge only whole and of one round; a part, or another
// plan's rounds, is no state to resume from.
func TestShardedRefinedPlanRefusals(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	args := []string{"plan", sc, "--set", "run.duration=20s", "--sweep", "client.limiter.bucket.rate=30:70:2.5",
		"--constraint", "rate_429<0.01", "--objective", "max:client.limiter.bucket.rate", "--refine", "--json"}
	dir := t.TempDir()
	part := func(name string, more ...string) string {
		t.Helper()
		code, out, errOut := cli(append(slices.Clone(args), more...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		return writeFile(t, dir, name+".json", out)
	}
	p0, p1 := part("p0", "--shard", "0/2"), part("p1", "--shard", "1/2")
	if code, _, errOut := cli("merge", p0); code != exitInvalid || !strings.Contains(errOut, "a shard is missing") {
		t.Errorf("one part of two: exit %d: %s", code, errOut)
	}
	code, out, errOut := cli("merge", "--json", p0, p1)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	state := writeFile(t, dir, "state.json", out)
	next := part("next", "--shard", "0/2", "--from-merged", state)
	if code, _, errOut := cli("merge", next, p1); code != exitInvalid || !strings.Contains(errOut, "merge the parts of one round") {
		t.Errorf("parts of two rounds: exit %d: %s", code, errOut)
	}
	for what, c := range map[string]struct {
		args []string
		want string
	}{
		"a part":       {[]string{"--from-merged", p0}, "merge the parts"},
		"another plan": {[]string{"--from-merged", state, "--set", "client.acquire_timeout=2s"}, "the rounds of another plan"},
		"no refine":    {[]string{"--from-merged", state}, "give --refine to go on with them"},
	} {
		a := slices.Clone(args)
		if what == "no refine" {
			a = slices.DeleteFunc(a, func(s string) bool { return s == "--refine" })
		}
		code, _, errOut := cli(append(a, c.args...)...)
		if code == exitOK || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d: %s", what, code, errOut)
		}
	}
}
