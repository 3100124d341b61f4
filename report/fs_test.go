package report

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stageFaultFS fails its stage-th call (0: opening, 1: writing, 2:
// closing, 3: renaming) with ENOSPC.
type stageFaultFS struct {
	stage int
}

type stageFaultFile struct {
	fsys *stageFaultFS
	f    *os.File
}

func (s *stageFaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if s.stage == 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	f, err := os.OpenFile(name, flag, perm)
	return &stageFaultFile{s, f}, err
}

func (s *stageFaultFS) Rename(oldpath, newpath string) error {
	if s.stage == 3 {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.ENOSPC}
	}
	return os.Rename(oldpath, newpath)
}

func (s *stageFaultFS) Remove(name string) error                     { return os.Remove(name) }
func (s *stageFaultFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

func (f *stageFaultFile) Write(p []byte) (int, error) {
	if f.fsys.stage == 1 {
		n, _ := f.f.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
	}
	return f.f.Write(p)
}

func (f *stageFaultFile) Close() error {
	err := f.f.Close()
	if f.fsys.stage == 2 {
		return &fs.PathError{Op: "close", Path: f.f.Name(), Err: syscall.ENOSPC}
	}
	return err
}

// A file system refusing any step of Folder.WriteFile leaves no file under
// the final name, nor a temporary one (removals succeed on a full disk),
// and its error is an *OutputError naming the final path and the cause.
func TestFaultInWriteFileLeavesNoFile(t *testing.T) {
	for stage := range 4 {
		dir := t.TempDir()
		f := Folder{Dir: dir, FS: &stageFaultFS{stage: stage}}
		err := f.WriteFile("a.json", func(w io.Writer) (int64, error) {
			n, err := io.WriteString(w, strings.Repeat("x", 1000))
			return int64(n), err
		})
		var oe *OutputError
		if !errors.As(err, &oe) || oe.Path != filepath.Join(dir, "a.json") || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("stage %d: %v, want an *OutputError for %s", stage, err, filepath.Join(dir, "a.json"))
		}
		if want := filepath.Join(dir, "a.json") + ": " + syscall.ENOSPC.Error(); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("stage %d: %q does not end %q", stage, err, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("stage %d: left %v", stage, entries)
		}
	}
}

// A JSON file that does not decode is named with the line and column
// where it went wrong, 1-based, at the byte the decoder stopped at.
func TestJSONErrorNamesLineAndColumn(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\": bad\n}\n")
	var v map[string]any
	err := JSONError("x.json", data, json.Unmarshal(data, &v))
	if err == nil || !strings.HasPrefix(err.Error(), "x.json:3:8: invalid character 'b'") {
		t.Errorf("err %v", err)
	}
	var n struct{ A string }
	typed := []byte("{\n  \"A\": 1\n}")
	err = JSONError("y.json", typed, json.Unmarshal(typed, &n))
	if err == nil || !strings.HasPrefix(err.Error(), "y.json:2:") {
		t.Errorf("type error: %v", err)
	}
}
