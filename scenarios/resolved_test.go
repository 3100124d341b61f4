package scenarios

import (
	"path/filepath"
	"testing"
)

// The resolved scenario loads back to the same scenario, for every example.
func TestResolvedRoundTrips(t *testing.T) {
	files, _ := filepath.Glob("examples/*.toml")
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		text, err := sc.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(f, []byte(text))
		if err != nil {
			t.Fatalf("%s: resolved text does not load: %v\n%s", f, err, text)
		}
		again, _ := back.Resolved()
		if again != text {
			t.Fatalf("%s: resolving twice differs:\n%s\n---\n%s", f, text, again)
		}
	}
}
