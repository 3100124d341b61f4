package logs

import (
	"bytes"
	"fmt"
)

// newParser picks the parser for a log from its options and its first
// line; header reports that the line is a header, not a record.
func newParser(opt Options, first []byte) (p lineParser, header bool, err error) {
	f := opt.Format
	if f == FormatAuto {
		f = guess(first)
	}
	m := resolve(opt.Mapping, f, opt.Match)
	switch f {
	case FormatCLF:
		if err := checkCLF(m.Mapping); err != nil {
			return nil, false, err
		}
		return &clfParser{m: m}, false, nil
	case FormatJSON:
		return &jsonParser{m: m, fields: jsonFields{}}, false, nil
	case FormatCSV:
		csv, err := newCSV(m, first)
		if err != nil {
			return nil, false, err
		}
		return csv, true, nil
	}
	return nil, false, fmt.Errorf("%w: format %v", ErrOptions, f)
}

// guess reads a first line's format: a JSON object, a CLF line, or else a
// CSV header.
func guess(first []byte) Format {
	switch {
	case looksJSON(first):
		return FormatJSON
	case bytes.Contains(first, []byte(" [")) && bytes.Contains(first, []byte(`] "`)):
		return FormatCLF
	}
	return FormatCSV
}
