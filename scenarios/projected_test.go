package scenarios

import (
	"strings"
	"testing"
)

// run.requests ends a run before run.duration when it comes first: 2,000
// requests at 50/s are 40 s, 40,000 intervals of a millisecond however
// long the duration, and the run is not refused for a year of them.
func TestIntervalsProjectedOverTheRunThatEndsFirst(t *testing.T) {
	src := strings.Replace(minimalScenario, `duration = "60s"`, "duration = \"8760h\"\nrequests = 2000\ninterval = \"1ms\"", 1)
	if _, err := Parse(badFile, []byte(src)); err != nil {
		t.Errorf("a run of 2,000 requests: %v", err)
	}
}
