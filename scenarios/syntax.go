package scenarios

import (
	"bytes"
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
	if why := notText(data); why != "" {
		return Problems{{File: file, Msg: "is not a scenario: a scenario is a TOML text file, and this one " + why}}
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
	// A long line is shown around the error only, so that the message
	// stays a few lines long however long the line is.
	shown, pad := clip([]rune(text), []rune(before))
	msg := fmt.Sprintf("syntax error at column %d: %s\n    %s\n    %s^", utf8.RuneCountInString(before)+1, shorten(escaped(pe.Message)), visible(string(shown)), string(pad))
	return Problems{{File: file, Line: line, Msg: msg}}
}

// shorten cuts the middle out of a message longer than 3×clipAround
// runes (a parser's message quoting a long token).
func shorten(msg string) string {
	r := []rune(msg)
	if len(r) <= 3*clipAround {
		return msg
	}
	return string(r[:2*clipAround]) + "…" + string(r[len(r)-clipAround/2:])
}

// clipAround is how many runes of a long line are shown on each side of
// its error.
const clipAround = 60

// clip is the part of a line shown with its error, the runes before the
// error being before: the whole line up to 2×clipAround runes, or those
// around the error with "…" where the line was cut; and the caret line's
// padding, which repeats the tabs before the caret so that it lines up
// however wide the terminal draws a tab.
func clip(line, before []rune) (shown, pad []rune) {
	shown, at := line, len(before)
	if len(line) > 2*clipAround {
		from, to := max(0, at-clipAround), min(len(line), at+clipAround)
		shown = append([]rune{}, line[from:to]...)
		if from > 0 {
			shown = append([]rune("…"), shown...)
			at = at - from + 1
		}
		if to < len(line) {
			shown = append(shown, '…')
		}
	}
	pad = make([]rune, at)
	for i := range pad {
		pad[i] = ' '
		if i < len(shown) && shown[i] == '\t' {
			pad[i] = '\t'
		}
	}
	return shown, pad
}

// notText says why data, which did not parse, is not a text file (NUL
// bytes, or bytes that are not UTF-8), or "" if it looks like text: its
// lines are then not worth echoing.
func notText(data []byte) string {
	head := data[:min(len(data), 8192)]
	switch {
	case bytes.IndexByte(head, 0) >= 0:
		return "holds NUL bytes (is it a binary file?)"
	case !utf8.Valid(head) && !utf8.Valid(head[:max(0, len(head)-utf8.UTFMax)]):
		return "is not UTF-8 text"
	}
	return ""
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
