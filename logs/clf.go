package logs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// clfFields names the fields of a common or combined log line, as nginx
// names its variables.
var clfFields = []string{"remote_addr", "remote_user", "time_local", "request", "method", "path", "status", "body_bytes_sent", "http_referer", "http_user_agent", "request_time"}

// clfLine is one parsed line: each field's text, by clfFields' order.
type clfLine [11][]byte

func (l *clfLine) get(name string) ([]byte, bool) {
	for i, n := range clfFields {
		if n == name {
			return l[i], l[i] != nil
		}
	}
	return nil, false
}

// clfParser reads common and combined log format lines.
type clfParser struct {
	m    resolved
	line clfLine
}

// checkCLF checks that a mapping names only fields a CLF line has.
func checkCLF(m Mapping) error {
	for _, name := range []string{m.Time, m.Host, m.Status, m.Latency, m.Tenant, m.Cost, m.Remaining, m.Reset, m.Method, m.Path} {
		if name == "" {
			continue
		}
		if !known(name) {
			return fmt.Errorf("%w: field %q is not one of a common or combined log line's: %v", ErrOptions, name, clfFields)
		}
	}
	return nil
}

func known(name string) bool {
	for _, n := range clfFields {
		if n == name {
			return true
		}
	}
	return false
}

func (p *clfParser) parse(line []byte, rec *Record) error {
	if err := splitCLF(line, &p.line); err != nil {
		return err
	}
	return p.m.fill(&p.line, rec)
}

var errCLF = errors.New(`not a common or combined log line (addr ident user [time] "request" status bytes)`)

// splitCLF splits a line into its fields: three words, [time], "request",
// status, bytes, then optionally "referer" "agent", then optionally the
// request time as the last unquoted word.
func splitCLF(line []byte, out *clfLine) error {
	*out = clfLine{}
	rest := line
	var words [3][]byte
	for i := range words {
		var ok bool
		if words[i], rest, ok = bytes.Cut(rest, []byte(" ")); !ok {
			return errCLF
		}
	}
	out[0], out[1] = words[0], words[2]
	if len(rest) == 0 || rest[0] != '[' {
		return errCLF
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return errCLF
	}
	out[2], rest = rest[1:end], bytes.TrimLeft(rest[end+1:], " ")
	var ok bool
	if out[3], rest, ok = quoted(rest); !ok {
		return errCLF
	}
	method, target, found := bytes.Cut(out[3], []byte(" ")) // "GET /a?b HTTP/1.1"; "-" for none
	out[4] = method
	if found {
		out[5], _, _ = bytes.Cut(target, []byte(" "))
	}
	for i := 6; i <= 7; i++ {
		if out[i], rest = word(rest); len(out[i]) == 0 {
			return errCLF
		}
	}
	if len(rest) > 0 && rest[0] == '"' {
		if out[8], rest, ok = quoted(rest); !ok {
			return errCLF
		}
		if out[9], rest, ok = quoted(rest); !ok {
			return errCLF
		}
	}
	if tail := bytes.TrimRight(rest, " \t"); len(tail) > 0 {
		last := bytes.Trim(tail[bytes.LastIndexAny(tail, " \t")+1:], `"`)
		if _, err := strconv.ParseFloat(string(last), 64); err == nil {
			out[10] = last
		}
	}
	return nil
}

// word reads a word at the start of b (after spaces) and returns it and
// what follows, without leading spaces.
func word(b []byte) (w, rest []byte) {
	b = bytes.TrimLeft(b, " ")
	end := bytes.IndexByte(b, ' ')
	if end < 0 {
		return b, nil
	}
	return b[:end], bytes.TrimLeft(b[end:], " ")
}

// quoted reads a "…" field (with \" escapes) at the start of b and
// returns it and what follows, without leading spaces.
func quoted(b []byte) (field, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return b[1:i], bytes.TrimLeft(b[i+1:], " "), true
		}
	}
	return nil, nil, false
}
