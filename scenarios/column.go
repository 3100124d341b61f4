package scenarios

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// byteOrderMark opens the text of a file as spreadsheets write it.
var byteOrderMark = []byte("\uFEFF")

// columnReader reads the first column of a CSV data file a line at a
// time, holding one line: seconds as numbers (or, when durations, the
// one value of each line, also strings like "120ms": a line of latency
// samples with more fields is refused, not read by its first). The first
// line is a header when it holds no digit, else a value; blank lines and
// # comments are skipped; a byte-order mark is allowed.
type columnReader struct {
	path      string
	durations bool
	sc        *bufio.Scanner
	line      int   // the line last read
	values    int64 // values read
	header    string
	err       error
}

// newColumnReader reads the data file at path from r.
func newColumnReader(path string, r io.Reader, durations bool) *columnReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &columnReader{path: path, durations: durations, sc: sc}
}

// next returns the next value, or ok = false at the end of the file or on
// an error (err).
func (c *columnReader) next() (time.Duration, bool) {
	for c.err == nil && c.sc.Scan() {
		c.line++
		text := c.sc.Bytes()
		if c.line == 1 {
			text = bytes.TrimPrefix(text, byteOrderMark)
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		v, ok := c.value(text)
		if ok {
			c.values++
			return v, true
		}
	}
	if err := c.sc.Err(); err != nil && c.err == nil {
		c.err = err
		if errors.Is(err, bufio.ErrTooLong) {
			c.err = fmt.Errorf("%s:%d: %w (a line may hold at most 1 MiB)", c.path, c.line+1, err)
		}
	}
	return 0, false
}

// value reads the value of a line that is neither blank nor a comment:
// ok = false when it is the header, or on an error (err).
func (c *columnReader) value(text []byte) (time.Duration, bool) {
	first := c.values == 0 && c.header == ""
	raw := text
	if i := bytes.IndexByte(raw, ','); i >= 0 {
		if c.durations && (!first || hasDigit(text)) {
			c.err = fmt.Errorf("%s:%d: %q holds %d comma-separated fields: a samples file takes one latency a line (cut the column out first, e.g. cut -d, -f2)",
				c.path, c.line, text, bytes.Count(text, []byte{','})+1)
			return 0, false
		}
		raw = raw[:i]
	}
	raw = bytes.TrimSpace(raw)
	// Converted where it is parsed, the field is not copied to the heap:
	// a line of a long trace allocates nothing.
	f, ferr := strconv.ParseFloat(string(raw), 64)
	if ferr == nil && f >= 0 && f < 9e9 {
		return time.Duration(f * 1e9), true
	}
	field := string(raw)
	// A duration string is tried only where a number is not one (a
	// failed parse builds a helpful error: too slow for every line of
	// a trace of millions).
	var d time.Duration
	derr := ferr
	if ferr != nil && c.durations {
		d, derr = parseDuration(field)
	}
	switch {
	case ferr == nil:
		c.err = fmt.Errorf("%s:%d: the first column must be a non-negative number of seconds, not %s", c.path, c.line, field)
	case c.durations && derr == nil && d < 0:
		c.err = fmt.Errorf("%s:%d: %s: a duration must not be negative", c.path, c.line, field)
	case c.durations && derr == nil:
		return d, true
	case first && IsHeader(string(text)):
		c.header = string(text) // the first line only may be a header, and holds no digit
	case c.durations:
		c.err = fmt.Errorf("%s:%d: %q is not a latency (seconds, or a duration such as 120ms)%s", c.path, c.line, field, HeaderHint(first))
	default:
		c.err = fmt.Errorf("%s:%d: the first column is not a number of seconds: %q%s", c.path, c.line, field, HeaderHint(first))
	}
	return 0, false
}

// IsHeader reports whether the first line of a data file (a latency
// samples file, an arrival trace, what `limitsim fit` reads), text, is a
// header: it holds no digit. A first line with a digit is a value, and a
// bad one an error at line 1, never dropped.
func IsHeader(text string) bool { return !hasDigit([]byte(text)) }

// HeaderHint says, after the error of a bad first line (first), why it
// was not taken as a header (time_iso8601, say); "" for another line.
func HeaderHint(first bool) string {
	if first {
		return " (a first line is taken as a header only when it holds no digit)"
	}
	return ""
}

// hasDigit reports whether text holds a digit: a first line without one
// is a header, one with one a value (a bad one an error, not dropped).
func hasDigit(text []byte) bool {
	return bytes.ContainsAny(text, "0123456789")
}

// end returns the error that ended the reading, if any, or one for a file
// that held no value.
func (c *columnReader) end() error {
	switch {
	case c.err != nil:
		return c.err
	case c.values > 0:
		return nil
	case c.header != "":
		return fmt.Errorf("%s: no values: the first line, %q, reads as a header, and no line holds a value", c.path, c.header)
	}
	return fmt.Errorf("%s: no values", c.path)
}

// parseColumn reads the first column of data, the text of the CSV file at
// path (see columnReader), whole.
func parseColumn(path string, data []byte, durations bool) ([]time.Duration, error) {
	// Room for a value a line, but no more than a quarter of the file's
	// size in values (twice its size in bytes): blank and comment lines
	// are not told apart here, and a file of shorter lines grows it.
	out := make([]time.Duration, 0, min(bytes.Count(data, []byte{'\n'}), len(data)/4)+1)
	c := newColumnReader(path, bytes.NewReader(data), durations)
	for {
		v, ok := c.next()
		if !ok {
			break
		}
		out = append(out, v)
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	return out, nil
}
