package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/planning"
)

// A refined plan of rate × burst recommends what the full grid does, in
// fewer runs, and its points are the full grid's, run the same way.
func TestPlanRefineMatchesTheFullGrid(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	args := []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=30:70:2.5", "--sweep", "client.limiter.bucket.burst=1:9:1",
		"--constraint", "rate_429<0.01", "--objective", "max:client.limiter.bucket.rate", "--quiet"}
	read := func(extra ...string) (planning.Result, string) {
		t.Helper()
		code, out, errOut := cli(append(append(slices.Clone(args), "--json"), extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var res planning.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res, out
	}
	full, _ := read("--workers", "2")
	refined, serial := read("--refine", "--workers", "1")
	if refined.Recommended["client.limiter.bucket.rate"] != 50 || !reflect.DeepEqual(refined.Recommended, full.Recommended) {
		t.Fatalf("refined recommends %v, the full grid %v", refined.Recommended, full.Recommended)
	}
	if refined.Cost.Runs >= refined.Cost.RunsFull || refined.Cost.RunsFull != full.Cost.RunsFull {
		t.Fatalf("refined cost %+v, the full grid's %+v", *refined.Cost, *full.Cost)
	}
	if rf := refined.Refined; rf == nil || rf.Points != len(refined.Points) || rf.GridPoints != len(full.Points) {
		t.Fatalf("refined %+v, %d points of %d", rf, len(refined.Points), len(full.Points))
	}
	t.Logf("refined: %d of %d runs (%.1f%%)", refined.Cost.Runs, refined.Cost.RunsFull, 100*float64(refined.Cost.Runs)/float64(refined.Cost.RunsFull))
	last := -1
	for _, p := range refined.Points {
		if p.Index <= last || !reflect.DeepEqual(p, full.Points[p.Index]) {
			t.Fatalf("point %d (after %d) differs from the full grid's: %+v", p.Index, last, p)
		}
		last = p.Index
	}
	if _, parallel := read("--refine", "--workers", "3"); parallel != serial {
		t.Fatal("--workers 3 changed the refined plan's output")
	}
	if _, out, _ := cli(append(slices.Clone(args), "--refine")...); !strings.Contains(out, fmt.Sprintf("refined: %d of %d points", len(refined.Points), len(full.Points))) {
		t.Errorf("the table lacks its refined line:\n%s", out)
	}
}

// --refine refines a grid: not a search.
func TestPlanRefineRefusals(t *testing.T) {
	sc := writeScenario(t, twoInstances)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--search", "client.limiter.bucket.rate=10:90", "--constraint", "rate_429<0.01"}, "a --search is already a bisection"},
	} {
		code, _, errOut := cli(append([]string{"plan", sc, "--refine"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}
