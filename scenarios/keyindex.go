package scenarios

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// keyIndex maps each key path of a TOML document to the line it is defined
// on. Paths name array elements by index: "client.limiter[1].rate",
// "workload.hosts[0].name". BurntSushi/toml reports no position for keys it
// decoded, so the loader keeps this index to put a line on every message.
type keyIndex map[string]int

// indexKeys scans a TOML document (the caller has parsed it, so it is
// syntactically valid) and records the line of every key, table header and
// array element. Every step moves forward, so it ends on any input.
func indexKeys(src string) keyIndex {
	idx, _ := scanKeys(src)
	return idx
}

// scanKeys is indexKeys that also returns the steps the scan took: its
// checks for the end of the input, which every loop of the scanner makes on
// each turn. A scan takes at most stepBudget(len(src)); one that reaches it
// stops there (later keys get no line) rather than run on.
func scanKeys(src string) (keyIndex, int) {
	s := &scanner{src: src, line: 1, idx: keyIndex{}, arrays: map[string]int{}, budget: stepBudget(len(src))}
	s.document()
	return s.idx, s.steps
}

// stepBudget bounds the steps of a scan of n bytes. A scan looks at each
// byte a few times; the bound leaves room to spare.
func stepBudget(n int) int { return 16*n + 64 }

type scanner struct {
	src    string
	pos    int
	line   int
	idx    keyIndex
	arrays map[string]int // [[array]] elements seen, by resolved path
	// steps counts calls of eof; past budget, the scan ends.
	steps, budget int
	// depth counts the arrays and inline tables the scan is in.
	depth int
}

// maxIndexDepth is how deeply nested in arrays and inline tables a key or
// element is indexed: deeper than any scenario key, and a bound on the
// paths built, which grow with the depth (a 200 KB file of 40,000 nested
// brackets would otherwise build gigabytes of them).
const maxIndexDepth = 16

func (s *scanner) eof() bool {
	if s.steps++; s.steps >= s.budget {
		s.pos = len(s.src)
	}
	return s.pos >= len(s.src)
}

func (s *scanner) peek() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func (s *scanner) next() byte {
	c := s.peek()
	if s.pos < len(s.src) {
		s.pos++
		if c == '\n' {
			s.line++
		}
	}
	return c
}

func (s *scanner) has(prefix string) bool { return strings.HasPrefix(s.src[s.pos:], prefix) }

// skip passes spaces, and with newlines also line breaks and comments.
func (s *scanner) skip(newlines bool) {
	for !s.eof() {
		switch c := s.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			s.next()
		case c == '#':
			for !s.eof() && s.peek() != '\n' {
				s.next()
			}
		case c == '\n' && newlines:
			s.next()
		default:
			return
		}
	}
}

func (s *scanner) restOfLine() {
	for !s.eof() && s.peek() != '\n' {
		s.next()
	}
}

func (s *scanner) document() {
	table := ""
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		start := s.pos
		if s.peek() == '[' {
			table = s.header()
		} else {
			s.keyValue(table)
		}
		if s.pos == start { // never stall on unexpected input
			s.next()
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the resolved table path.
func (s *scanner) header() string {
	line := s.line
	s.next()
	array := s.peek() == '['
	if array {
		s.next()
	}
	parts := s.keyParts()
	s.restOfLine()
	resolved := ""
	for i, p := range parts {
		cand := joinKey(resolved, []string{p})
		last := i == len(parts)-1
		switch n, isArray := s.arrays[cand]; {
		case last && array:
			s.set(cand, line)
			s.arrays[cand] = n + 1
			cand += "[" + strconv.Itoa(n) + "]"
		case isArray:
			cand += "[" + strconv.Itoa(n-1) + "]" // the current element
		}
		resolved = cand
		s.set(resolved, line)
	}
	return resolved
}

func (s *scanner) set(path string, line int) {
	if s.depth > maxIndexDepth {
		return
	}
	if _, ok := s.idx[path]; !ok {
		s.idx[path] = line
	}
}

// keyParts reads a dotted key of bare or quoted parts.
func (s *scanner) keyParts() []string {
	var parts []string
	for {
		s.skip(false)
		switch c := s.peek(); c {
		case '"', '\'':
			start := s.pos
			s.next()
			for !s.eof() && s.peek() != c && s.peek() != '\n' {
				if s.next() == '\\' && c == '"' {
					s.next()
				}
			}
			s.next()
			raw := s.src[start:s.pos]
			if c == '"' {
				if u, ok := unquoteBasic(raw); ok {
					parts = append(parts, u)
					break
				}
			}
			parts = append(parts, strings.Trim(raw, string(c)))
		default:
			start := s.pos
			for !s.eof() {
				c := s.peek()
				if c == '.' || c == '=' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' {
					break
				}
				s.next()
			}
			parts = append(parts, s.src[start:s.pos])
		}
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
	path := table
	for _, p := range s.keyParts() {
		path = joinKey(path, []string{p})
		s.set(path, line)
	}
	s.skip(false)
	if s.peek() != '=' {
		s.restOfLine()
		return
	}
	s.next()
	s.skip(false)
	s.value(path)
}

// value reads one value, indexing the keys of inline tables and the elements
// of arrays under path.
func (s *scanner) value(path string) {
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxIndexDepth {
		path = "" // nothing here is indexed: keep the paths short
	}
	switch c := s.peek(); c {
	case '{':
		s.next()
		for !s.eof() {
			s.skip(true)
			start := s.pos
			switch s.peek() {
			case '}':
				s.next()
				return
			case ',':
				s.next()
			default:
				s.keyValue(path)
			}
			if s.pos == start {
				s.next()
			}
		}
	case '[':
		s.next()
		for i := 0; !s.eof(); {
			s.skip(true)
			start := s.pos
			switch s.peek() {
			case ']':
				s.next()
				return
			case ',':
				s.next()
			default:
				el := path + "[" + strconv.Itoa(i) + "]"
				s.set(el, s.line)
				s.value(el)
				i++
			}
			if s.pos == start {
				s.next()
			}
		}
	case '"', '\'':
		s.str(c)
	default:
		for !s.eof() {
			c := s.peek()
			if c == ',' || c == ']' || c == '}' || c == '\n' || c == '#' {
				return
			}
			s.next()
		}
	}
}

// str passes a string of any of TOML's four kinds.
func (s *scanner) str(q byte) {
	triple := string([]byte{q, q, q})
	if s.has(triple) {
		s.next()
		s.next()
		s.next()
		for !s.eof() {
			if q == '"' && s.peek() == '\\' {
				s.next()
				s.next()
				continue
			}
			if s.has(triple) {
				s.next()
				s.next()
				s.next()
				for s.peek() == q { // up to two quotes may end the content
					s.next()
				}
				return
			}
			s.next()
		}
		return
	}
	s.next()
	for !s.eof() && s.peek() != q && s.peek() != '\n' {
		if s.next() == '\\' && q == '"' {
			s.next()
		}
	}
	if s.peek() == q {
		s.next()
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

// unquoteBasic decodes a TOML basic string, quotes included, as the TOML
// library does: \b \t \n \f \r \" \\ and \e (escape), \xHH for the
// code point U+00HH, \uXXXX and \UXXXXXXXX. Go's own escapes differ (no
// \e; \xHH is a byte), so a key written with them would not be found.
// ok is false for anything else: the library rejects it.
func unquoteBasic(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !strings.Contains(body, `\`) {
		return body, !strings.Contains(body, `"`)
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '"' {
			return "", false
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i++; i == len(body) {
			return "", false
		}
		hex := 0
		switch body[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case '"', '\\':
			b.WriteByte(body[i])
		case 'x':
			hex = 2
		case 'u':
			hex = 4
		case 'U':
			hex = 8
		default:
			return "", false
		}
		if hex == 0 {
			continue
		}
		if i+hex >= len(body) {
			return "", false
		}
		r, err := strconv.ParseUint(body[i+1:i+1+hex], 16, 32)
		if err != nil || !utf8.ValidRune(rune(r)) {
			return "", false
		}
		b.WriteRune(rune(r))
		i += hex
	}
	return b.String(), true
}
