package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
)

// faultFS is the operating system's file system failing with err at the
// failAt-th file it writes (1-based; 0: never) and, unless once, at every
// write after it, as a full disk or a read-only folder does. A file is
// written by opening it, writing to it, closing it and (for a temporary
// name) renaming it: the write that fails is, by failAt's remainder by 4,
// its opening, its first write (half of it reaching the disk), its
// closing or its rename (its closing, for a file not renamed). A folder's
// creation is one write and so, but for a full disk (which removes files
// as usual), is a removal.
type faultFS struct {
	failAt int
	err    syscall.Errno
	once   bool

	mu      sync.Mutex
	files   int            // files written so far
	renames map[string]int // temporary names closed, by file number
	failed  string         // the path of the first write that failed
}

// Write stages of a file.
const (
	opOpen = iota
	opWrite
	opClose
	opRename
)

// fault reports whether the write at stage op of the file-th file, path,
// fails; last: the file's last write.
func (f *faultFS) fault(file, op int, last bool, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.failed != "" && !f.once:
	case f.failed == "" && file == f.failAt && (op >= f.failAt%4 || last):
		f.failed = path
	default:
		return nil
	}
	return f.err
}

// next numbers a new file written.
func (f *faultFS) next() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files++
	return f.files
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (report.File, error) {
	n := f.next()
	if err := f.fault(n, opOpen, false, name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	file, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{fsys: f, n: n, f: file}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	n := -1
	f.mu.Lock()
	if f.renames != nil {
		n = f.renames[oldpath]
	}
	f.mu.Unlock()
	if err := f.fault(n, opRename, true, oldpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return os.Rename(oldpath, newpath)
}

func (f *faultFS) Remove(name string) error {
	if f.err != syscall.ENOSPC {
		if err := f.fault(f.next(), opOpen, true, name); err != nil {
			return &fs.PathError{Op: "remove", Path: name, Err: err}
		}
	}
	return os.Remove(name)
}

func (f *faultFS) MkdirAll(path string, perm fs.FileMode) error {
	if err := f.fault(f.next(), opOpen, true, path); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return os.MkdirAll(path, perm)
}

// faultFile is a file of a faultFS, its n-th.
type faultFile struct {
	fsys *faultFS
	n    int
	f    *os.File
}

func (w *faultFile) Write(p []byte) (int, error) {
	if err := w.fsys.fault(w.n, opWrite, false, w.f.Name()); err != nil {
		n, _ := w.f.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: w.f.Name(), Err: err}
	}
	return w.f.Write(p)
}

func (w *faultFile) Close() error {
	err := w.f.Close()
	renamed := tempName.MatchString(filepath.Base(w.f.Name()))
	if ferr := w.fsys.fault(w.n, opClose, !renamed, w.f.Name()); ferr != nil {
		return &fs.PathError{Op: "close", Path: w.f.Name(), Err: ferr}
	}
	if renamed {
		w.fsys.mu.Lock()
		if w.fsys.renames == nil {
			w.fsys.renames = map[string]int{}
		}
		w.fsys.renames[w.f.Name()] = w.n
		w.fsys.mu.Unlock()
	}
	return err
}

// tempName matches the temporary names outputs are written under before
// their rename: "." + the final name + "." + digits.
var tempName = regexp.MustCompile(`^\.(.+)\.[0-9]+$`)

// finalPath is the output a write to path was for: path without its
// temporary name.
func finalPath(path string) string {
	if m := tempName.FindStringSubmatch(filepath.Base(path)); m != nil {
		return filepath.Join(filepath.Dir(path), m[1])
	}
	return path
}

// readFolder returns the files under dir by their slash-separated
// relative paths.
func readFolder(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// faultScenario writes a small scenario that reads a data file in a
// subfolder, and returns its path.
func faultScenario(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	var samples strings.Builder
	for i := range 100 {
		fmt.Fprintf(&samples, "%dms\n", 20+i%30)
	}
	if err := os.MkdirAll(filepath.Join(src, "lat"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "lat", "samples.csv"), []byte(samples.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(src, "s.toml")
	if err := os.WriteFile(p, []byte(`name = "faults"
[run]
duration = "3s"
[workload]
rate = 40.0
[[client.limiter]]
name = "conns"
kind = "semaphore"
permits = 4
[[upstream]]
host = "*"
latency = { dist = "empirical", samples = "lat/samples.csv" }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// faultSweep runs the command args(dir) writes output folder dir with,
// failing the 1st file it writes with errno (faultFS), then the 2nd, and
// so on until it completes without reaching the fault. Each failed
// command must exit 2 naming the file and the cause, and leave the folder
// marked INCOMPLETE with every file under a final name either absent or
// as a complete run writes it; it returns the number of files the command
// writes.
func faultSweep(t *testing.T, errno syscall.Errno, once bool, args func(dir string) []string) int {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	if code, _, errOut := cli(args(ref)...); code != exitOK {
		t.Fatalf("without faults: exit %d: %s", code, errOut)
	}
	return sweepFaults(t, errno, once, ref, nil, args)
}

// sweepFaults is faultSweep against reference folder ref, each command
// run on a folder prepare (when not nil) fills first: a command that
// rewrites a folder, rather than writing a new one, leaves what was
// there when its marker cannot be made.
func sweepFaults(t *testing.T, errno syscall.Errno, once bool, ref string, prepare func(dir string), args func(dir string) []string) int {
	t.Helper()
	want := readFolder(t, ref)
	listed := map[string]bool{}
	for _, n := range strings.Fields(string(want[report.OutputsManifest])) {
		listed[n] = true
	}
	for k := 1; ; k++ {
		dir := filepath.Join(t.TempDir(), "out")
		if prepare != nil {
			prepare(dir)
		}
		fsys := &faultFS{failAt: k, err: errno, once: once}
		var stdout, stderr bytes.Buffer
		code := run(args(dir), &stdout, &stderr, &session{fsys: fsys})
		got := readFolder(t, dir)
		if fsys.failed == "" { // every write made: the fault was never reached
			if code != exitOK || len(got) != len(want) {
				t.Fatalf("file %d never written: exit %d with %d files, want exit 0 with %d: %s", k, code, len(got), len(want), &stderr)
			}
			checkFiles(t, k, want, listed, got)
			return k - 1
		}
		if code != exitInvalid {
			t.Fatalf("%v at file %d (%s): exit %d, want %d: %s", errno, k, fsys.failed, code, exitInvalid, &stderr)
		}
		if path := finalPath(fsys.failed); !strings.Contains(stderr.String(), path+": "+errno.Error()) {
			t.Errorf("%v at file %d: the message does not name %s and the cause: %s", errno, k, path, &stderr)
		}
		if _, ok := got[incompleteMarker]; !ok {
			// Only the marker's own creation failing leaves none: then
			// nothing else was written.
			if finalPath(fsys.failed) != filepath.Join(dir, incompleteMarker) || (prepare == nil && len(got) > 0) {
				t.Errorf("%v at file %d (%s): no %s in the folder: %v", errno, k, fsys.failed, incompleteMarker, keys(got))
			}
		}
		checkFiles(t, k, want, listed, got)
	}
}

// checkFiles fails unless every file of got (a folder after a fault at
// write k) but the marker and temporary names is as in want (the folder a
// complete run writes, whose manifest lists listed), its manifest listing
// only such files, present.
func checkFiles(t *testing.T, k int, want map[string][]byte, listed map[string]bool, got map[string][]byte) {
	t.Helper()
	for name, data := range got {
		switch {
		case name == incompleteMarker || tempName.MatchString(filepath.Base(name)):
		case name == report.OutputsManifest:
			for _, n := range strings.Fields(string(data)) {
				if _, ok := got[n]; !ok || !listed[n] {
					t.Errorf("file %d: the manifest lists %s, absent or no output of a complete run", k, n)
				}
			}
		case !bytes.Equal(data, want[name]):
			t.Errorf("file %d: %s is not as a complete run writes it (%d bytes, want %d)", k, name, len(data), len(want[name]))
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A full disk (or a read-only folder, or a permission denied: see the
// plan's test) at any file run -o writes exits 2 naming the file and the cause, and leaves the folder
// marked INCOMPLETE, holding no file that looks complete and is not.
func TestFaultAtEveryWriteOfRun(t *testing.T) {
	scenario := faultScenario(t)
	args := func(dir string) []string { return []string{"run", scenario, "--quiet", "-o", dir} }
	n := faultSweep(t, syscall.ENOSPC, false, args)
	t.Logf("run: %d files, each failed with ENOSPC from there on", n)
}

// The same holds for plan -o, its charts, recommended.toml and the data
// file copied beside it.
func TestFaultAtEveryWriteOfPlan(t *testing.T) {
	scenario := faultScenario(t)
	args := func(dir string) []string {
		return []string{"plan", scenario, "--sweep", "client.limiter.conns.permits=2,4", "-o", dir}
	}
	n := faultSweep(t, syscall.EROFS, false, args)
	t.Logf("plan: %d files, each failed with EROFS from there on", n)
	// Failing once, the files written before are listed in the manifest.
	n = faultSweep(t, syscall.EACCES, true, args)
	t.Logf("plan: %d files, each failed once with EACCES", n)
}

// fixed.toml is written under its final name only once complete, and a
// full disk while writing it is the folder's problem, exit 2.
func TestFaultWritingFixed(t *testing.T) {
	src := planning.Source{Path: "token-bucket"}
	fix := &metrics.VerifiedFix{Verified: true, Set: map[string]any{"client.limiter.quota.rate": 60.0}}
	ref := t.TempDir()
	if err := writeFixed(report.Folder{Dir: ref}, io.Discard, src, fix); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(ref, "fixed.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; ; k++ {
		dir := t.TempDir()
		fsys := &faultFS{failAt: k, err: syscall.ENOSPC}
		err := writeFixed(report.Folder{Dir: dir, FS: fsys}, io.Discard, src, fix)
		got, rerr := os.ReadFile(filepath.Join(dir, "fixed.toml"))
		if rerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("file %d: fixed.toml is not complete", k)
		}
		if fsys.failed == "" {
			if err != nil || rerr != nil {
				t.Fatalf("file %d never written: %v, %v", k, err, rerr)
			}
			t.Logf("fixed.toml: %d files", k-1)
			return
		}
		var stderr bytes.Buffer
		if code := exitCodeOf(outputsFailed("", dir, err), &stderr); code != exitInvalid || !errors.Is(err, syscall.ENOSPC) ||
			!strings.Contains(stderr.String(), finalPath(fsys.failed)+": "+syscall.ENOSPC.Error()) {
			t.Fatalf("file %d: exit %d: %s", k, code, &stderr)
		}
	}
}

// compare -o fails as run -o does: exit 2 naming the file and the cause,
// the folder marked INCOMPLETE, no report that looks complete and is not.
func TestFaultAtEveryWriteOfCompare(t *testing.T) {
	scenario := faultScenario(t)
	args := func(dir string) []string {
		return []string{"compare", scenario, "--set", "client.limiter.conns.permits=2", scenario, "--quiet", "-o", dir}
	}
	n := faultSweep(t, syscall.ENOSPC, false, args)
	if n < 4 { // the marker, a chart (PNG and SVG), compare.md, compare.html
		t.Fatalf("compare -o wrote %d files through the file system under test, want its marker, charts and reports", n)
	}
	t.Logf("compare: %d files, each failed with ENOSPC from there on", n)
}

// report DIR redraws a complete run's folder: a fault at any file it
// writes exits 2 and leaves the folder marked INCOMPLETE (it no longer
// holds one run's report whole), every file either as before or as the
// redraw writes it; a redraw that completes leaves no marker.
func TestFaultAtEveryWriteOfReport(t *testing.T) {
	scenario := faultScenario(t)
	ref := filepath.Join(t.TempDir(), "ref")
	if code, _, errOut := cli("run", scenario, "--quiet", "-o", ref); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	prepare := func(dir string) {
		if err := os.CopyFS(dir, os.DirFS(ref)); err != nil {
			t.Fatal(err)
		}
	}
	n := sweepFaults(t, syscall.EROFS, false, ref, prepare, func(dir string) []string { return []string{"report", dir} })
	if n < 3 { // the marker, a chart (PNG and SVG), report.md, report.html
		t.Fatalf("report wrote %d files through the file system under test, want its marker, charts and reports", n)
	}
	t.Logf("report: %d files, each failed with EROFS from there on", n)
}
