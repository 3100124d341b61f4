package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// syntaxError turns a TOML parse error into file:line with the column, the
// line as written and a caret under the error.
func syntaxError(file string, data []byte, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return Problems{{File: file, Msg: escaped(err.Error())}}
	}
	// Place the error by its byte offset: the parser's own column is one
	// line off for an error at the start of a line (a duplicate key).
	src := string(data)
	off := min(max(0, pe.Position.Start+bomLength(src)), len(src))
	// "got 'x'" spans the blanks before x: point at x.
	spanEnd := min(len(src), off+pe.Position.Len)
	for off+1 < spanEnd && (src[off] == ' ' || src[off] == '\t') {
		off++
	}
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[start:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += start
	}
	line := strings.Count(src[:start], "\n") + 1
	text := strings.TrimSuffix(src[start:end], "\r")
	before := src[start:off]
	if len(before) > len(text) {
		before = text // the error is at the line break
	}
	// The caret line repeats the tabs before the caret, so it lines up
	// however wide the terminal draws a tab.
	pad := []rune(before)
	for i, r := range pad {
		if r != '\t' {
			pad[i] = ' '
		}
	}
	msg := fmt.Sprintf("syntax error at column %d: %s\n    %s\n    %s^", len(pad)+1, escaped(pe.Message), visible(text), string(pad))
	return Problems{{File: file, Line: line, Msg: msg}}
}

// visible draws a line of the file for the terminal with one rune for each
// of its runes, so that a caret still lines up: tabs stay, control characters
// become their Unicode control pictures (U+2400–U+2421), other unprintable
// runes and invalid bytes U+FFFD.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r != utf8.RuneError && strconv.IsPrint(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune(0x2421)
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}

// escaped writes unprintable runes of a message as Go escapes (\x1b).
func escaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r != utf8.RuneError && strconv.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// bomLength is the length of the byte-order mark BurntSushi/toml drops
// before parsing, from which its offsets count.
func bomLength(src string) int {
	switch {
	case strings.HasPrefix(src, "\xff\xfe"), strings.HasPrefix(src, "\xfe\xff"):
		return 2
	case strings.HasPrefix(src, "\xef\xbb\xbf"):
		return 3
	}
	return 0
}
