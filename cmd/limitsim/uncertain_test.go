package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// twoUncertain is twoInstances with its demand and its quota uncertain.
var twoUncertain = strings.NewReplacer("rate = 300.0", "rate = { low = 200.0, mid = 300.0, high = 400.0 }",
	"quota = { kind = \"token_bucket\", rate = 100.0", "quota = { kind = \"token_bucket\", rate = { low = 80.0, high = 120.0 }").Replace(twoInstances)

func uncertainPlan(sc string, more ...string) []string {
	return append([]string{"plan", sc, "--sweep", "client.limiter.bucket.rate=30:60:10", "--constraint", "rate_429<0.01",
		"--uncertain", "6", "--uncertain-share", "80%", "--quiet"}, more...)
}

// A plan under uncertainty prints, per point, its share of draws met and
// its worst regret; plan.json carries them with every point's outcome in
// every draw; the output is the same bytes whatever the workers.
func TestPlanUncertain(t *testing.T) {
	sc := writeScenario(t, twoUncertain)
	code, serial, errOut := cli(uncertainPlan(sc, "--json", "--workers", "1")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, parallel, _ := cli(uncertainPlan(sc, "--json", "--workers", "2")...); parallel != serial {
		t.Fatal("--workers 2 changed the output")
	}
	var res planning.Result
	if err := json.Unmarshal([]byte(serial), &res); err != nil {
		t.Fatal(err)
	}
	u := res.Uncertain
	if u == nil || len(u.Draws) != 6 || u.ShareRequired != 0.8 || len(u.Ranges) != 2 || len(u.Points) != len(res.Points) {
		t.Fatalf("uncertain: %+v", u)
	}
	for i, up := range u.Points {
		if len(up.Draws) != 6 || res.Points[i].Feasible != (up.Share >= 0.8) {
			t.Errorf("point %d: share %v, feasible %v, %d draws", i, up.Share, res.Points[i].Feasible, len(up.Draws))
		}
	}
	if res.Recommended == nil || res.Robustness != nil {
		t.Errorf("recommended %v, robustness %+v: the draws are its robustness check", res.Recommended, res.Robustness)
	}
	code, text, _ := cli(uncertainPlan(sc)...)
	if code != exitOK || !strings.Contains(text, "draws met") || !strings.Contains(text, "worst regret") ||
		!strings.Contains(text, "the same 6 draws of workload.rate, upstream.*.quota.rate") {
		t.Errorf("the text: exit %d:\n%s", code, text)
	}
	// A share no point meets is said, with the best met.
	code, text, _ = cli(uncertainPlan(sc, "--constraint", "goodput_rps>100")...)
	if code != exitOK || !strings.Contains(text, "no point meets every constraint in 80% of the 6 draws; the most met: ") {
		t.Errorf("no point meeting the share: exit %d:\n%s", code, text)
	}
	// Without --uncertain the ranges run at their mids, and plan.json has
	// no "uncertain".
	code, plain, errOut := cli("plan", sc, "--sweep", "client.limiter.bucket.rate=30,40", "--json", "--quiet")
	if code != exitOK || strings.Contains(plain, `"uncertain"`) || !strings.Contains(errOut, "workload.rate is a range") {
		t.Errorf("a plan without --uncertain: exit %d: %s", code, errOut)
	}
}

// What a plan under uncertainty does not do is refused before it runs.
func TestPlanUncertainRefusals(t *testing.T) {
	sc := writeScenario(t, twoUncertain)
	plain := writeScenario(t, twoInstances)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{uncertainPlan(sc, "--refine"), exitUsage, "--uncertain cannot be refined"},
		{uncertainPlan(sc, "--shard", "0/2"), exitUsage, "--uncertain cannot be sharded"},
		// A refined plan may be sharded, and go on from merged rounds: not
		// under uncertainty.
		{uncertainPlan(sc, "--refine", "--shard", "0/2"), exitUsage, "--uncertain cannot be refined"},
		{uncertainPlan(sc, "--refine", "--from-merged", "merged.json"), exitUsage, "--uncertain cannot be refined"},
		{[]string{"plan", sc, "--search", "client.limiter.bucket.rate=10:90", "--constraint", "rate_429<0.01", "--uncertain", "4"}, exitUsage, "a --search bisects one key"},
		{uncertainPlan(sc, "--uncertain", "-1"), exitInvalid, "--uncertain takes a number of draws"},
		// 0 is the flag's default, no draws; given, it is a mistake, not a
		// plan at the ranges' mids.
		{uncertainPlan(sc, "--uncertain", "0"), exitInvalid, "--uncertain takes a number of draws from 1"},
		{uncertainPlan(sc, "--uncertain-share", "0%"), exitUsage, "--uncertain-share"},
		{uncertainPlan(sc, "--uncertain-share", "120%"), exitUsage, "--uncertain-share"},
		{[]string{"plan", sc, "--sweep", "client.limiter.bucket.rate=30,40", "--uncertain-share", "80%"}, exitUsage, "give --uncertain N too"},
		{uncertainPlan(plain), exitInvalid, "the scenario has no range to draw"},
		// Ends that hold, and draws between them that do not: a GCRA's
		// burst must be whole, and a range of floats draws fractions.
		{uncertainPlan(sc, "--set", "client.limiter.bucket.kind=gcra", "--set", "client.limiter.bucket.burst={ low = 2.0, high = 4.0 }"),
			exitInvalid, "is not a valid scenario: --set: client.limiter[0].burst: must be a whole number for gcra"},
	} {
		code, _, errOut := cli(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, errOut)
		}
	}
}

// A plain run of a scenario with ranges is the run of the scenario with
// each range written as its mid, byte for byte, and says so on stderr.
func TestRunTakesARangesMid(t *testing.T) {
	ranged := writeScenario(t, twoUncertain)
	mids := writeScenario(t, strings.NewReplacer("{ low = 200.0, mid = 300.0, high = 400.0 }", "300.0",
		"{ low = 80.0, high = 120.0 }", "100.0").Replace(twoUncertain))
	code, got, errOut := cli("run", ranged, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "workload.rate is a range, { low = 200, mid = 300, high = 400 }: this run takes its mid, 300") ||
		!strings.Contains(errOut, "upstream.*.quota.rate is a range, { low = 80, high = 120 }: this run takes its mid, 100") {
		t.Errorf("stderr does not name the ranges: %s", errOut)
	}
	_, want, _ := cli("run", mids, "--json")
	if got != want {
		t.Error("the run of the ranges is not the run of their mids")
	}
}

// A plan under uncertainty resumes from its journal: `plan --resume DIR`
// alone runs again only the run it lost and writes what the whole plan
// wrote. Another number of draws or share is another plan, refused.
func TestPlanUncertainResumes(t *testing.T) {
	sc := writeScenario(t, twoUncertain)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli(uncertainPlan(sc, "-o", out)...); code != exitOK {
		t.Fatalf("the plan: exit %d: %s", code, errOut)
	}
	want := outputFiles(t, out)
	runs := filepath.Join(out, journalDir, journalRuns)
	entries, err := os.ReadDir(runs)
	if err != nil || len(entries) != 4*6 {
		t.Fatalf("the journal holds %d records (%v), want a run of each of 4 points in each of 6 draws", len(entries), err)
	}
	if err := os.Remove(filepath.Join(runs, entries[5].Name())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli("plan", "--resume", out, "--workers", "2")
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	if reused, ran := resumedRuns(t, errOut); reused != len(entries)-1 || ran != 1 {
		t.Errorf("with one record of %d lost: %d read, %d run", len(entries), reused, ran)
	}
	sameFolders(t, outputFiles(t, out), want)
	for flag, value := range map[string]string{"--uncertain": "7", "--uncertain-share": "90%"} {
		os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
		code, _, errOut := cli(uncertainPlan(sc, flag, value, "--resume", out)...)
		if code != exitInvalid || !strings.Contains(errOut, "the plan changed since it started") || !strings.Contains(errOut, flag+" (was") {
			t.Errorf("resume with %s %s: exit %d: %s", flag, value, code, errOut)
		}
	}
}
