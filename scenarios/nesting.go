package scenarios

import "strings"

// maxNesting bounds how deeply arrays and inline tables nest in scenario
// text: far beyond any scenario's (a list of tables of lists is three
// deep), and far below what the TOML parser's recursion can take. A few
// megabytes of brackets would otherwise overflow its stack, which no
// program survives.
const maxNesting = 64

// tooDeep returns the line on which the arrays and inline tables of TOML
// text first nest deeper than maxNesting, or 0 when they never do. It
// passes over strings (their escapes, and the line breaks of multi-line
// ones) and comments; table headers open and close on their line.
func tooDeep(src string) int {
	depth, line := 0, 1
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '\n':
			line++
		case '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			var breaks int
			i, breaks = endOfString(src, i)
			line += breaks
		case '[', '{':
			if depth++; depth > maxNesting {
				return line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return 0
}

// endOfString returns the index of the last byte of the string opening at
// src[i] (one of TOML's four kinds), or of the line break ending an
// unterminated single-line one, and the line breaks inside it.
func endOfString(src string, i int) (end, breaks int) {
	q := src[i]
	delim := string(q)
	if strings.HasPrefix(src[i:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	for i += len(delim); i < len(src); i++ {
		switch {
		case q == '"' && src[i] == '\\':
			i++ // the escaped byte, whatever it is
			if i < len(src) && src[i] == '\n' {
				breaks++
			}
		case src[i] == '\n':
			if len(delim) == 1 {
				return i - 1, breaks // the line break is the caller's
			}
			breaks++
		case strings.HasPrefix(src[i:], delim):
			if len(delim) == 3 {
				// One or two quotes may end the content just before the
				// closing three: a multi-line string written as the three
				// quotes, x, then four quotes holds x and a quote. The
				// whole run of quotes is taken: the TOML library reads
				// more than five after an escape, and where it reads
				// fewer, what it leaves is an empty string (passed over
				// alike) or an opening quote (hiding more from it, not
				// from this count).
				run := 3
				for i+run < len(src) && src[i+run] == q {
					run++
				}
				return i + run - 1, breaks
			}
			return i, breaks
		}
	}
	return len(src), breaks
}
