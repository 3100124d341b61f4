package planning

import (
	"os"
	"strings"
	"testing"
)

// A log whose refusals are 503s (nginx's limit_req answers 503 by
// default) is read and said in 503s: the text, its minute table and the
// verdict had called them 429s. One of 429s keeps the word.
func TestCalibrateNamesTheRefusalStatus(t *testing.T) {
	for _, status := range []string{"429", "503"} {
		path := writeGeneratedLog(t, 11, start, 300,
			genHost{name: "api", rate: 50, median: 0.2, sigma: 0.4, admit: genTokenBucket(40, 80)})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(data), `"status": 429`, `"status": `+status)), 0o644); err != nil {
			t.Fatal(err)
		}
		c, _ := calibrateLog(t, path)
		var b strings.Builder
		if err := c.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		text, other := b.String(), map[string]string{"429": "503s", "503": "429s"}[status]
		if !strings.Contains(text, "\n  "+status+"s ") || !strings.Contains(c.Verdict, status+"s ") || strings.Contains(text, other) {
			t.Errorf("status %s: the text or verdict names the refusals otherwise: %q\n%s", status, c.Verdict, text)
		}
	}
}
