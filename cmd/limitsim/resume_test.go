package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
)

// resumable is twoInstances with its latency read from a data file, so
// that a plan's fingerprint has a data file to cover.
var resumable = strings.Replace(twoInstances, `latency = { dist = "constant", value = "20ms" }`,
	`latency = { dist = "empirical", samples = "latency.csv" }`, 1)

// writeResumable writes the scenario and its data file into a new folder
// and returns the scenario's path.
func writeResumable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "latency.csv"), []byte("latency\n15ms\n20ms\n25ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(dir, "two.toml")
	if err := os.WriteFile(sc, []byte(resumable), 0o644); err != nil {
		t.Fatal(err)
	}
	return sc
}

// resumeGrid is a plan of 18 points of two replications: enough runs for
// a process to be stopped among them.
func resumeGrid(sc string, more ...string) []string {
	return append([]string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40:60:2.5", "--sweep", "client.instances=1,2",
		"--constraint", "rate_429<0.01", "--replications", "2", "--quiet"}, more...)
}

// outputFiles reads every file of an output folder but its journal and
// lock, by name.
func outputFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == journalDir {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() == ".limitsim-lock" {
			return nil
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFolders fails unless folders got and want hold the same files, byte
// for byte.
func sameFolders(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("the uninterrupted plan wrote nothing")
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s differs from the uninterrupted plan's (present: %v)", name, ok)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is not in the uninterrupted plan's folder", name)
		}
	}
}

// journaled is how many replications the journal of folder dir holds.
func journaled(dir string) int {
	entries, _ := os.ReadDir(filepath.Join(dir, journalDir, journalRuns))
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

// stopMidway starts bin with args and, once the journal of folder dir
// holds at least n replications, sends it sig and waits for it to exit.
// It fails when the process ended on its own first: the plan must be
// stopped among its points.
func stopMidway(t *testing.T, bin, dir string, n int, sig syscall.Signal, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if sig == syscall.SIGINT {
		waitForHandler(t, cmd.Process.Pid)
	}
	for journaled(dir) < n {
		select {
		case err := <-done:
			t.Fatalf("the plan ended (exit %d) before its journal held %d runs: %s", exitCode(err), n, errBuf.String())
		case <-time.After(time.Millisecond):
		}
	}
	cmd.Process.Signal(sig)
	select {
	case err := <-done:
		return exitCode(err), errBuf.String()
	case <-time.After(2 * time.Minute): // bounds a broken stop; no timing is asserted
		cmd.Process.Kill()
		t.Fatal("the plan did not stop")
	}
	return 0, ""
}

// runBin runs bin with args and returns its exit code and outputs.
func runBin(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return exitCode(err), o.String(), e.String()
}

var journalLine = regexp.MustCompile(`(\d+) runs read from the journal in .*, (\d+) run now`)

// resumedRuns reads the runs a resumed plan read from its journal and
// ran, from its stderr.
func resumedRuns(t *testing.T, stderr string) (reused, ran int) {
	t.Helper()
	m := journalLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("the resumed plan does not say what its journal saved: %s", stderr)
	}
	reused, _ = strconv.Atoi(m[1])
	ran, _ = strconv.Atoi(m[2])
	return reused, ran
}

// A plan killed midway (SIGKILL: no handler runs) or stopped by Ctrl-C,
// then resumed, writes the outputs an uninterrupted plan writes, byte for
// byte, and runs only the replications its journal lacked; the same for a
// shard. The stop is synchronised on the journal, never on a delay.
func TestResumedPlanIsTheUninterruptedPlan(t *testing.T) {
	bin := binary(t)
	sc := writeResumable(t)
	base := t.TempDir()
	full := filepath.Join(base, "full")
	code, fullOut, errOut := runBin(t, bin, resumeGrid(sc, "-o", full)...)
	if code != exitOK {
		t.Fatalf("the uninterrupted plan: exit %d: %s", code, errOut)
	}
	var whole planning.Result
	if err := json.Unmarshal([]byte(outputFiles(t, full)["plan.json"]), &whole); err != nil || !whole.Complete || whole.Cost == nil {
		t.Fatalf("the uninterrupted plan.json: %v", err)
	}
	want := outputFiles(t, full)
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		code   int
		resume func(dir string) []string
	}{
		{"SIGKILL", syscall.SIGKILL, -1, func(dir string) []string { return []string{"plan", "--resume", dir, "--workers", "2"} }},
		{"SIGINT", syscall.SIGINT, exitSignal, func(dir string) []string { return resumeGrid(sc, "--resume", dir) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, tc.name)
			code, stderr := stopMidway(t, bin, dir, 12, tc.sig, resumeGrid(sc, "-o", dir, "--workers", "1")...)
			if code != tc.code {
				t.Fatalf("the stopped plan: exit %d, want %d: %s", code, tc.code, stderr)
			}
			if tc.sig == syscall.SIGINT && !strings.Contains(stderr, "limitsim plan --resume "+dir) {
				t.Errorf("the interrupted plan does not name the command that continues it: %s", stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, incompleteMarker)); err != nil {
				t.Errorf("the stopped plan's folder is not marked incomplete: %v", err)
			}
			atStop := journaled(dir)
			code, out, stderr := runBin(t, bin, tc.resume(dir)...)
			if code != exitOK {
				t.Fatalf("resume: exit %d: %s", code, stderr)
			}
			if out != fullOut {
				t.Errorf("the resumed plan prints\n%s\nthe uninterrupted one\n%s", out, fullOut)
			}
			sameFolders(t, outputFiles(t, dir), want)
			reused, ran := resumedRuns(t, stderr)
			if reused < atStop || ran == 0 || ran >= whole.Cost.Runs || reused+ran < whole.Cost.Runs {
				t.Errorf("resumed with %d runs journaled at the stop: %d read, %d run; the plan's cost is %d runs", atStop, reused, ran, whole.Cost.Runs)
			}
			t.Logf("%s: %d runs journaled at the stop; resumed with %d read and %d run of the plan's %d", tc.name, atStop, reused, ran, whole.Cost.Runs)
			code, _, stderr = runBin(t, bin, "plan", "--resume", dir)
			if code != exitOK || !strings.Contains(stderr, "the plan is complete") {
				t.Errorf("resuming the finished plan: exit %d: %s", code, stderr)
			}
			sameFolders(t, outputFiles(t, dir), want)
		})
	}
	t.Run("rebuilt", func(t *testing.T) {
		// Another executable is another simulator, whatever its version
		// line says.
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(t.TempDir(), "limitsim")
		if err := os.WriteFile(other, append(data, 0), 0o755); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runBin(t, other, "plan", "--resume", full)
		if code != exitInvalid || !strings.Contains(stderr, "the limitsim executable") {
			t.Errorf("a resume by another executable: exit %d: %s", code, stderr)
		}
	})
	t.Run("shard", func(t *testing.T) {
		shard := resumeGrid(sc, "--shard", "1/2")
		code, fullPart, errOut := runBin(t, bin, append(shard, "-o", filepath.Join(base, "shard-full"))...)
		if code != exitOK {
			t.Fatalf("the uninterrupted shard: exit %d: %s", code, errOut)
		}
		dir := filepath.Join(base, "shard")
		if code, stderr := stopMidway(t, bin, dir, 6, syscall.SIGKILL, append(shard, "-o", dir, "--workers", "1")...); code != -1 {
			t.Fatalf("the killed shard: exit %d: %s", code, stderr)
		}
		code, part, stderr := runBin(t, bin, "plan", "--resume", dir)
		if code != exitOK || part != fullPart {
			t.Fatalf("the resumed shard (exit %d: %s) prints\n%s\nthe uninterrupted one\n%s", code, stderr, part, fullPart)
		}
		sameFolders(t, outputFiles(t, dir), outputFiles(t, filepath.Join(base, "shard-full")))
		reused, ran := resumedRuns(t, stderr)
		if reused == 0 || ran == 0 {
			t.Errorf("the resumed shard read %d runs and ran %d", reused, ran)
		}
		t.Logf("shard: resumed with %d runs read and %d run", reused, ran)
	})
}

// A resumed plan refuses when what its results depend on changed since it
// started (its fingerprint), naming what; a flag that changes no result
// (--workers) is no change.
func TestResumeRefusesAChangedPlan(t *testing.T) {
	small := func(sc string, more ...string) []string {
		return append([]string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--constraint", "rate_429<0.01", "--quiet"}, more...)
	}
	for _, tc := range []struct {
		name   string
		change func(sc string) []string // changes the plan and returns the resuming command
		names  string                   // what the refusal names
	}{
		{"scenario", func(sc string) []string {
			os.WriteFile(sc, []byte(strings.Replace(resumable, `warmup = "10s"`, `warmup = "12s"`, 1)), 0o644)
			return nil
		}, "the scenario's text"},
		{"data file", func(sc string) []string {
			os.WriteFile(filepath.Join(filepath.Dir(sc), "latency.csv"), []byte("latency\n15ms\n20ms\n26ms\n"), 0o644)
			return nil
		}, "data file latency.csv"},
		{"sweep", func(sc string) []string {
			return []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,55", "--constraint", "rate_429<0.01"}
		}, "--sweep"},
		{"flag", func(sc string) []string {
			return []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--constraint", "rate_429<0.02"}
		}, "--constraint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := writeResumable(t)
			out := filepath.Join(t.TempDir(), "out")
			if code, _, errOut := cli(small(sc, "-o", out)...); code != exitOK {
				t.Fatalf("the plan: exit %d: %s", code, errOut)
			}
			before := outputFiles(t, out)
			args := tc.change(sc)
			if args == nil {
				args = []string{"plan"}
			}
			code, _, errOut := cli(append(args, "--resume", out)...)
			if code != exitInvalid || !strings.Contains(errOut, "the plan changed since it started") || !strings.Contains(errOut, tc.names) {
				t.Fatalf("resume after a changed %s: exit %d: %s", tc.name, code, errOut)
			}
			sameFolders(t, outputFiles(t, out), before)
		})
	}
	t.Run("workers", func(t *testing.T) {
		sc := writeResumable(t)
		out := filepath.Join(t.TempDir(), "out")
		if code, _, errOut := cli(small(sc, "-o", out, "--workers", "1")...); code != exitOK {
			t.Fatalf("the plan: exit %d: %s", code, errOut)
		}
		want := outputFiles(t, out)
		// As a plan killed while writing its outputs leaves its folder.
		os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
		os.Remove(filepath.Join(out, "plan.md"))
		code, _, errOut := cli(small(sc, "--workers", "3", "--resume", out)...)
		if code != exitOK {
			t.Fatalf("resume with other --workers: exit %d: %s", code, errOut)
		}
		if reused, ran := resumedRuns(t, errOut); reused == 0 || ran != 0 {
			t.Errorf("a plan whose every run was journaled read %d and ran %d", reused, ran)
		}
		sameFolders(t, outputFiles(t, out), want)
	})
	t.Run("no journal", func(t *testing.T) {
		dir := t.TempDir()
		if code, _, errOut := cli("plan", "--resume", dir); code != exitInvalid || !strings.Contains(errOut, "holds no plan journal") {
			t.Errorf("resume of a folder with no journal: exit %d: %s", code, errOut)
		}
	})
}

// A torn record (a file cut short) is ignored and its replication run
// again; a record a killed process left half written under its temporary
// name is never read.
func TestTornJournalRecordRunsAgain(t *testing.T) {
	sc := writeResumable(t)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--constraint", "rate_429<0.01", "--quiet", "--json"}
	code, whole, errOut := cli(append(args, "-o", out)...)
	if code != exitOK {
		t.Fatalf("the plan: exit %d: %s", code, errOut)
	}
	want := outputFiles(t, out)
	runs := filepath.Join(out, journalDir, journalRuns)
	entries, err := os.ReadDir(runs)
	if err != nil || len(entries) < 2 {
		t.Fatalf("the journal holds %d records (%v)", len(entries), err)
	}
	torn := filepath.Join(runs, entries[0].Name())
	data, _ := os.ReadFile(torn)
	if err := os.WriteFile(torn, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runs, ".tmp-123"), data[:10], 0o644)
	os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
	code, resumed, errOut := cli("plan", "--resume", out)
	if code != exitOK || resumed != whole {
		t.Fatalf("resume (exit %d: %s) prints\n%s\nnot\n%s", code, errOut, resumed, whole)
	}
	if reused, ran := resumedRuns(t, errOut); reused != len(entries)-1 || ran != 1 {
		t.Errorf("with one torn record of %d: %d read, %d run", len(entries), reused, ran)
	}
	sameFolders(t, outputFiles(t, out), want)
	if again, _ := os.ReadFile(torn); !bytes.Equal(again, data) {
		t.Errorf("the torn record was not written again whole")
	}
	if _, err := os.Stat(filepath.Join(runs, ".tmp-123")); !os.IsNotExist(err) {
		t.Errorf("a temporary record remains (%v)", err)
	}
}

// A fresh plan into the folder of an interrupted plan of other inputs is
// refused (its finished runs would be lost), and names how to continue
// it; into the folder of a finished one it starts afresh.
func TestPlanKeepsAnInterruptedPlansJournal(t *testing.T) {
	sc := writeResumable(t)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--constraint", "rate_429<0.01", "--quiet", "-o", out}
	if code, _, errOut := cli(args...); code != exitOK {
		t.Fatalf("the plan: exit %d: %s", code, errOut)
	}
	other := append(args, "--set", "client.acquire_timeout=2s")
	if code, _, errOut := cli(other...); code != exitOK {
		t.Fatalf("another plan over a finished one: exit %d: %s", code, errOut)
	}
	os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
	code, _, errOut := cli(args...)
	if code != exitInvalid || !strings.Contains(errOut, "holds an interrupted plan") || !strings.Contains(errOut, "limitsim plan --resume "+out) {
		t.Fatalf("a plan over an interrupted other one: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cli(other...); code != exitOK || !strings.Contains(errOut, fmt.Sprintf("runs read from the journal in %s, 0 run now", out)) {
		t.Errorf("the same plan again: exit %d: %s", code, errOut)
	}
}

// A search's steps, a refinement's rounds and a point's runs in the draws
// of a plan under uncertainty are journaled like a grid's points: a plan
// that lost one replication (killed before it finished) runs that one
// again and no other, and writes what the whole plan wrote.
func TestResumeCoversSearchAndRefinement(t *testing.T) {
	for name, mode := range map[string][]string{
		"search": {"--search", "client.limiter.bucket.rate=20:80", "--replications", "2"},
		"refine": {"--sweep", "client.limiter.bucket.rate=30:70:5", "--sweep", "client.instances=1,2", "--refine"},
		// Each point in each draw of the ranges --set makes.
		"uncertain": {"--sweep", "client.limiter.bucket.rate=30:60:10", "--uncertain", "3", "--set", "workload.rate={ low = 200.0, mid = 300.0, high = 400.0 }",
			"--set", "upstream.*.quota.rate={ low = 80.0, high = 120.0 }"},
	} {
		t.Run(name, func(t *testing.T) {
			sc := writeResumable(t)
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"plan", sc, "--constraint", "rate_429<0.01", "--quiet", "--json", "-o", out}, mode...)
			code, whole, errOut := cli(args...)
			if code != exitOK {
				t.Fatalf("the plan: exit %d: %s", code, errOut)
			}
			want := outputFiles(t, out)
			runs := filepath.Join(out, journalDir, journalRuns)
			entries, err := os.ReadDir(runs)
			if err != nil || len(entries) < 2 {
				t.Fatalf("the journal holds %d records (%v)", len(entries), err)
			}
			os.Remove(filepath.Join(runs, entries[len(entries)/2].Name()))
			os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
			code, resumed, errOut := cli(append(args, "--resume", out, "--workers", "3")...)
			if code != exitOK || resumed != whole {
				t.Fatalf("resume (exit %d: %s) prints\n%s\nnot\n%s", code, errOut, resumed, whole)
			}
			if reused, ran := resumedRuns(t, errOut); reused != len(entries)-1 || ran != 1 {
				t.Errorf("with one record of %d lost: %d read, %d run", len(entries), reused, ran)
			}
			sameFolders(t, outputFiles(t, out), want)
		})
	}
}

// The folder stays locked while a plan resumes: a resume of a folder
// another writer holds is refused before it runs anything.
func TestResumeHoldsTheFolderLock(t *testing.T) {
	sc := writeResumable(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := cli("plan", sc, "--sweep", "client.limiter.bucket.rate=40,50", "--quiet", "-o", out); code != exitOK {
		t.Fatalf("the plan: exit %d: %s", code, errOut)
	}
	os.WriteFile(filepath.Join(out, incompleteMarker), nil, 0o644)
	unlock, err := report.LockOutputs(out, "limitsim plan (another)")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if code, _, errOut := cli("plan", "--resume", out); code != exitInvalid || !strings.Contains(errOut, "another") {
		t.Errorf("a resume of a folder held by another writer: exit %d: %s", code, errOut)
	}
}
