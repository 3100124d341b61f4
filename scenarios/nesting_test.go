package scenarios

import (
	"strings"
	"testing"
)

// Arrays and inline tables nested past maxNesting are refused at the line
// where they pass it, before the TOML parser recurses into them (2·10⁶
// brackets, a 4 MB file, overflowed its stack: a crash no program
// survives). Brackets in strings and comments do not count.
func TestNestingBound(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		name, src string
		line      int
	}{
		{"at the bound", "a = " + deep(maxNesting), 0},
		{"one past it", "x = 1\n\na = " + deep(maxNesting+1), 3},
		{"inline tables", "a = " + strings.Repeat("{ b = ", maxNesting+1) + "1" + strings.Repeat("}", maxNesting+1), 1},
		{"table headers", strings.Repeat("[[a]]\nb = [[1, 2], [3]]\n", 200), 0},
		{"basic string", `a = "` + strings.Repeat("[", 100) + `"` + "\nb = " + deep(3), 0},
		{"escaped quote in a basic string", `a = "\"` + strings.Repeat("[", 100) + `"`, 0},
		{"literal string", `a = '` + strings.Repeat("{", 100) + `'`, 0},
		{"multi-line basic string", "a = \"\"\"\n\\\"\"\"" + strings.Repeat("[", 100) + "\n\"\"\"\nb = " + deep(maxNesting+1), 4},
		{"multi-line literal string", "a = '''\n" + strings.Repeat("[", 100) + "'''\nb = " + deep(maxNesting+1), 3},
		{"comment", "# " + strings.Repeat("[", 100) + "\na = 1", 0},
		{"unterminated string ends at its line", "a = \"" + strings.Repeat("[", 10) + "\nb = " + deep(maxNesting+1), 2},
		// A multi-line string may end in one or two quotes before its
		// closing three (four quotes: the content ends in one). Read as
		// closing at the first three, the last quote opened a string that
		// hid the rest of the line, its closing bracket included.
		{"quotes ending a multi-line basic string", strings.Repeat("a = [\"\"\"x\"\"\"\", 1]\n", 100), 0},
		{"quotes ending a multi-line literal string", strings.Repeat("a = ['''x''''', 1]\n", 100), 0},
		{"brackets after such a string", "a = [\"\"\"x\"\"\"\", " + deep(maxNesting) + "]", 1},
		// The TOML library reads six quotes after an escaped backslash as
		// three of content and the closing three.
		{"six quotes after an escape", "a = [\"\"\"\\\\\"\"\"\"\"\", " + deep(maxNesting) + "]", 1},
	}
	for _, c := range cases {
		if got := tooDeep(c.src); got != c.line {
			t.Errorf("%s: tooDeep = line %d, want %d", c.name, got, c.line)
		}
	}
	_, err := Parse("deep.toml", []byte(minimalScenario+"\n# padding\n[client.headers]\nx = "+deep(2_000_000)))
	if err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("2·10⁶ nested brackets: %v", err)
	}
	if _, err := ParseOverride("client.limiter.b.rate=" + deep(1000)); err == nil {
		t.Fatal("an override nested 1,000 deep was accepted")
	}
}
