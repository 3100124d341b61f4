package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sharded grid, merged, is finished by plan --from-merged: it runs no
// point again, checks the recommendation's robustness and writes every
// output, the same bytes as the whole plan run on one machine — here with
// the recommended point run again on a longer horizon, whose overrides a
// merge does not carry. Before, merge printed the table and wrote no
// report, and --from-merged needed --refine.
func TestPlanFinishesAMergedGrid(t *testing.T) {
	dir := t.TempDir()
	args := []string{"plan", "token-bucket", "--set", "run.duration=20s", "--sweep", "client.limiter.quota.rate=70:110:20",
		"--sweep", "client.limiter.conns.permits=10,30", "--replications", "2", "--constraint", "rate_429<0.01",
		"--objective", "min:client.limiter.quota.rate", "--quiet"}
	code, whole, errOut := cli(append(args, "-o", filepath.Join(dir, "whole"))...)
	if code != exitOK || !strings.Contains(whole, "client.limiter.quota.rate=70") {
		t.Fatalf("the whole plan: exit %d: %s\n%s", code, errOut, whole)
	}
	var parts []string
	for _, shard := range []string{"0/3", "1/3", "2/3"} {
		code, part, errOut := cli(append(args, "--shard", shard)...)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", shard, code, errOut)
		}
		path := filepath.Join(dir, "part-"+shard[:1]+".json")
		os.WriteFile(path, []byte(part), 0o644)
		parts = append(parts, path)
	}
	code, merged, errOut := cli(append([]string{"merge", "--json"}, parts...)...)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	mergedPath := filepath.Join(dir, "merged.json")
	os.WriteFile(mergedPath, []byte(merged), 0o644)
	code, out, errOut := cli(append(args, "--from-merged", mergedPath, "-o", filepath.Join(dir, "finished"))...)
	if code != exitOK || out != whole {
		t.Fatalf("--from-merged: exit %d: %s\n%s\nwant\n%s", code, errOut, out, whole)
	}
	for _, f := range []string{"plan.json", "plan.md", "plan.html", "recommended.toml"} {
		a, _ := os.ReadFile(filepath.Join(dir, "whole", f))
		b, err := os.ReadFile(filepath.Join(dir, "finished", f))
		if err != nil || string(a) != string(b) || len(a) == 0 {
			t.Errorf("%s differs from the whole plan's (%v)", f, err)
		}
	}
	for name, c := range map[string]struct {
		extra []string
		code  int
		want  string
	}{
		"a shard of it":    {[]string{"--from-merged", mergedPath, "--shard", "0/3"}, exitUsage, "no --shard"},
		"a part, unmerged": {[]string{"--from-merged", parts[0]}, exitInvalid, "merge the parts"},
		"another --set":    {[]string{"--from-merged", mergedPath, "--set", "client.acquire_timeout=1s"}, exitInvalid, "the merge of another plan"},
	} {
		code, _, errOut := cli(append(args, c.extra...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, want %d: %s", name, code, c.code, errOut)
		}
	}
}
