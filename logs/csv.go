package logs

import (
	"bytes"
	"errors"
	"fmt"
)

// csvParser reads CSV lines by the columns its header names.
type csvParser struct {
	m       resolved
	columns map[string]int
	row     csvRow
}

// csvRow is one line's fields, and the columns by name.
type csvRow struct {
	columns map[string]int
	fields  [][]byte
	buf     []byte // unquoted fields' text
}

func (r *csvRow) get(name string) ([]byte, bool) {
	i, ok := r.columns[name]
	if !ok || i >= len(r.fields) {
		return nil, false
	}
	return r.fields[i], true
}

// newCSV reads the header line.
func newCSV(m resolved, header []byte) (*csvParser, error) {
	var row csvRow
	if err := row.split(header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	p := &csvParser{m: m, columns: map[string]int{}}
	for i, f := range row.fields {
		p.columns[string(bytes.TrimSpace(f))] = i
	}
	p.row.columns = p.columns
	for _, name := range []string{m.Time, m.Host, m.Tenant, m.Cost, m.Remaining, m.Reset, m.Method, m.Path} {
		if _, ok := p.columns[name]; name != "" && !ok {
			return nil, fmt.Errorf("%w: the CSV header has no column %q (it has %s)", ErrOptions, name, header)
		}
	}
	for _, c := range []struct {
		name     string
		optional bool
	}{{m.Status, m.statusOptional}, {m.Latency, m.latencyOptional}} {
		if _, ok := p.columns[c.name]; !ok && !c.optional {
			return nil, fmt.Errorf("%w: the CSV header has no column %q (it has %s)", ErrOptions, c.name, header)
		}
	}
	return p, nil
}

func (p *csvParser) parse(line []byte, rec *Record) error {
	if err := p.row.split(line); err != nil {
		return err
	}
	if len(p.row.fields) != len(p.columns) {
		return fmt.Errorf("%d fields where the header has %d", len(p.row.fields), len(p.columns))
	}
	return p.m.fill(&p.row, rec)
}

var errQuote = errors.New(`a quoted field is not closed, or text follows its closing quote`)

// split splits a line at commas outside quotes; "" in a quoted field is a
// quote.
func (r *csvRow) split(line []byte) error {
	r.fields, r.buf = r.fields[:0], r.buf[:0]
	if cap(r.buf) < len(line) {
		r.buf = make([]byte, 0, len(line))
	}
	for {
		start := len(r.buf)
		if len(line) > 0 && line[0] == '"' {
			i := 1
			for ; ; i++ {
				if i >= len(line) {
					return errQuote
				}
				if line[i] == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						r.buf = append(r.buf, '"')
						i++
						continue
					}
					break
				}
				r.buf = append(r.buf, line[i])
			}
			line = line[i+1:]
			if len(line) > 0 && line[0] != ',' {
				return errQuote
			}
		} else {
			end := bytes.IndexByte(line, ',')
			if end < 0 {
				end = len(line)
			}
			r.buf = append(r.buf, line[:end]...)
			line = line[end:]
		}
		r.fields = append(r.fields, r.buf[start:len(r.buf):len(r.buf)])
		if len(line) == 0 {
			return nil
		}
		line = line[1:] // the comma
	}
}
