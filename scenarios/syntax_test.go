package scenarios

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A file that is not text (NUL bytes, bytes that are not UTF-8) is
// refused as such, without echoing its bytes; a text file's syntax error
// still shows its line.
func TestNotTextIsRefusedWithoutEcho(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"elf", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00rate = 1\n"), "holds NUL bytes"},
		{"latin1", []byte("rate = \"caf\xe9\"\n= oops\n"), "is not UTF-8 text"},
	} {
		_, err := Parse(c.name+".toml", c.data)
		if err == nil {
			t.Fatalf("%s: parsed", c.name)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n    ") || strings.Contains(msg, "syntax error") {
			t.Errorf("%s: %q: want %q and no echoed line", c.name, msg, c.want)
		}
	}
	_, err := Parse("ok.toml", []byte("a = 1\nrate = = 3\n"))
	if err == nil || !strings.Contains(err.Error(), "ok.toml:2: syntax error at column 8") || !strings.Contains(err.Error(), "\n    rate = = 3\n           ^") {
		t.Errorf("text file: %v", err)
	}
}

// A long line is shown around its error, the caret under the error, and
// the parser's message quoting a long token is shortened: the message stays
// a few short lines.
func TestLongLineIsClippedAroundTheError(t *testing.T) {
	line := "rate = " + strings.Repeat("x", 500) + " = = 3"
	_, err := Parse("long.toml", []byte("a = 1\n"+line+"\n"))
	if err == nil {
		t.Fatal("parsed")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), err)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 4*clipAround {
			t.Errorf("a line of %d runes: %q", n, l)
		}
	}
	shown, caret := []rune(lines[1]), []rune(lines[2])
	if !strings.HasSuffix(lines[1], "…") || len(caret) > len(shown) || shown[len(caret)-1] != 'x' || !strings.Contains(lines[0], "column 8") {
		t.Errorf("caret %d under %q", len(caret), lines[1])
	}
	// Cut on both sides: the caret still lands on the character at fault.
	line = "a = 1\nb = \"" + strings.Repeat("y", 300) + "\" = 3" + strings.Repeat(" ", 300) + "\n"
	_, err = Parse("mid.toml", []byte(line))
	if err == nil {
		t.Fatal("parsed")
	}
	lines = strings.Split(err.Error(), "\n")
	shown, caret = []rune(lines[1]), []rune(lines[2])
	if !strings.HasPrefix(lines[1], "    …") || shown[len(caret)-1] != '=' {
		t.Errorf("caret %d under %q", len(caret), lines[1])
	}
}
