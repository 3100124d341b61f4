package scenarios

import (
	"strings"
	"testing"
)

// A run projected past a Duration's 292 years is named in years, not
// as the negative duration an overflowing conversion gives; the days and
// the duration below it read as before.
func TestProjectedSpanNamedWithoutOverflow(t *testing.T) {
	for _, c := range []struct {
		seconds float64
		want    string
	}{{396 * 365.25 * 86400, "396 years"}, {3 * 86400, "3 days"}, {90, "1m30s"}, {2 * 365.25 * 86400, "2 years"}} {
		if got := spanSeconds(c.seconds); got != c.want {
			t.Errorf("spanSeconds(%g) = %q, want %q", c.seconds, got, c.want)
		}
	}
	src := strings.Replace(minimalScenario, "duration = \"60s\"", "requests = 1000000000000", 1)
	_, err := Parse(badFile, []byte(src))
	if err == nil || strings.Contains(err.Error(), "-2562047h") || !strings.Contains(err.Error(), "years simulated") {
		t.Fatalf("a trillion requests: %v", err)
	}
}
