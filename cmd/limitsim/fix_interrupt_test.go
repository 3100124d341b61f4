package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// signalFS writes files as the operating system does, and delivers a
// SIGINT to its session as the first file of an output folder is
// opened: a signal that comes once the run and its fix are done.
type signalFS struct{ st *session }

func (f signalFS) OpenFile(name string, flag int, perm fs.FileMode) (report.File, error) {
	f.st.signal.CompareAndSwap(0, int32(syscall.SIGINT))
	f.st.interrupt.Store(true)
	return os.OpenFile(name, flag, perm)
}
func (signalFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (signalFS) Remove(name string) error                     { return os.Remove(name) }
func (signalFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// readFix reads the fix of the metrics.json in dir.
func readFix(t *testing.T, dir string) *metrics.VerifiedFix {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r metrics.Results
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Fix
}

// A signal that comes after the fix was verified (while the outputs are
// written) leaves every output as it is: verified, fixed.toml written,
// no INCOMPLETE marker; stderr says the outputs are complete, never
// that the fix is unverified. With --no-verify, where nothing is
// verified, it does not speak of verifying either.
func TestInterruptAfterTheFixLeavesItVerified(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	st := new(session)
	st.fsys = signalFS{st}
	var out, errOut bytes.Buffer
	code := run([]string{"run", "fail-sustained-429", "--quiet", "-o", dir, "--fix"}, &out, &errOut, st)
	if code != exitSignal || strings.Contains(errOut.String(), "verif") || !strings.Contains(errOut.String(), "interrupted once the run was done; its outputs are complete") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Verified fix") || strings.Contains(out.String(), "unverified") {
		t.Errorf("the summary does not give the verified fix:\n%s", out.String())
	}
	if fix := readFix(t, dir); fix == nil || fix.Status != "verified" || !fix.Verified {
		t.Errorf("metrics.json's fix: %+v", fix)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "## Verified fix") {
		t.Errorf("report.md has no verified fix (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fixed.toml")); err != nil {
		t.Errorf("fixed.toml: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, incompleteMarker)); !os.IsNotExist(err) {
		t.Errorf("the complete folder carries %s (%v)", incompleteMarker, err)
	}

	st = new(session)
	st.fsys = signalFS{st}
	errOut.Reset()
	code = run([]string{"run", "reference-model", "--quiet", "--no-verify", "-o", filepath.Join(t.TempDir(), "nv")}, &out, &errOut, st)
	if code != exitSignal || strings.Contains(errOut.String(), "verif") {
		t.Errorf("--no-verify: exit %d, stderr %q", code, errOut.String())
	}
}

// A signal that stops the fix's verification leaves the fix unverified
// in every output, labelled with its reason (interrupted, not
// --no-verify), writes no fixed.toml, and says so on stderr; the run's
// own outputs are complete, so its folder carries no INCOMPLETE marker.
func TestInterruptedVerificationIsLabelledSo(t *testing.T) {
	const path = "fail-sustained-429"
	sc, cfg, err := loadBuilt(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := client.Run(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Series.Close()
	report.Analyze(o.Results, o.Series)
	interrupt := new(atomic.Bool)
	interrupt.Store(true) // stops the first candidate's run at once
	if cut := fixRun(o.Results, planning.Source{Loader: scenarios.NewLoader(), Path: path}, false, interrupt); !cut {
		t.Fatal("fixRun does not report the verification cut short")
	}
	fix := o.Results.Fix
	if fix == nil || fix.Verified || fix.Status != "unverified" || fix.UnverifiedWhy() != "interrupted" || len(fix.Set) == 0 {
		t.Fatalf("the fix of an interrupted verification: %+v", fix)
	}
	if head := report.FixLines(o.Results)[0]; !strings.HasPrefix(head, "Fix (unverified: interrupted): --set ") {
		t.Errorf("the summary's fix line is %q", head)
	}
	dir := t.TempDir()
	st := new(session)
	var stderr bytes.Buffer
	if err := writeRunOutputs(dir, true, &stderr, sc, o, planning.Source{Path: path}, st); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "## Fix (unverified: interrupted)\n") {
		t.Errorf("report.md does not label the fix interrupted (%v)", err)
	}
	if got := readFix(t, dir); got == nil || got.Status != "unverified" || !strings.HasPrefix(got.Note, metrics.InterruptedFixNote) {
		t.Errorf("metrics.json's fix: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "fixed.toml")); !os.IsNotExist(err) || !strings.Contains(stderr.String(), "fixed.toml not written: not verified: interrupted") {
		t.Errorf("fixed.toml of an unverified fix (%v); stderr %q", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, incompleteMarker)); !os.IsNotExist(err) {
		t.Errorf("a complete run's folder carries %s (%v)", incompleteMarker, err)
	}
	st.signal.Store(int32(syscall.SIGINT))
	err = lateInterrupt(sc.Name, true, true, st)
	if exitCodeOf(err, &stderr) != exitSignal || !strings.Contains(err.Error(), "interrupted while verifying the fix") {
		t.Errorf("stderr of an interrupted verification: %v", err)
	}
	if err := lateInterrupt(sc.Name, false, false, st); err != nil {
		t.Errorf("no signal, yet %v", err)
	}
}

// --fix on a run a signal stopped says why fixed.toml is not written:
// the run was interrupted, not that no diagnosis has a fix.
func TestInterruptedRunSaysWhyNoFixedToml(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "i")
	code, _, stderr := runSignalled(syscall.SIGINT, "run", "fail-sustained-429", "--quiet", "-o", dir, "--fix")
	if code != exitSignal || !strings.Contains(stderr, "fixed.toml not written: the run was interrupted") || strings.Contains(stderr, "no diagnosis has a fix") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "fixed.toml")); !os.IsNotExist(err) {
		t.Errorf("fixed.toml of an interrupted run (%v)", err)
	}
}
