package planning

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// Journal records every replication a plan finishes, as it finishes, so
// that a plan stopped part way (a signal, a killed process, a pod that
// died) resumes where it stopped: Source.Simulate asks the journal before
// it runs a replication, and records the ones it runs.
//
// A record is keyed by what the replication is: the overrides it runs
// with (the point's swept values, a lengthened horizon, a robustness
// check's load and length) and its replication index (its seed). A
// point's replications, sequential or not, a refinement's rounds, a
// search's steps, a shard's points and the robustness check all run
// through Simulate, so all are covered by the one key, whatever round,
// shard or worker ran them. The plan's -o folder pins the rest (the
// scenario, its data files, the --set flags) by its fingerprint, checked
// before the journal is read.
//
// The format is one small JSON file per replication in the journal's
// folder, named by a digest of its key, and holding the key itself, the
// replication's results (what metrics.json holds: the plan measures a
// point, judges its horizon and counts its cost from them) or its
// deterministic error. Each is written to a temporary file, synced,
// renamed to its name and the folder synced, so a record is whole or
// absent after any crash, SIGKILL included. One file per record rather
// than an append-only log: the workers write their records at once with
// no shared offset or lock; a record is read only when its replication is
// asked for, so a resumed plan holds in memory what is in flight, never
// the whole journal; and nothing needs repairing after a torn write. A
// record that does not decode, or whose key is not the one asked for (a
// file truncated by a file system that kept the name but lost the data,
// a copy cut short), is taken as absent and its replication runs again.
type Journal struct {
	dir string
	// reused and recorded count the replications read from the journal
	// and those run and recorded by this process.
	reused, recorded atomic.Int64
	mu               sync.Mutex
	err              error // the first failure to record
}

// journalRecord is one replication's record.
type journalRecord struct {
	Key     string           `json:"key"`
	Error   string           `json:"error,omitempty"`
	Results *metrics.Results `json:"results,omitempty"`
}

// tempPrefix names a record being written: such a file is never read,
// and OpenJournal removes those a killed process left.
const tempPrefix = ".tmp-"

// OpenJournal opens (creating it) the journal in folder dir, removing the
// temporary files of records a stopped process was writing.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &report.OutputError{Op: "writing", Path: dir, Err: unwrapPath(err)}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the journal %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &Journal{dir: dir}, nil
}

// Reused is how many replications were read from the journal.
func (j *Journal) Reused() int64 {
	if j == nil {
		return 0
	}
	return j.reused.Load()
}

// Recorded is how many replications were run and recorded.
func (j *Journal) Recorded() int64 {
	if j == nil {
		return 0
	}
	return j.recorded.Load()
}

// Err is the first failure to record a replication (a full disk, a
// read-only folder), as a *report.OutputError: the plan's results stand,
// but the journal misses what was not recorded.
func (j *Journal) Err() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// journalKey is the text that names a replication: its overrides in
// order, each with its value's type, and its index.
func journalKey(overrides []scenarios.Override, rep int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replication %d\n", rep)
	for _, o := range overrides {
		fmt.Fprintf(&b, "%s=%T:%v\n", o.Key, o.Value, o.Value)
	}
	return b.String()
}

// path is the file of the record of key.
func (j *Journal) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(j.dir, hex.EncodeToString(sum[:16])+".json")
}

// lookup returns the recorded replication of overrides and rep, or nil
// when there is no whole one.
func (j *Journal) lookup(overrides []scenarios.Override, rep int) *journalRecord {
	if j == nil {
		return nil
	}
	key := journalKey(overrides, rep)
	data, err := os.ReadFile(j.path(key))
	if err != nil {
		return nil
	}
	var rec journalRecord
	if json.Unmarshal(data, &rec) != nil || rec.Key != key || (rec.Results == nil && rec.Error == "") {
		return nil // torn or foreign: run it again
	}
	j.reused.Add(1)
	return &rec
}

// outcome is the recorded replication as Simulate returns it.
func (rec *journalRecord) outcome() (*metrics.Results, error) {
	if rec.Error != "" {
		return rec.Results, errors.New(rec.Error)
	}
	return rec.Results, nil
}

// record writes the replication of overrides and rep durably: a
// temporary file, synced, renamed, the folder synced. After a first
// failure the journal records nothing more (Err).
func (j *Journal) record(overrides []scenarios.Override, rep int, r *metrics.Results, runErr error) {
	if j == nil || j.Err() != nil {
		return
	}
	key := journalKey(overrides, rep)
	rec := journalRecord{Key: key, Results: r}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	data, err := json.Marshal(rec)
	if err == nil {
		err = writeDurably(j.dir, j.path(key), data)
	}
	if err != nil {
		j.mu.Lock()
		if j.err == nil {
			j.err = err
		}
		j.mu.Unlock()
		return
	}
	j.recorded.Add(1)
}

// writeDurably writes data to path, a file of folder dir, so that after
// any crash path holds all of data or what it held before: a temporary
// file in dir, synced and renamed, then dir synced so the rename itself
// survives. The file system's refusals are *report.OutputError.
func writeDurably(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return &report.OutputError{Op: "writing", Path: path, Err: unwrapPath(err)}
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return &report.OutputError{Op: "writing", Path: path, Err: unwrapPath(err)}
	}
	return SyncDir(dir)
}

// WriteDurably writes data to path as the journal writes its records
// (temporary file, sync, rename, folder synced).
func WriteDurably(path string, data []byte) error {
	return writeDurably(filepath.Dir(path), path, data)
}

// SyncDir syncs folder dir, so that the files created, renamed or removed
// in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return &report.OutputError{Op: "writing", Path: dir, Err: unwrapPath(err)}
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &report.OutputError{Op: "writing", Path: dir, Err: unwrapPath(err)}
	}
	return nil
}

// unwrapPath is a path error's cause: the OutputError names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
