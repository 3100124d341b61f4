package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// outputState is how far writeOutputs has gone in dir.
type outputState struct {
	dir      string
	elapsedS float64 // simulated time the results cover
	stage    int     // writingData, dataWritten, allWritten
}

const (
	writingData = iota
	dataWritten
	allWritten
	// planJournaled: a plan is running into dir, journaling its runs.
	planJournaled
)

// incompleteMarker is the file that marks an output folder being written:
// it is created first and removed last, so a folder where it remains was
// left by a process stopped while writing.
const incompleteMarker = "INCOMPLETE"

// incompleteNote is what incompleteMarker says.
const incompleteNote = "limitsim is writing this folder; if this file remains, the process was stopped before every output was written\n"

// interruptedNote is what incompleteMarker says in the folder of a run a
// signal stopped, given the simulated seconds it covers.
const interruptedNote = "limitsim was interrupted while it ran this scenario: every output here is written, but covers the run only up to t=%.3fs simulated, not the whole run\n"

// checkWritable makes sure dir exists (creating it) and accepts files.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".limitsim-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// holdOutputDir creates output folder dir and takes it for this command,
// name and its args (report.LockOutputs), before anything runs: it
// returns the function that releases the folder, or an invalid input
// (another process writing the folder among them).
func holdOutputDir(dir, name string, args []string) (unlock func(), err error) {
	err = os.MkdirAll(dir, 0o755)
	if err == nil {
		words := []string{"limitsim", name}
		for _, a := range args {
			if a == "" || strings.ContainsAny(a, " \t\n'\"\\") {
				a = strconv.Quote(a)
			}
			words = append(words, a)
		}
		if unlock, err = report.LockOutputs(dir, strings.Join(words, " ")); err == nil {
			return unlock, nil
		}
	}
	if le := (*report.OutputsLockedError)(nil); errors.As(err, &le) {
		return nil, invalidInput(err)
	}
	return nil, invalidInput(fmt.Errorf("-o %s: %w", dir, err))
}

// checkOutputDir reports, before the run, whether output folder dir takes
// the outputs of sc (writes: the scenario file the command writes there):
// checkWritable, then dataNameClash.
func checkOutputDir(dir string, sc *scenarios.Scenario, writes string) error {
	if err := checkWritable(dir); err != nil {
		return err
	}
	return dataNameClash(dir, sc, writes)
}

// checkOutputFile reports whether a file can be written at path, before
// the work that produces it: its folder exists and takes a new file, and
// path is not a folder.
func checkOutputFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := report.CreateOutputTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write a file in %s: %w", filepath.Dir(path), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// outputsFailed is the error of err, a failure to write output folder
// dir, said after prefix (none when ""): an invalid input for the file
// system's refusal (a full disk, a read-only folder, a permission denied:
// the error names the file and the cause), an internal error for anything
// else.
func outputsFailed(prefix, dir string, err error) error {
	if prefix != "" {
		err = fmt.Errorf("%s: %w", prefix, err)
	}
	var oe *report.OutputError
	if !errors.As(err, &oe) || !(errors.Is(oe.Err, syscall.ENOSPC) || errors.Is(oe.Err, syscall.EDQUOT) ||
		errors.Is(oe.Err, syscall.EROFS) || errors.Is(oe.Err, fs.ErrPermission)) {
		return internalError(err)
	}
	if _, serr := os.Stat(filepath.Join(dir, incompleteMarker)); serr == nil {
		return invalidInput(messageList{err, fmt.Errorf("%s is incomplete (%s marks it): free space or make it writable, and run again", dir, incompleteMarker)})
	}
	return invalidInput(err)
}

// writeMarked runs write, which writes reports into folder f, with the
// folder marked by incompleteMarker until it returns without error (kept:
// the folder was incomplete before, and stays so). The reports are
// removed first, so that a write failing part way never leaves an
// earlier report beside new charts.
func writeMarked(f report.Folder, kept bool, write func() error, reports ...string) error {
	if !kept {
		if err := f.Mark(incompleteMarker, incompleteNote); err != nil {
			return err
		}
	}
	for _, name := range reports {
		if err := f.Remove(name); err != nil {
			return err
		}
	}
	if err := write(); err != nil {
		return err
	}
	if kept {
		return nil
	}
	return f.Remove(incompleteMarker)
}

// writeOutputs writes metrics.json, timeseries.csv, scenario.toml (with
// copies of the data files it reads), the charts and the reports into dir,
// each file through a temporary name and a rename, so a crash or Ctrl-C
// never leaves a half-written file. It records its progress
// in state (for a second Ctrl-C to report). The folder carries the
// incompleteMarker while it is being written, and a previous run's outputs
// are removed first (removeEarlierRun), so a folder never mixes two runs'
// files or looks complete when it is not.
func writeOutputs(dir string, sc *scenarios.Scenario, out *client.Outcome, state *atomic.Pointer[outputState]) error {
	return writeOutputsLive(dir, sc, out, nil, "", state)
}

// writeOutputsLive is writeOutputs for a live run held against its
// simulation (live nil: a simulated run), with the configuration of the
// nginx it ran behind, if any (nginx.conf).
func writeOutputsLive(dir string, sc *scenarios.Scenario, out *client.Outcome, live *report.LiveComparison, nginxConf string, state *atomic.Pointer[outputState]) error {
	return writeOutputsTo(report.Folder{Dir: dir}, sc, out, sidecars{live: live, nginxConf: nginxConf}, state)
}

// sidecars are what a run's folder may hold besides the run: a live run
// held against its simulation (live.json) with the configuration of the
// nginx it ran behind (nginx.conf), a replay's comparison with production
// (replay.json). Each is nil or empty when absent.
type sidecars struct {
	live      *report.LiveComparison
	nginxConf string
	replay    *report.ReplayComparison
}

// removeEarlierRun removes, before a run writes folder f, the outputs an
// earlier writer listed in its manifest (its reports, charts, data and
// sidecars), but for keep (the scenario's inputs read from the folder and
// its data files' copies, which copyDataFiles keeps or writes again): a
// write stopped part way (a full disk, a second Ctrl-C) then leaves this
// run's files beside the marker, never an earlier run's charts beside
// this run's data. The manifest is left as it is, so that what it lists
// stays known as an output until the run's end records its own.
func removeEarlierRun(f report.Folder, keep []string) error {
	listed, err := report.ListedOutputs(f.Dir)
	if err != nil {
		return err
	}
	for _, k := range keep {
		delete(listed, filepath.ToSlash(filepath.Clean(k)))
	}
	for _, n := range slices.Sorted(maps.Keys(listed)) {
		name := filepath.FromSlash(n)
		if n == report.OutputsManifest || n == report.LockFile || n == incompleteMarker || !filepath.IsLocal(name) {
			continue
		}
		if st, err := os.Lstat(filepath.Join(f.Dir, name)); err == nil && st.IsDir() {
			continue // no file of ours any more: the write of that name says so
		}
		if err := f.Remove(name); err != nil {
			return err
		}
	}
	return nil
}

// writeOutputsTo is writeOutputsLive into folder f, through its file
// system.
func writeOutputsTo(f report.Folder, sc *scenarios.Scenario, out *client.Outcome, side sidecars, state *atomic.Pointer[outputState]) (err error) {
	dir := f.Dir
	var written []string // so far: listed in the manifest if a later step fails
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Record(written))
		}
	}()
	// The charts are drawn while the data files are written: both only
	// read the results.
	var charts []report.Chart
	var omitted []report.Omitted
	var chartErr error
	drawn := make(chan struct{})
	go func() {
		defer close(drawn)
		charts, omitted, chartErr = report.Charts(out.Results, out.Series)
	}()
	defer func() { <-drawn }()
	resolved, err := sc.Resolved()
	if err != nil {
		return err
	}
	stage := func(s int) { state.Store(&outputState{dir: dir, elapsedS: out.Results.ElapsedS, stage: s}) }
	stage(writingData)
	if err := f.Mark(incompleteMarker, incompleteNote); err != nil {
		return err
	}
	if err := removeEarlierRun(f, append(inputsIn(dir, sc), sc.DataFiles()...)); err != nil {
		return err
	}
	written, err = writeRunFiles(f, out.Results, out.Series, resolved)
	if err != nil {
		return err
	}
	data, kept, err := copyDataFiles(f, sc, written)
	written = append(written, data...)
	if err != nil {
		return err
	}
	stage(dataWritten)
	if <-drawn; chartErr != nil {
		return chartErr
	}
	if side.replay != nil {
		c, err := report.ReplayChart(side.replay)
		if err != nil {
			return err
		}
		charts = append(charts, c)
	}
	doc := &report.Document{Results: out.Results, Series: out.Series, Scenario: resolved, Charts: charts, Omitted: omitted, Live: side.live, Replay: side.replay}
	names, err := writeSidecars(f, side)
	written = append(written, names...)
	if err != nil {
		return err
	}
	if err := doc.WriteFilesTo(f, func(n string) { written = append(written, n) }); err != nil {
		return err
	}
	if err := out.Series.Err(); err != nil { // the charts read it
		return err
	}
	if err := f.Prune(written, append(kept, inputsIn(dir, sc)...), []string{"tenants.csv", "scopes.csv", "live.json", "nginx.conf", "replay.json"}); err != nil {
		return err
	}
	if err := unmark(f, out.Results); err != nil {
		return err
	}
	stage(allWritten)
	return nil
}

// unmark ends the writing of a run's folder, every output in place: it
// removes incompleteMarker, or, for a run a signal stopped, keeps it and
// says so, since the outputs cover only the run up to the stop.
func unmark(f report.Folder, r *metrics.Results) error {
	if r.Stop.Kind == metrics.Interrupted {
		return f.Mark(incompleteMarker, fmt.Sprintf(interruptedNote, r.ElapsedS))
	}
	return f.Remove(incompleteMarker)
}

// writeSidecars writes what a live run or a replay adds to a run's
// folder (live.json, replay.json, nginx.conf) and returns the names
// written (on failure, those written before it).
func writeSidecars(f report.Folder, side sidecars) ([]string, error) {
	var written []string
	for _, s := range []struct {
		name string
		v    any
		ok   bool
	}{{"live.json", side.live, side.live != nil}, {"replay.json", side.replay, side.replay != nil}} {
		if !s.ok {
			continue
		}
		if err := f.WriteFile(s.name, func(w io.Writer) (int64, error) {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return 0, enc.Encode(s.v)
		}); err != nil {
			return written, err
		}
		written = append(written, s.name)
	}
	if side.nginxConf != "" {
		if err := f.WriteBytes("nginx.conf", []byte(side.nginxConf)); err != nil {
			return written, err
		}
		written = append(written, "nginx.conf")
	}
	return written, nil
}

// writeRunFiles writes a run's data files and scenario.toml into folder
// f and returns their names (on failure, of those written before it).
func writeRunFiles(f report.Folder, r *metrics.Results, s *metrics.Series, resolved string) ([]string, error) {
	count := func(f func(io.Writer) error) func(io.Writer) (int64, error) {
		return func(w io.Writer) (int64, error) { return 0, f(w) }
	}
	files := []struct {
		name string
		fill func(io.Writer) error
	}{
		{"metrics.json", func(w io.Writer) error { return metrics.WriteJSON(w, metrics.Listed(r)) }},
		{"tenants.csv", func(w io.Writer) error { return metrics.WriteTenantsCSV(w, r) }},
		{"scopes.csv", func(w io.Writer) error { return metrics.WriteScopesCSV(w, r) }},
		{"timeseries.csv", func(w io.Writer) error { return s.WriteColumnsCSV(w, metrics.ListedColumns(r, s)) }},
		{"scenario.toml", func(w io.Writer) error {
			_, err := io.WriteString(w, resolved)
			return err
		}},
	}
	tenants, scopes := metrics.HasEntities(r)
	var written []string
	for _, file := range files {
		if (file.name == "tenants.csv" && !tenants) || (file.name == "scopes.csv" && !scopes) {
			continue
		}
		if err := f.WriteFile(file.name, count(file.fill)); err != nil {
			return written, err
		}
		written = append(written, file.name)
	}
	return written, nil
}

// copyDataFiles copies the data files sc reads (a trace, latency samples)
// into folder f at the same relative paths, so that the scenario.toml or
// recommended.toml written there runs again: its paths are relative to its
// own folder. It returns the files it wrote (on failure too: those copied
// before it), and those it kept: a file already there (dir is the
// scenario's own folder) is the user's, not written, and stays. A data
// file named as one of the outputs in taken (clean, slash-separated paths)
// is refused: its copy would replace it.
func copyDataFiles(f report.Folder, sc *scenarios.Scenario, taken []string) (written, kept []string, err error) {
	dir := f.Dir
	if err := dataNameClash(dir, sc, ""); err != nil { // checked before the run too
		return nil, nil, err
	}
	from := filepath.Dir(sc.File)
	for _, p := range sc.DataFiles() {
		if slices.Contains(taken, filepath.ToSlash(filepath.Clean(p))) {
			return nil, nil, fmt.Errorf("data file %s has the name of one of the outputs: rename it", p)
		}
		src, dst := filepath.Join(from, p), filepath.Join(dir, p)
		si, err := os.Stat(src)
		if err != nil {
			return written, nil, fmt.Errorf("data file %s: %w", p, err)
		}
		if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
			kept = append(kept, p)
			continue
		}
		if err := f.MkdirAll(filepath.Dir(p)); err != nil {
			return written, nil, err
		}
		if err := f.WriteFile(p, func(w io.Writer) (int64, error) {
			in, err := sc.OpenDataFile(p)
			if err != nil {
				return 0, err
			}
			defer in.Close()
			return io.Copy(w, in)
		}); err != nil {
			return written, nil, err
		}
		written = append(written, p)
	}
	return written, kept, nil
}

// outputNames are the files a run's output folder may hold besides its
// charts: a data file of the scenario must not be named as one of them.
var outputNames = []string{"metrics.json", "timeseries.csv", "scenario.toml", "tenants.csv", "scopes.csv",
	"report.md", "report.html", "live.json", "replay.json", "plan.json", "plan.md", "plan.html", "recommended.toml", "fixed.toml", report.OutputsManifest, report.LockFile, incompleteMarker}

// realPath is path made absolute with its symbolic links resolved, so
// that a folder reached through a link is the same folder.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// inputsIn lists the files of sc (its own file, its data files) that lie
// in dir, as paths relative to it: a command writing into dir keeps them,
// whoever wrote them.
func inputsIn(dir string, sc *scenarios.Scenario) []string {
	if sc.File == "" {
		return nil
	}
	absD, err := realPath(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range append([]string{sc.File}, sc.DataFiles()...) {
		if f != sc.File {
			f = filepath.Join(filepath.Dir(sc.File), f)
		}
		absF, err := realPath(f)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(absD, absF); err == nil && filepath.IsLocal(rel) {
			out = append(out, rel)
		}
	}
	return out
}

// dataNameClash reports, before the run, a data file of sc that its copy
// into output folder dir could not take the place of: one named as an
// output (a chart, a report, a data file of the run), or a file already
// there that no run wrote.
func dataNameClash(dir string, sc *scenarios.Scenario, writes string) error {
	listed, err := report.ListedOutputs(dir)
	if err != nil {
		return err
	}
	// The scenario itself, in the folder under the name of the scenario
	// the command writes there (writes: scenario.toml, or a plan's
	// recommended.toml): a run's own file is rewritten alike; one no run
	// wrote would lose its comments and layout.
	if in := inputsIn(dir, sc); writes != "" && len(in) > 0 && filepath.ToSlash(in[0]) == writes && !listed[writes] && !scenarios.IsResolved(sc) {
		return fmt.Errorf("%s is the scenario being run and no run wrote it: the %s written there would replace it; choose another folder", writes, writes)
	}
	for _, p := range sc.DataFiles() {
		c := filepath.ToSlash(filepath.Clean(p))
		if isOutputName(c) {
			return fmt.Errorf("data file %s has the name of an output of -o, which would replace it: rename it", p)
		}
		si, err1 := os.Stat(filepath.Join(filepath.Dir(sc.File), p))
		di, err2 := os.Stat(filepath.Join(dir, p))
		if err1 == nil && err2 == nil && !os.SameFile(si, di) && !listed[c] {
			return fmt.Errorf("data file %s: the folder already holds a %s that no run wrote, which the copy would replace: choose another folder", p, p)
		}
	}
	return nil
}
