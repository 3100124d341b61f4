package report

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OutputsManifest is the file, in an output folder, that lists the files
// the last command to write the folder wrote there, one relative path a
// line.
const OutputsManifest = ".limitsim-outputs"

// ListedOutputs returns the files dir's manifest lists (clean,
// slash-separated): those an earlier writer of the folder wrote there.
func ListedOutputs(dir string) (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, OutputsManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range strings.Split(string(data), "\n") {
		if n = strings.TrimSpace(n); n != "" {
			out[outputName(n)] = true
		}
	}
	return out, nil
}

// PruneOutputs ends the writing of output folder dir: it removes the files
// an earlier writer left there (those dir's manifest lists, and known, the
// optional files of this kind of output, for a folder without a manifest)
// that this writer neither wrote (written) nor kept (kept: files of the
// user's found in place, such as a data file of a scenario run in its own
// folder), and records as dir's manifest what it wrote, with what it kept
// that an earlier writer had written. A folder written again then never
// keeps another run's tenants.csv, charts or data files beside this
// one's, and no file the tools did not write is ever removed. Paths are
// compared clean and slash-separated.
func PruneOutputs(dir string, written, kept, known []string) error {
	return Folder{Dir: dir}.Prune(written, kept, known)
}

// Prune is PruneOutputs of the folder, through its FS.
func (f Folder) Prune(written, kept, known []string) error {
	dir := f.Dir
	norm := func(n string) string {
		if n == "" {
			return ""
		}
		return outputName(n)
	}
	stale := map[string]bool{}
	listed := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(dir, OutputsManifest))
	switch {
	case err == nil:
		for _, n := range strings.Split(string(data), "\n") {
			if n = norm(n); n != "" {
				stale[n], listed[n] = true, true
			}
		}
	case errors.Is(err, fs.ErrNotExist):
		for _, n := range known { // a folder written before the manifest
			stale[norm(n)] = true
		}
	default:
		return err
	}
	keep := map[string]bool{}
	for _, n := range written {
		keep[norm(n)] = true
	}
	for _, n := range kept {
		if n = norm(n); listed[n] || keep[n] {
			keep[n] = true // written by an earlier writer: still ours
		} else {
			keep[n] = false // the user's: kept, never listed
		}
	}
	for n := range stale {
		if _, ok := keep[n]; ok || n == "" || n == LockFile || !filepath.IsLocal(filepath.FromSlash(n)) {
			continue
		}
		if err := f.Remove(filepath.FromSlash(n)); err != nil {
			return err
		}
	}
	var names []string
	for n, ours := range keep {
		if ours {
			names = append(names, n)
		}
	}
	return f.writeManifest(names)
}

// RecordWritten adds written to dir's manifest, removing nothing: for a
// writer that failed part way, so that the files it did write (a data
// file copied beside the scenario, say) are known as outputs to the next
// writer of the folder, which replaces or removes them, rather than taken
// for the user's.
func RecordWritten(dir string, written []string) error {
	return Folder{Dir: dir}.Record(written)
}

// Record is RecordWritten of the folder, through its FS.
func (f Folder) Record(written []string) error {
	if len(written) == 0 {
		return nil
	}
	listed, err := ListedOutputs(f.Dir)
	if err != nil {
		return err
	}
	for _, n := range written {
		listed[outputName(n)] = true
	}
	names := make([]string, 0, len(listed))
	for n := range listed {
		names = append(names, n)
	}
	return f.writeManifest(names)
}

// outputName is a path in an output folder as its manifest lists it: clean
// and slash-separated.
func outputName(n string) string { return filepath.ToSlash(filepath.Clean(filepath.FromSlash(n))) }

// writeManifest records names, sorted, as the folder's manifest (the lock
// file is no output, and never listed).
func (f Folder) writeManifest(names []string) error {
	names = slices.DeleteFunc(names, func(n string) bool { return n == LockFile })
	slices.Sort(names)
	return f.WriteFile(OutputsManifest, func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, strings.Join(names, "\n")+"\n")
		return int64(n), err
	})
}

// Files lists the files WriteFiles writes.
func (d *Document) Files() []string {
	out := make([]string, 0, 2*len(d.Charts)+2)
	for _, c := range d.Charts {
		out = append(out, c.Name+".png", c.Name+".svg")
	}
	return append(out, "report.md", "report.html")
}

// PruneRedrawn is PruneOutputs for a report redrawn in dir from its data
// files (doc's): the charts and reports are doc's, the other files those
// the manifest lists.
func PruneRedrawn(dir string, doc *Document) error {
	written := doc.Files()
	data, err := os.ReadFile(filepath.Join(dir, OutputsManifest))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, n := range strings.Split(string(data), "\n") {
		// The charts are the folder's own .png and .svg files; one in a
		// subfolder is a data file.
		if ext := filepath.Ext(n); n != "" && (ext != ".png" && ext != ".svg" || strings.Contains(n, "/")) {
			written = append(written, n)
		}
	}
	return PruneOutputs(dir, written, nil, nil)
}
