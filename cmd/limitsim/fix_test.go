package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
)

// fixedRun is what a test reads of a run's JSON: its figures, its
// diagnoses with their own fix.set, and its verified fix.
type fixedRun struct {
	Complete   bool    `json:"complete"`
	Rate429    float64 `json:"rate_429"`
	Success    float64 `json:"success_ratio"`
	Throughput struct {
		GoodputRPS float64 `json:"goodput_rps"`
	} `json:"throughput"`
	RequestS struct {
		P99 float64 `json:"p99"`
	} `json:"request_s"`
	Storm *struct {
		Detected bool `json:"detected"`
	} `json:"storm"`
	Tenants []struct {
		Name        string  `json:"name"`
		SuccessRate float64 `json:"success_rate"`
	} `json:"tenants"`
	Diagnoses []struct {
		Code     string `json:"code"`
		Severity string `json:"severity"`
		Fix      struct {
			Set map[string]any `json:"set"`
		} `json:"fix"`
	} `json:"diagnoses"`
	Fix *struct {
		Verified bool           `json:"verified"`
		Status   string         `json:"status"`
		Set      map[string]any `json:"set"`
		Before   struct {
			GoodputRPS float64  `json:"goodput_rps"`
			Critical   []string `json:"critical"`
		} `json:"before"`
		After *struct {
			GoodputRPS float64  `json:"goodput_rps"`
			Rate429    float64  `json:"rate_429"`
			Critical   []string `json:"critical"`
		} `json:"after"`
		Cleared   []string `json:"cleared"`
		Remaining []string `json:"remaining"`
		Seeds     []uint64 `json:"seeds"`
	} `json:"fix"`
}

func runJSON(t *testing.T, args ...string) fixedRun {
	t.Helper()
	code, out, errOut := cli(append([]string{"run", "--json", "--quiet"}, args...)...)
	if code != exitOK && code != exitModel {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var r fixedRun
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

// setArgs turns a fix's set, as JSON gives it, into --set flags.
func setArgs(set map[string]any) []string {
	var out []string
	for _, arg := range report.SetArgs(set) {
		out = append(out, "--set", arg)
	}
	return out
}

func critical(r fixedRun) []string {
	var out []string
	for _, d := range r.Diagnoses {
		if d.Severity == "critical" {
			out = append(out, d.Code)
		}
	}
	return out
}

// Every bundled failure scenario: the fix printed under its diagnoses,
// applied as the union of the critical diagnoses' fix.set (what a user
// pastes), clears every critical finding on a fresh run, introduces none,
// keeps goodput within the 10% margin, and gives the figures the fix
// promised. Each case also names what the fix must achieve for its
// failure mode.
func TestPrintedFixesHoldOnAFreshRun(t *testing.T) {
	cases := []struct {
		name  string
		check func(before, after fixedRun) string
	}{
		{"fail-sustained-429", func(b, a fixedRun) string {
			return want(a.Throughput.GoodputRPS >= 85 && a.Rate429 < 0.01, "goodput ≥ 85/s (the quota × 0.9) without 429s")
		}},
		{"fail-shared-quota", func(b, a fixedRun) string {
			return want(a.Rate429 < 0.01 && a.Throughput.GoodputRPS >= 85, "ten instances at 9/s each: no 429s, goodput ≥ 85/s")
		}},
		{"fail-tenant-starvation", func(b, a fixedRun) string {
			return want(tenantSuccess(a, "interactive") >= 0.99 && tenantSuccess(b, "interactive") < 0.95,
				"the interactive tenant, starved before, served in full")
		}},
		{"fail-retry-storm", func(b, a fixedRun) string {
			return want(a.Storm != nil && !a.Storm.Detected && b.Storm != nil && b.Storm.Detected && a.Throughput.GoodputRPS >= 85,
				"the storm that outlived the slowdown is gone, goodput ≥ 85/s of the offered 100/s")
		}},
		{"fail-deadlock", func(b, a fixedRun) string {
			return want(a.Complete && a.Throughput.GoodputRPS >= 35, "the run completes at its offered 40/s")
		}},
		{"fail-unbounded-waiting", func(b, a fixedRun) string {
			return want(a.RequestS.P99 < 5 && b.RequestS.P99 > 30, "end-to-end p99 from over 30 s to under 5 s")
		}},
		{"fail-lock-held", func(b, a fixedRun) string {
			return want(a.Throughput.GoodputRPS >= 1.8*b.Throughput.GoodputRPS, "goodput nearly doubles once the bucket sleeps outside its lock")
		}},
		{"fail-burst-at-start", func(b, a fixedRun) string {
			return want(a.Rate429 < b.Rate429/2, "a bucket started a tenth full: the start's 429s at least halved")
		}},
		{"fail-thundering-herd", func(b, a fixedRun) string {
			return want(a.Throughput.GoodputRPS >= 5*b.Throughput.GoodputRPS && a.Rate429 < 0.05, "jittered resumes: goodput ×5, 429s under 5%")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := runJSON(t, c.name)
			f := before.Fix
			// The run's own seed, two fresh ones and a third at more load
			// on a longer run.
			if f == nil || !f.Verified || f.Status != "verified" || len(f.Set) == 0 || f.After == nil || len(f.Seeds) != 4 {
				t.Fatalf("no verified fix checked on four seeds: %+v", f)
			}
			// What a user pastes: the critical diagnoses' overrides, or,
			// with none critical, every diagnosis's.
			union := map[string]any{}
			for _, d := range before.Diagnoses {
				if d.Severity == "critical" || len(critical(before)) == 0 {
					maps.Copy(union, d.Fix.Set)
				}
			}
			if fmt.Sprint(union) != fmt.Sprint(f.Set) {
				t.Fatalf("the critical diagnoses' fix.set together %v, the verified fix %v", union, f.Set)
			}
			after := runJSON(t, append([]string{c.name, "--no-verify"}, setArgs(union)...)...)
			if crit := critical(after); len(crit) > 0 {
				t.Errorf("after the fix, critical findings remain: %v", crit)
			}
			if g, g0 := after.Throughput.GoodputRPS, before.Throughput.GoodputRPS; g < 0.9*g0 {
				t.Errorf("goodput %.4g/s after the fix, below 90%% of %.4g/s", g, g0)
			}
			if after.Throughput.GoodputRPS != f.After.GoodputRPS || after.Rate429 != f.After.Rate429 {
				t.Errorf("the fresh run gives goodput %v and 429 rate %v; the fix promised %v and %v",
					after.Throughput.GoodputRPS, after.Rate429, f.After.GoodputRPS, f.After.Rate429)
			}
			if msg := c.check(before, after); msg != "" {
				t.Errorf("before goodput %.4g/s, after %.4g/s: want %s", before.Throughput.GoodputRPS, after.Throughput.GoodputRPS, msg)
			}
			// On seeds the verification never compared candidates on, the
			// fix still clears what it cleared and brings nothing new.
			for _, seed := range []string{"run.seed=7", "run.seed=8"} {
				b := runJSON(t, c.name, "--no-verify", "--set", seed)
				a := runJSON(t, append([]string{c.name, "--no-verify", "--set", seed}, setArgs(union)...)...)
				for _, code := range critical(a) {
					if slices.Contains(f.Cleared, code) || !slices.Contains(critical(b), code) {
						t.Errorf("%s: the fix leaves %s (before it: %v)", seed, code, critical(b))
					}
				}
			}
		})
	}
}

func want(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

func tenantSuccess(r fixedRun, name string) float64 {
	for _, t := range r.Tenants {
		if t.Name == name {
			return t.SuccessRate
		}
	}
	return -1
}

// --no-verify prints the diagnoses' overrides together, marked
// unverified; --fix -o writes fixed.toml, which runs with no critical
// finding; a healthy run has no fix at all.
func TestFixUnverifiedAndWritten(t *testing.T) {
	r := runJSON(t, "fail-sustained-429", "--no-verify")
	if r.Fix == nil || r.Fix.Verified || r.Fix.Status != "unverified" || r.Fix.After != nil {
		t.Fatalf("--no-verify: %+v", r.Fix)
	}
	code, out, _ := cli("run", "fail-sustained-429", "--quiet", "--no-verify")
	if code != exitOK || !strings.Contains(out, "Fix (unverified: --no-verify)") {
		t.Fatalf("the text does not say the fix is unverified:\n%s", out)
	}
	dir := t.TempDir()
	if code, _, errOut := cli("run", "fail-deadlock", "--quiet", "-o", dir, "--fix"); code != exitModel {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// report.md and report.html carry the verified fix, with the flags
	// to paste, and each diagnosis's overrides.
	md, err1 := os.ReadFile(filepath.Join(dir, "report.md"))
	html, err2 := os.ReadFile(filepath.Join(dir, "report.html"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for name, text := range map[string]string{"report.md": string(md), "report.html": string(html)} {
		for _, want := range []string{"Verified fix", "client.path.reads.limiters", "before: goodput", "after:  goodput", "Overrides:"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	fixed := filepath.Join(dir, "fixed.toml")
	if _, err := os.Stat(fixed); err != nil {
		t.Fatal(err)
	}
	after := runJSON(t, fixed)
	if !after.Complete || len(critical(after)) > 0 || after.Fix != nil {
		t.Fatalf("fixed.toml: complete %v, critical %v, fix %+v", after.Complete, critical(after), after.Fix)
	}
	if healthy := runJSON(t, "reference-model", "--set", "run.requests=2000"); healthy.Fix != nil {
		t.Fatalf("a healthy run has a fix: %+v", healthy.Fix)
	}
	if code, _, _ := cli("run", "fail-deadlock", "--fix"); code != exitUsage {
		t.Errorf("--fix without -o: exit %d, want %d", code, exitUsage)
	}
}

// A report redrawn from its folder recomputes the diagnoses and gives
// each its part of the verified fix again: report.md and metrics.json
// come out byte for byte the same.
func TestRedrawKeepsTheFixParts(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := cli("run", "fail-tenant-starvation", "--quiet", "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	md, js := read("report.md"), read("metrics.json")
	if !strings.Contains(md, "the verified fix clears this without these overrides, with") {
		t.Fatalf("report.md gives no diagnosis the fix's added keys:\n%s", md)
	}
	if code, _, errOut := cli("report", dir); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if read("report.md") != md || read("metrics.json") != js {
		t.Fatal("the redrawn report differs from the run's")
	}
}

// A critical finding that carries the verified fix without any of its
// own keys says so: fail-tenant-starvation's acquisition timeouts are
// cleared by the per-tenant bucket and its bound, not by the bound on
// shared its own text proposes, which its overrides then leave out.
func TestCarriedFixSaysItsOwnKeysAreNotInIt(t *testing.T) {
	code, out, errOut := cli("run", "fail-tenant-starvation", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Diagnoses []struct {
			Code string
			Fix  struct {
				Text string
				Set  map[string]any
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Diagnoses {
		if d.Code != "acquire_timeouts" {
			continue
		}
		if _, own := d.Fix.Set["client.limiter.shared.max_waiting"]; own || !strings.Contains(d.Fix.Text, "the verified fix clears this without these overrides, with ") {
			t.Errorf("fix %+v", d.Fix)
		}
		return
	}
	t.Fatal("no acquire_timeouts")
}
