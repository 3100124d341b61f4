package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// FS is the file system an output folder is written to: nil for the
// operating system's; a test passes one that fails, as a full disk or a
// read-only folder would, at a write of its choosing.
type FS interface {
	// OpenFile is os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename is os.Rename.
	Rename(oldpath, newpath string) error
	// Remove is os.Remove.
	Remove(name string) error
	// MkdirAll is os.MkdirAll.
	MkdirAll(path string, perm fs.FileMode) error
}

// File is a file an FS opened for writing.
type File interface {
	io.Writer
	Close() error
}

// osFS is the operating system's file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// OutputError is the file system's refusal to write or remove a file of
// an output folder: a full disk, a read-only folder, a permission denied.
// Path is the file's final name (never its temporary one), Err the cause.
type OutputError struct {
	Op   string // "writing" or "removing"
	Path string
	Err  error
}

func (e *OutputError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }

// outputError is err, from op on path, as an *OutputError with the
// operating system's cause (a path error's own paths are temporary names).
func outputError(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &OutputError{Op: op, Path: path, Err: err}
}

// Folder writes the files of output folder Dir through FS (nil: the
// operating system's).
type Folder struct {
	Dir string
	FS  FS
}

func (f Folder) fs() FS {
	if f.FS == nil {
		return osFS{}
	}
	return f.FS
}

// recordingFile is a File that keeps its first write error: what a fill
// function failing on it reports is the file system's refusal, not its
// own.
type recordingFile struct {
	File
	err error
}

func (r *recordingFile) Write(p []byte) (int, error) {
	n, err := r.File.Write(p)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// WriteFile writes name (a path relative to the folder, clean and local)
// through a hidden temporary file in the same folder and a rename, so a
// file under its final name is always complete: a failure, or a crash,
// leaves at most the temporary file. The file system's refusals are
// *OutputError naming the final path.
func (f Folder) WriteFile(name string, fill func(io.Writer) (int64, error)) error {
	path := filepath.Join(f.Dir, name)
	dir, base := filepath.Split(path)
	fsys := f.fs()
	var file File
	var tmp string
	for range 10000 {
		tmp = filepath.Join(dir, fmt.Sprintf(".%s.%d", base, rand.Uint32()))
		var err error
		if file, err = fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) {
			return outputError("writing", path, err)
		}
	}
	if file == nil {
		return fmt.Errorf("%s: no free temporary name in %s", name, dir)
	}
	rec := &recordingFile{File: file}
	if _, err := fill(rec); err != nil {
		file.Close()
		fsys.Remove(tmp)
		if rec.err != nil {
			return outputError("writing", path, rec.err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		fsys.Remove(tmp)
		return outputError("writing", path, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return outputError("writing", path, err)
	}
	return nil
}

// WriteBytes is WriteFile of data.
func (f Folder) WriteBytes(name string, data []byte) error {
	return f.WriteFile(name, bytes.NewReader(data).WriteTo)
}

// Mark writes marker name into the folder with note: written in place,
// not renamed, so that a marker created on a disk that then fills still
// marks the folder, empty.
func (f Folder) Mark(name, note string) error {
	path := filepath.Join(f.Dir, name)
	file, err := f.fs().OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return outputError("writing", path, err)
	}
	_, err = io.WriteString(file, note)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return outputError("writing", path, err)
	}
	return nil
}

// Remove removes name from the folder; one already absent is no error.
func (f Folder) Remove(name string) error {
	path := filepath.Join(f.Dir, name)
	if err := f.fs().Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return outputError("removing", path, err)
	}
	return nil
}

// MkdirAll creates the folder's subfolder name and those above it.
func (f Folder) MkdirAll(name string) error {
	path := filepath.Join(f.Dir, name)
	if err := f.fs().MkdirAll(path, 0o755); err != nil {
		return outputError("writing", path, err)
	}
	return nil
}

// writePages writes charts (PNG and SVG), then each of pages (a name and
// its writer) into the folder, calling wrote (if not nil) with the name of
// each file once it is in place.
func (f Folder) writePages(charts []Chart, wrote func(string), pages ...docFile) error {
	put := func(name string, fill func(io.Writer) (int64, error)) error {
		if err := f.WriteFile(name, fill); err != nil {
			return err
		}
		if wrote != nil {
			wrote(name)
		}
		return nil
	}
	for _, c := range charts {
		if err := put(c.Name+".png", bytes.NewReader(c.PNG).WriteTo); err != nil {
			return err
		}
		if err := put(c.Name+".svg", bytes.NewReader(c.SVG).WriteTo); err != nil {
			return err
		}
	}
	for _, p := range pages {
		if err := put(p.name, func(w io.Writer) (int64, error) { return 0, p.write(w) }); err != nil {
			return err
		}
	}
	return nil
}

// docFile is a report file and what writes it.
type docFile struct {
	name  string
	write func(io.Writer) error
}

// WriteFilesTo writes the charts, report.md and report.html into folder
// f, through its FS, calling wrote (if not nil) with the name of each file
// once it is in place: what a writer that fails part way did write.
func (d *Document) WriteFilesTo(f Folder, wrote func(name string)) error {
	return f.writePages(d.Charts, wrote, docFile{"report.md", d.WriteMarkdown}, docFile{"report.html", d.WriteHTML})
}

// WriteFilesTo is Document.WriteFilesTo for a plan: plan.md and plan.html.
func (p *Plan) WriteFilesTo(f Folder, wrote func(name string)) error {
	return f.writePages(p.Charts, wrote, docFile{"plan.md", p.WriteMarkdown}, docFile{"plan.html", p.WriteHTML})
}

// WriteFilesTo is Document.WriteFilesTo for a comparison: compare.md and
// compare.html.
func (c *Comparison) WriteFilesTo(f Folder, wrote func(name string)) error {
	return f.writePages(c.Charts, wrote, docFile{"compare.md", c.WriteMarkdown}, docFile{"compare.html", c.WriteHTML})
}

// JSONError is err, from decoding the JSON data of the file at path,
// with the line and column where the file went wrong when the decoder
// gave an offset: "out/metrics.json:3:7: invalid character …".
func JSONError(path string, data []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 || offset > int64(len(data)) {
		return fmt.Errorf("%s: %w", path, err)
	}
	// The decoder's offset is past the byte it stopped at.
	before := data[:max(offset-1, 0)]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
}
