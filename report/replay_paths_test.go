package report

import (
	"strings"
	"testing"
)

// The text and the report say how many records matched a path by method
// and URL path, naming the first unmatched; a replay that matched nothing
// says nothing of paths.
func TestReplayPathsCounted(t *testing.T) {
	c := &ReplayComparison{Log: "a.log", Format: "clf", Records: 1204, PathsMatched: 1200, PathsUnmatched: 4, FirstUnmatched: []string{"a.log:7"}}
	var b strings.Builder
	if err := WriteReplayText(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"paths: 1,200 matched by method and URL path, 4 matched none (drawn by weight)\n", "  unmatched a.log:7\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if intro := replayIntro(c); !strings.HasSuffix(intro, "Paths: 1,200 records matched by method and URL path, 4 matched none (drawn by weight).") {
		t.Errorf("intro %q", intro)
	}
	c.PathsMatched, c.PathsUnmatched, c.FirstUnmatched = 0, 0, nil
	b.Reset()
	if err := WriteReplayText(&b, c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "paths") || strings.Contains(replayIntro(c), "Paths") {
		t.Errorf("a replay without matching speaks of paths:\n%s", b.String())
	}
}
