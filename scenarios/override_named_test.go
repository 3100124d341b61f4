package scenarios

import (
	"strings"
	"testing"
)

// A problem at a key of the file that another key's override caused names
// that override: a warm-up the file gives, longer than a duration --set
// gave, is the file's line, with the duration's override named; without
// the override the message is the file's alone.
func TestFileProblemNamesTheOverrideItMentions(t *testing.T) {
	src, err := ExampleSource("token-bucket")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseWith("token-bucket.toml", src, []Override{{Key: "run.duration", Value: "5s", Flag: "--set"}})
	if err == nil || !strings.Contains(err.Error(), "token-bucket.toml:8: run.warmup: (10s) must be shorter than run.duration (5s) (run.duration set by --set run.duration=5s)") {
		t.Errorf("%v", err)
	}
	_, err = ParseWith("token-bucket.toml", []byte(strings.Replace(string(src), `duration = "`, `duration = "5s" # `, 1)), nil)
	if err == nil || strings.Contains(err.Error(), "set by") {
		t.Errorf("without overrides: %v", err)
	}
}
