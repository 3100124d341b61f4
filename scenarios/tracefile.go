package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"

	"github.com/limitsim/limitsim/models/arrivals"
)

// A trace file in ascending order is read as each run goes, a line at a
// time: memory does not grow with its length. One out of order is read
// whole and sorted, as long as it is at most maxDataBytes.
//
// Each reading checks that the file is still the one first read: its
// size, and a checksum of each of its chunks (at most maxTraceChunks of
// them), taken as the scenario was loaded. A run that reads a chunk
// that changed fails, naming the file, rather than replay other
// arrivals; a run that stops early reads on to the end of its chunk to
// check it.
const (
	minTraceChunk  = 1 << 20
	maxTraceChunks = 1024
)

// castagnoli is the CRC-32C table: checksummed in hardware, at memory
// speed.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// traceFile is a trace file as the scenario's loading first read it. It is
// shared by every load and run that replays it, and never changes.
type traceFile struct {
	path  string
	size  int64
	chunk int64    // the bytes a checksum covers
	sums  []uint32 // each chunk's CRC-32C
	count int64    // the instants
	least time.Duration
	// sorted holds the instants of a file out of order, sorted; nil when
	// the file is in ascending order and streamed.
	sorted []time.Duration
}

// chunkFor is the chunk size of a file of size bytes.
func chunkFor(size int64) int64 {
	return max(minTraceChunk, (size+maxTraceChunks-1)/maxTraceChunks)
}

// readTrace reads the trace file at path a line at a time: its instants'
// count, least and order, the checksums of its chunks, and any problem
// with a line. A file out of order is then read again whole and sorted,
// if it is at most maxDataBytes; a larger one is an error naming the
// first line out of order. data, when not nil, is the file's text as a
// load first read it (as latency samples), read instead of the file.
func readTrace(path string, data []byte) (*traceFile, error) {
	var f io.ReadCloser = io.NopCloser(bytes.NewReader(data))
	size := int64(len(data))
	if data == nil {
		file, st, err := openRegular(path)
		if err != nil {
			return nil, err
		}
		f, size = file, st.Size()
	}
	defer f.Close()
	in := &checkedReader{f: f, path: path, chunk: chunkFor(size)}
	t, outOfOrder, err := scanTrace(path, in, size)
	if err != nil || outOfOrder == 0 {
		return t, err
	}
	if t.size > maxDataBytes {
		return nil, fmt.Errorf("%s:%d: an instant before the one above it: a trace of more than %d MiB is read as the run goes, so its instants must be in ascending order (sort the file by its first column)",
			path, outOfOrder, maxDataBytes>>20)
	}
	if data != nil {
		t.sorted, err = parseColumn(path, data, false)
	} else {
		t.sorted, err = t.all()
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(t.sorted)
	return t, nil
}

// scanTrace reads a trace file through in, taking its checksums, and
// returns what it found and the first line whose instant is before the
// one above it (0: none). It stops at that line if the file, of size
// bytes, is over maxDataBytes: an error then.
func scanTrace(path string, in *checkedReader, size int64) (*traceFile, int, error) {
	t := &traceFile{path: path, chunk: in.chunk}
	in.taking = t
	col := newColumnReader(path, in, false)
	var prev time.Duration
	outOfOrder := 0
	for {
		v, ok := col.next()
		if !ok {
			break
		}
		if t.count == 0 || v < t.least {
			t.least = v
		}
		if t.count > 0 && v < prev && outOfOrder == 0 {
			outOfOrder = col.line
			if size > maxDataBytes {
				t.size = size
				return t, outOfOrder, nil
			}
		}
		prev = v
		t.count++
	}
	if err := col.end(); err != nil {
		return nil, 0, err
	}
	t.size = in.off
	return t, outOfOrder, nil
}

// all reads every instant of the file, as first read.
func (t *traceFile) all() ([]time.Duration, error) {
	out := make([]time.Duration, 0, t.count)
	s, err := t.open()
	if err != nil {
		return nil, err
	}
	for {
		v, ok := s.col.next()
		if !ok {
			break
		}
		out = append(out, v)
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return out, nil
}

// Open starts a run's reading of the trace (arrivals.TraceSource).
func (t *traceFile) Open() (arrivals.TraceReader, error) { return t.open() }

func (t *traceFile) open() (*traceStream, error) {
	in, err := t.openChecked()
	if err != nil {
		return nil, err
	}
	return &traceStream{in: in, col: newColumnReader(t.path, in, false)}, nil
}

// openChecked opens the file to read it as first read: its reads fail
// once they reach bytes that differ.
func (t *traceFile) openChecked() (*checkedReader, error) {
	f, st, err := openRegular(t.path)
	if err != nil {
		return nil, err
	}
	if st.Size() != t.size {
		f.Close()
		return nil, t.changed(fmt.Sprintf("%d bytes, now %d", t.size, st.Size()))
	}
	return &checkedReader{f: f, path: t.path, chunk: t.chunk, want: t}, nil
}

// check returns an error if data is not the text of the file as first
// read.
func (t *traceFile) check(data []byte) error {
	if int64(len(data)) != t.size {
		return t.changed(fmt.Sprintf("%d bytes, now %d", t.size, len(data)))
	}
	in := &checkedReader{f: io.NopCloser(bytes.NewReader(data)), path: t.path, chunk: t.chunk, want: t}
	_, err := io.Copy(io.Discard, in)
	return err
}

// changed is the error of a reading that finds the file changed.
func (t *traceFile) changed(how string) error {
	return fmt.Errorf("%s: the file changed after it was first read (%s): every run of the scenario replays the trace as it was loaded; load the scenario again", t.path, how)
}

// traceStream is one run's reading of a trace file in ascending order
// (arrivals.TraceReader).
type traceStream struct {
	in   *checkedReader
	col  *columnReader
	prev time.Duration
	err  error
}

// Next returns the next instant of the file.
func (s *traceStream) Next() (time.Duration, bool) {
	if s.err != nil {
		return 0, false
	}
	v, ok := s.col.next()
	switch {
	case !ok:
		s.fail(s.col.err)
		return 0, false
	case v < s.prev: // only a file changed since it was read
		s.fail(fmt.Errorf("%s:%d: an instant before the one above it (%v, after %v)", s.col.path, s.col.line, v, s.prev))
		return 0, false
	}
	s.prev = v
	return v, true
}

// fail ends the reading with err, or with the file's change when the
// reader found one: a line cut by the change may read as bad or out of
// order before the change shows.
func (s *traceStream) fail(err error) {
	if s.in.err != nil {
		err = s.in.err
	}
	s.err = err
}

// Close checks the rest of the chunk read last, closes the file and
// returns the first error reading it: the file's change first, since a
// line it cut may have read as bad or out of order before the change
// showed.
func (s *traceStream) Close() error {
	if err := s.in.Close(); err != nil {
		return err
	}
	return s.err
}

// checkedReader reads a trace file chunk by chunk: the first reading
// (taking set) takes each chunk's checksum; the later ones (want set)
// check each against it, and fail once one differs.
type checkedReader struct {
	f      io.ReadCloser
	path   string
	chunk  int64
	taking *traceFile // the first reading: sums go here
	want   *traceFile // a later one: sums are checked against these
	off    int64
	sum    uint32 // the running checksum of the current chunk
	eof    bool
	err    error
}

// Read reads at most to the end of the current chunk, so that each
// chunk's checksum is complete when its last byte is read.
func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.eof {
		return 0, io.EOF
	}
	if rest := c.chunk - c.off%c.chunk; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.f.Read(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	c.off += int64(n)
	if n > 0 && c.off%c.chunk == 0 {
		c.endChunk()
	}
	if errors.Is(err, io.EOF) {
		c.eof = true
		if c.off%c.chunk != 0 { // the last chunk, shorter
			c.endChunk()
		}
		if c.want != nil && c.err == nil && c.off != c.want.size {
			c.err = c.want.changed(fmt.Sprintf("%d bytes, now %d", c.want.size, c.off))
		}
	}
	if c.err != nil {
		return n, c.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: %w", c.path, err)
	}
	return n, err
}

// endChunk takes or checks the checksum of the chunk read last.
func (c *checkedReader) endChunk() {
	k := (c.off - 1) / c.chunk
	switch {
	case c.taking != nil:
		c.taking.sums = append(c.taking.sums, c.sum)
	case k >= int64(len(c.want.sums)):
		c.err = c.want.changed(fmt.Sprintf("longer than %d bytes", c.want.size))
	case c.want.sums[k] != c.sum:
		c.err = c.want.changed(fmt.Sprintf("bytes %d to %d differ", k*c.chunk, c.off))
	}
	c.sum = 0
}

// Close reads on to the end of the current chunk, so that every byte read
// is checked, closes the file and returns the first error.
func (c *checkedReader) Close() error {
	if c.want != nil && c.err == nil && !c.eof && c.off%c.chunk != 0 {
		_, err := io.Copy(io.Discard, io.LimitReader(c, c.chunk-c.off%c.chunk))
		if c.err == nil && err != nil {
			c.err = err
		}
	}
	if err := c.f.Close(); c.err == nil && err != nil {
		c.err = fmt.Errorf("%s: %w", c.path, err)
	}
	return c.err
}

// trace returns the trace file at path as first read (see readTrace).
// l must not be nil (parseWith makes one).
func (l *Loader) trace(path string) (*traceFile, error) {
	l.mu.Lock()
	e := l.traces[path]
	if e == nil {
		e = new(loadOnce[*traceFile])
		l.traces[path] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.v, e.err = readTrace(path, l.loadedText(path)) })
	return e.v, e.err
}

// loadedTrace returns the trace file at path if a load through l read it.
func (l *Loader) loadedTrace(path string) *traceFile {
	l.mu.Lock()
	e := l.traces[path]
	l.mu.Unlock()
	if e == nil {
		return nil
	}
	e.once.Do(func() {}) // waits for a reading under way
	return e.v
}
