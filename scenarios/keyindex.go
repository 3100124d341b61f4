package scenarios

import (
	"strconv"
	"strings"
)

// keyIndex maps each key path of a TOML document to the line it is defined
// on. Paths name array elements by index: "client.limiter[1].rate",
// "workload.hosts[0].name". BurntSushi/toml reports no position for keys it
// decoded, so the loader keeps this index to put a line on every message.
type keyIndex map[string]int

// indexKeys scans a syntactically valid TOML document (the caller parses it
// first) and records the line of every key, table header and array element.
func indexKeys(src string) keyIndex {
	s := &scanner{src: src, line: 1, idx: keyIndex{}, arrays: map[string]int{}}
	s.document()
	return s.idx
}

type scanner struct {
	src    string
	pos    int
	line   int
	idx    keyIndex
	arrays map[string]int // count of [[array]] elements seen per path
}

func (s *scanner) peek() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func (s *scanner) next() byte {
	c := s.peek()
	s.pos++
	if c == '\n' {
		s.line++
	}
	return c
}

// skip passes spaces, and with newlines also line breaks and comments.
func (s *scanner) skip(newlines bool) {
	for s.pos < len(s.src) {
		switch c := s.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			s.next()
		case c == '#':
			for s.pos < len(s.src) && s.peek() != '\n' {
				s.next()
			}
		case c == '\n' && newlines:
			s.next()
		default:
			return
		}
	}
}

func (s *scanner) document() {
	table := ""
	for {
		s.skip(true)
		if s.pos >= len(s.src) {
			return
		}
		if s.peek() == '[' {
			s.next()
			array := s.peek() == '['
			if array {
				s.next()
			}
			line := s.line
			path := joinKey("", s.keyParts())
			for s.pos < len(s.src) && s.peek() != '\n' {
				s.next()
			}
			if array {
				n := s.arrays[path]
				s.arrays[path] = n + 1
				s.set(path, line)
				path += "[" + strconv.Itoa(n) + "]"
			}
			table = s.resolve(path)
			s.set(table, line)
			continue
		}
		s.keyValue(table)
	}
}

// resolve rewrites a header path so that parents that are arrays of tables
// point at their current (last) element.
func (s *scanner) resolve(path string) string {
	parts := strings.Split(path, ".")
	out := ""
	for _, p := range parts {
		out = joinKey(out, []string{p})
		if n, ok := s.arrays[out]; ok && out != path {
			out += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return out
}

func (s *scanner) set(path string, line int) {
	if _, ok := s.idx[path]; !ok {
		s.idx[path] = line
	}
}

// keyParts reads a dotted key (bare or quoted parts).
func (s *scanner) keyParts() []string {
	var parts []string
	for {
		s.skip(false)
		var b strings.Builder
		switch s.peek() {
		case '"', '\'':
			q := s.next()
			for s.pos < len(s.src) && s.peek() != q {
				c := s.next()
				if c == '\\' && q == '"' {
					c = s.next()
				}
				b.WriteByte(c)
			}
			s.next()
		default:
			for s.pos < len(s.src) {
				c := s.peek()
				if c == '.' || c == '=' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' {
					break
				}
				b.WriteByte(s.next())
			}
		}
		parts = append(parts, b.String())
		s.skip(false)
		if s.peek() != '.' {
			return parts
		}
		s.next()
	}
}

// keyValue reads `key = value` inside table and indexes it.
func (s *scanner) keyValue(table string) {
	line := s.line
	parts := s.keyParts()
	path := table
	for _, p := range parts {
		path = joinKey(path, []string{p})
		s.set(path, line)
	}
	s.skip(false)
	if s.peek() == '=' {
		s.next()
	}
	s.skip(false)
	s.value(path)
}

// value reads one value, indexing the keys of inline tables and the elements
// of arrays under path.
func (s *scanner) value(path string) {
	switch c := s.peek(); c {
	case '{':
		s.next()
		for {
			s.skip(true)
			switch s.peek() {
			case '}':
				s.next()
				return
			case ',':
				s.next()
				continue
			case 0:
				return
			}
			s.keyValue(path)
		}
	case '[':
		s.next()
		for i := 0; ; {
			s.skip(true)
			switch s.peek() {
			case ']':
				s.next()
				return
			case ',':
				s.next()
				continue
			case 0:
				return
			}
			el := path + "[" + strconv.Itoa(i) + "]"
			s.set(el, s.line)
			s.value(el)
			i++
		}
	case '"', '\'':
		if strings.HasPrefix(s.src[s.pos:], string([]byte{c, c, c})) {
			s.pos += 3
			end := strings.Index(s.src[s.pos:], string([]byte{c, c, c}))
			if end < 0 {
				end = len(s.src) - s.pos
			}
			for range end + 3 {
				s.next()
			}
			for s.peek() == c { // up to two quotes may close a multi-line string
				s.next()
			}
			return
		}
		s.next()
		for s.pos < len(s.src) && s.peek() != c && s.peek() != '\n' {
			if s.next() == '\\' && c == '"' {
				s.next()
			}
		}
		s.next()
	default:
		for s.pos < len(s.src) {
			c := s.peek()
			if c == ',' || c == ']' || c == '}' || c == '\n' || c == '#' {
				return
			}
			s.next()
		}
	}
}

func joinKey(base string, parts []string) string {
	for _, p := range parts {
		if base != "" {
			base += "."
		}
		base += p
	}
	return base
}

// lineOf returns the line of path, or of its nearest indexed ancestor.
func (k keyIndex) lineOf(path string) int {
	for path != "" {
		if l, ok := k[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}
