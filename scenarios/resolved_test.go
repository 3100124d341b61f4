package scenarios

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bundledCount is the number of scenarios in examples/.
const bundledCount = 23

// The resolved scenario loads back to the same scenario, for every example.
func TestResolvedRoundTrips(t *testing.T) {
	files, err := filepath.Glob("examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	var found, bundled []string
	for _, f := range files {
		found = append(found, strings.TrimSuffix(filepath.Base(f), ".toml"))
	}
	for _, e := range ex {
		bundled = append(bundled, e.Name)
	}
	slices.Sort(found)
	slices.Sort(bundled)
	if len(files) != bundledCount || !slices.Equal(found, bundled) {
		t.Fatalf("round-trip covers %d files %v; want the %d bundled scenarios %v", len(files), found, bundledCount, bundled)
	}
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
