package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"strings"
	"sync"
	"time"
)

// Loader loads scenarios as LoadWith and ParseWith do, reading each file
// once: a scenario's text and its TOML tree, and the data files it reads
// (a trace, latency samples). A plan loads its scenario at every point and
// replication with that point's overrides; through a Loader the text is
// parsed once and every load reads its tree (a load with overrides copies
// only the tables they reach), and a trace file is checked once (see
// readTrace) and its checksums shared. Every load also sees the files as
// they were first read, however long the plan runs and whatever happens to
// them meanwhile: a trace in ascending order, which each run reads again
// as it goes, fails the run, naming the file, once the run reads bytes
// that changed. A Loader is safe for concurrent use; the zero value is
// not usable (NewLoader), and a nil *Loader reads every file afresh, as
// the package's functions do.
type Loader struct {
	mu     sync.Mutex
	texts  map[fileKey]*loadOnce[[]byte]
	trees  map[string]*parsedTree
	cols   map[colKey]*loadOnce[[]time.Duration]
	traces map[string]*loadOnce[*traceFile]
}

// NewLoader returns a Loader that has read nothing yet.
func NewLoader() *Loader {
	return &Loader{texts: map[fileKey]*loadOnce[[]byte]{}, trees: map[string]*parsedTree{},
		cols: map[colKey]*loadOnce[[]time.Duration]{}, traces: map[string]*loadOnce[*traceFile]{}}
}

// loadOnce is a value read once, by the first load that needs it, while
// the others that need it wait.
type loadOnce[T any] struct {
	once sync.Once
	v    T
	err  error
}

// parsedTree is the TOML tree of one scenario text.
type parsedTree struct {
	data []byte // the text parsed
	loadOnce[map[string]any]
}

// fileKey names a file read whole, at most limit bytes of it.
type fileKey struct {
	path  string
	limit int64
}

// colKey names a data file's column as it is read: its path, whether its
// values may be durations (samples).
type colKey struct {
	path      string
	durations bool
}

// LoadWith reads and validates the scenario file at path with overrides
// applied, as the package's LoadWith does.
func (l *Loader) LoadWith(path string, overrides []Override) (*Scenario, error) {
	data, err := l.read(path, maxFileBytes)
	if err != nil {
		return nil, err
	}
	return l.ParseWith(path, data, overrides)
}

// ParseWith validates scenario text with overrides applied, as the
// package's ParseWith does. The tree of a file's text is kept: a later
// call for the same file and text reads it, its overrides applied to
// copies of the tables they reach.
func (l *Loader) ParseWith(file string, data []byte, overrides []Override) (*Scenario, error) {
	return parseWith(l, file, data, overrides)
}

// read returns the bytes of the regular file at path, of at most limit
// bytes (see readBounded), as first read. They are shared: callers only
// read them.
func (l *Loader) read(path string, limit int64) ([]byte, error) {
	if l == nil {
		return readBounded(path, limit)
	}
	k := fileKey{path, limit}
	l.mu.Lock()
	e := l.texts[k]
	if e == nil {
		e = new(loadOnce[[]byte])
		l.texts[k] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.v, e.err = readBounded(path, limit) })
	return e.v, e.err
}

// loadedText returns the bytes of the data file at path if a load
// through l read them whole, or nil.
func (l *Loader) loadedText(path string) []byte {
	l.mu.Lock()
	e := l.texts[fileKey{path, maxDataBytes}]
	l.mu.Unlock()
	if e == nil {
		return nil
	}
	e.once.Do(func() {}) // waits for a reading under way
	return e.v
}

// tree returns the TOML tree of data, the text of file: the one kept for
// that text, which the caller only reads, or, when the caller applies
// overrides to it (mutable), a copy of its top table whose values are
// still shared (apply copies what it changes). l must not be nil
// (parseWith makes one).
func (l *Loader) tree(file string, data []byte, mutable bool) (map[string]any, error) {
	l.mu.Lock()
	e := l.trees[file]
	if e == nil || !bytes.Equal(e.data, data) { // a new file, or the same name with another text
		e = &parsedTree{data: bytes.Clone(data)}
		l.trees[file] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.v, e.err = decodeTree(file, e.data) })
	if e.err != nil {
		return nil, e.err
	}
	if !mutable {
		return e.v, nil
	}
	return maps.Clone(e.v), nil
}

// column returns the first column of the data file at path (see
// parseColumn). The file is read once for every use of it, so that each
// reads the same text. The slice is shared: callers only read it. l must
// not be nil (parseWith makes one).
func (l *Loader) column(path string, durations bool) ([]time.Duration, error) {
	read := func() ([]time.Duration, error) {
		data, err := l.read(path, maxDataBytes)
		if err != nil {
			return nil, err
		}
		if tf := l.loadedTrace(path); tf != nil { // a trace too: the same text
			if err := tf.check(data); err != nil {
				return nil, err
			}
		}
		return parseColumn(path, data, durations)
	}
	k := colKey{path, durations}
	l.mu.Lock()
	e := l.cols[k]
	if e == nil {
		e = new(loadOnce[[]time.Duration])
		l.cols[k] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.v, e.err = read() })
	return e.v, e.err
}

// copyTree returns a copy of a TOML tree that shares nothing a change to
// it can reach: its tables and arrays are copied, their scalars shared.
func copyTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyTree(e)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = copyTree(e).(map[string]any)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyTree(e)
		}
		return out
	}
	return v
}

// Open loads arg, a TOML file or the name of a bundled example, with the
// overrides applied, reading through l (nil reads every file afresh). A
// name with no path separator and no .toml that names no file is looked
// up among the examples.
func (l *Loader) Open(arg string, overrides []Override) (*Scenario, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("the scenario is an empty name: give a TOML file or a bundled example (limitsim scenarios lists them)")
	}
	// A bare name is a file of that name here if there is one, else the
	// bundled example: a folder of that name (a run's -o) does not hide
	// the example.
	st, statErr := os.Stat(arg)
	if bare := !strings.ContainsAny(arg, `/\`) && !strings.HasSuffix(arg, ".toml"); bare && (statErr != nil || st.IsDir()) {
		src, err := ExampleSource(arg)
		if err == nil {
			return l.ParseWith(arg+".toml", src, overrides)
		}
		if statErr != nil {
			return nil, err
		}
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		return nil, missingFile(arg)
	}
	return l.LoadWith(arg, overrides)
}

// missingFile is the error of a scenario file that is not there, as the
// command line says it: not the file system's "stat …" words.
type missingFile string

func (m missingFile) Error() string {
	return string(m) + ": no such file (see `limitsim scenarios` for the bundled examples)"
}

// Unwrap lets errors.Is(err, fs.ErrNotExist) hold.
func (m missingFile) Unwrap() error { return fs.ErrNotExist }
