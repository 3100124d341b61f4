package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// Variants that make and remove limiters compare as any other: each run's
// results list the limiters it ran, and the scenario.toml that run -o
// writes with such overrides runs the same again.
func TestCompareVariantsThatMakeAndRemoveLimiters(t *testing.T) {
	base := strings.Replace(twoInstances, "rate = 10.0\nburst = 1", "rate = 60.0\nburst = 1", 1)
	sc := writeScenario(t, base+`
[[variant]]
name = "capped"
set = ["client.limiter.cap.kind=token_bucket", "client.limiter.cap.rate=40", "client.limiter.cap.burst=1"]

[[variant]]
name = "unlimited"
set = ["client.limiter.bucket="]
`)
	code, out, errOut := cli("compare", sc, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Runs []struct {
			Name     string                 `json:"name"`
			Limiters []metrics.LimiterStats `json:"limiters"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Runs {
		var ls []string
		for _, l := range r.Limiters {
			ls = append(ls, l.Name+":"+l.Kind)
		}
		got = append(got, r.Name+" "+strings.Join(ls, ","))
	}
	if want := []string{"two bucket:token_bucket", "two/capped bucket:token_bucket,cap:token_bucket", "two/unlimited "}; !slices.Equal(got, want) {
		t.Errorf("runs and their limiters:\n%q\nwant\n%q", got, want)
	}
	// The scenario as run with the same overrides runs the same again.
	dir := t.TempDir()
	plain := writeScenario(t, base)
	sets := []string{"--set", "client.limiter.bucket=", "--set", "client.limiter.cap.kind=gcra", "--set", "client.limiter.cap.rate=45"}
	code, first, errOut := cli(append([]string{"run", plain, "--json", "-o", dir}, sets...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	resolved := filepath.Join(dir, "scenario.toml")
	text, err := os.ReadFile(resolved)
	if err != nil || !strings.Contains(string(text), "name = \"cap\"\nkind = \"gcra\"") || strings.Contains(string(text), `name = "bucket"`) {
		t.Fatalf("scenario.toml (err %v):\n%s", err, text)
	}
	if code, again, errOut := cli("run", resolved, "--json"); code != exitOK || again != first {
		t.Errorf("scenario.toml runs otherwise: exit %d: %s", code, errOut)
	}
}

// A swept key may belong to a limiter the plan's overrides make: the
// file's bucket removed and a new one made in its place, its rate swept,
// the planner finds each instance's share of the quota as it does with
// the file's own bucket (TestPlanFindsTheQuotaShare).
func TestPlanSweepsAMadeLimiter(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	code, out, errOut := cli("plan", sc, "--set", "client.limiter.bucket=", "--set", "client.limiter.paced.kind=token_bucket",
		"--set", "client.limiter.paced.burst=1", "--sweep", "client.limiter.paced.rate=40:60:5", "--constraint", "rate_429<0.01",
		"--objective", "max:client.limiter.paced.rate", "--json")
	plan := planJSON(t, code, out, errOut)
	if plan.Recommended["client.limiter.paced.rate"] != 50 {
		t.Errorf("recommended %v, want the new bucket at 50/s each", plan.Recommended)
	}
	// Without its kind the new limiter is refused before anything runs.
	code, _, errOut = cli("plan", sc, "--sweep", "client.limiter.paced.rate=40:60:5", "--constraint", "rate_429<0.01")
	if code != exitInvalid || !strings.Contains(errOut, `--sweep: client.limiter.paced.rate: no client.limiter with name "paced" (known: bucket), so this makes a new limiter, which needs its kind`) {
		t.Errorf("a made limiter without its kind: exit %d: %s", code, errOut)
	}
}
