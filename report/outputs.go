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

// PruneOutputs ends the writing of output folder dir: it removes the files
// an earlier writer left there (those dir's manifest lists, and known, the
// optional files of this kind of output, for a folder without a manifest)
// that written, this writer's files, does not hold, and records written as
// dir's manifest. A folder written again then never keeps another run's
// tenants.csv, charts or data files beside this one's.
func PruneOutputs(dir string, written, known []string) error {
	stale := slices.Clone(known)
	data, err := os.ReadFile(filepath.Join(dir, OutputsManifest))
	switch {
	case err == nil:
		stale = append(stale, strings.Split(string(data), "\n")...)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	keep := make(map[string]bool, len(written))
	for _, n := range written {
		keep[filepath.ToSlash(n)] = true
	}
	for _, n := range stale {
		p := filepath.FromSlash(n)
		if n == "" || keep[n] || !filepath.IsLocal(p) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	names := make([]string, 0, len(keep))
	for n := range keep {
		names = append(names, n)
	}
	slices.Sort(names)
	return WriteFileAtomic(dir, OutputsManifest, func(w io.Writer) (int64, error) {
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
		if ext := filepath.Ext(n); n != "" && ext != ".png" && ext != ".svg" {
			written = append(written, n)
		}
	}
	return PruneOutputs(dir, written, nil)
}
