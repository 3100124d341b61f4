package logs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Reader reads a log's records one at a time, in time order, in a fixed
// amount of memory (see the package doc). It is not safe for concurrent
// use.
type Reader struct {
	name    string
	in      *bufio.Reader
	opt     Options
	parse   lineParser // nil until the first line picks the format
	line    int64
	eof     bool
	held    recordHeap
	latest  int64 // the latest time read so far
	emitted int64 // the time of the last record returned
	started bool  // a record has been returned
	records int64
	// unstatused counts the records returned without a status.
	unstatused int64
	bad        int64
	named      []BadLine
	scratch    Record // the record being parsed: kept here, as passing a local through the parser interface would allocate it
}

// byteOrderMark is UTF-8's, which may open a file.
var byteOrderMark = []byte("\uFEFF")

// lineParser reads one line into a record, or says why it cannot.
type lineParser interface {
	parse(line []byte, rec *Record) error
}

// CheckLatencyUnit checks a Mapping's LatencyUnit: s, ms, or "" (s).
func CheckLatencyUnit(u string) error {
	switch u {
	case "", "s", "ms":
		return nil
	}
	return fmt.Errorf("%w: latency unit %q: want s or ms", ErrOptions, u)
}

// NewReader returns a reader of the log in, named name in bad lines.
func NewReader(in io.Reader, name string, opt Options) (*Reader, error) {
	if opt.Reorder == 0 {
		opt.Reorder = DefaultReorder
	}
	opt.Reorder = max(opt.Reorder, 0)
	if opt.MaxHeld == 0 {
		opt.MaxHeld = DefaultMaxHeld
	}
	if opt.MaxHeld < 0 {
		return nil, fmt.Errorf("%w: max held %d must be positive", ErrOptions, opt.MaxHeld)
	}
	if err := CheckTimeFormat(opt.Mapping.TimeFormat); err != nil {
		return nil, err
	}
	if err := CheckLatencyUnit(opt.Mapping.LatencyUnit); err != nil {
		return nil, err
	}
	return &Reader{name: name, in: bufio.NewReaderSize(in, MaxLine), opt: opt}, nil
}

// Next fills rec with the next record in time order and reports whether
// there was one. Its error is a read error, or ErrNoRecords at the end of
// a log that had no usable line.
func (r *Reader) Next(rec *Record) (bool, error) {
	for {
		if len(r.held) > 0 && (r.eof || r.held[0].Time <= r.latest-int64(r.opt.Reorder) || len(r.held) > r.opt.MaxHeld) {
			*rec = r.held.pop()
			r.emitted, r.started = rec.Time, true
			r.records++
			if rec.Status == 0 {
				r.unstatused++
			}
			return true, nil
		}
		if r.eof {
			if r.records == 0 {
				return false, r.noRecords()
			}
			return false, nil
		}
		if err := r.readOne(); err != nil {
			return false, err
		}
	}
}

// noRecords is ErrNoRecords, with what the log held instead.
func (r *Reader) noRecords() error {
	if r.bad == 0 {
		return fmt.Errorf("%s: %w (%s, none a record)", r.name, ErrNoRecords, counted(r.line, "line"))
	}
	if r.bad == 1 {
		return fmt.Errorf("%s: %w: 1 bad line, %s", r.name, ErrNoRecords, r.named[0])
	}
	return fmt.Errorf("%s: %w: %d bad lines, first %s", r.name, ErrNoRecords, r.bad, r.named[0])
}

// counted is n things: "1 line", "2 lines".
func counted(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// readOne reads one line and holds its record, or counts it bad.
func (r *Reader) readOne() error {
	line, err := r.readLine()
	if err != nil {
		return err
	}
	if line == nil {
		return nil
	}
	if r.line == 1 { // a byte-order mark, as Excel writes one, is not the first line's text
		line = bytes.TrimPrefix(line, byteOrderMark)
	}
	text := bytes.TrimSpace(line)
	if len(text) == 0 || text[0] == '#' {
		return nil
	}
	if r.parse == nil {
		p, header, perr := newParser(r.opt, text)
		if perr != nil {
			return fmt.Errorf("%s:%d: %w", r.name, r.line, perr)
		}
		r.parse = p
		if header {
			return nil
		}
	}
	rec := &r.scratch
	*rec = Record{Line: r.line, Remaining: -1, Reset: -1, Cost: 1}
	if perr := r.parse.parse(text, rec); perr != nil {
		r.countBad(perr.Error())
		return nil
	}
	if r.started && rec.Time < r.emitted {
		r.countBad(r.late(rec.Time))
		return nil
	}
	r.latest = max(r.latest, rec.Time)
	r.held.push(*rec)
	return nil
}

// late says why a record at t, earlier than one already returned, is a
// bad line: it is further behind the latest record read than the
// reorder window, or within it, but after a record the hold cap
// released early (more records came in the window than are held).
func (r *Reader) late(t int64) string {
	behind := time.Duration(r.latest - t)
	if behind > r.opt.Reorder {
		return fmt.Sprintf("out of order: %v before the latest record read, more than the reorder window (%v) allows", behind, r.opt.Reorder)
	}
	return fmt.Sprintf("out of order: %v before the latest record read, within the reorder window (%v), but behind a later record released early: "+
		"at most %d records are held to reorder, and more came in the window; sort the log by time to keep every line", behind, r.opt.Reorder, r.opt.MaxHeld)
}

// readLine returns the next line (nil for one too long, counted bad), and
// sets r.eof at the end.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.in.ReadSlice('\n')
	r.line++
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, bufio.ErrBufferFull):
		for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of the line
			_, err = r.in.ReadSlice('\n')
		}
		r.countBad(fmt.Sprintf("longer than %d bytes", MaxLine))
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", r.name, r.line, err)
		}
		return nil, nil
	case errors.Is(err, io.EOF):
		r.eof = true
		if len(line) == 0 {
			r.line--
			return nil, nil
		}
		return line, nil
	}
	return nil, fmt.Errorf("%s:%d: %w", r.name, r.line, err)
}

// countBad counts the current line bad, naming it if it is among the
// first.
func (r *Reader) countBad(why string) {
	r.bad++
	if len(r.named) < MaxBadNamed {
		r.named = append(r.named, BadLine{File: r.name, Line: r.line, Reason: why})
	}
}

// Lines returns the lines read so far.
func (r *Reader) Lines() int64 { return r.line }

// Records returns the records returned so far.
func (r *Reader) Records() int64 { return r.records }

// WithoutStatus returns the records returned so far that logged no
// status: all of them when the status field is missing from the log,
// which leaves production's refusals unknown.
func (r *Reader) WithoutStatus() int64 { return r.unstatused }

// Bad returns the count of bad lines so far and the first MaxBadNamed.
func (r *Reader) Bad() (int64, []BadLine) { return r.bad, r.named }

// Format returns the log's format (FormatAuto until its first line is read).
func (r *Reader) Format() Format {
	switch r.parse.(type) {
	case *clfParser:
		return FormatCLF
	case *jsonParser:
		return FormatJSON
	case *csvParser:
		return FormatCSV
	}
	return FormatAuto
}

// recordHeap is a min-heap of held records by time, then line (a typed
// one: container/heap would box each record).
type recordHeap []Record

func (h recordHeap) less(i, j int) bool {
	if h[i].Time != h[j].Time {
		return h[i].Time < h[j].Time
	}
	return h[i].Line < h[j].Line
}

func (h *recordHeap) push(rec Record) {
	*h = append(*h, rec)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *recordHeap) pop() Record {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = Record{}
	s = s[:n]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < n && s.less(l, least) {
			least = l
		}
		if r < n && s.less(r, least) {
			least = r
		}
		if least == i {
			break
		}
		s[i], s[least] = s[least], s[i]
		i = least
	}
	*h = s
	return top
}
