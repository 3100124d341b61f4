package logs

import (
	"testing"
	"time"
)

// LayoutPrecision is a record's Precision for a time in a Go layout: the
// fraction's, a second without one, the layout's grain when coarser.
func TestLayoutPrecision(t *testing.T) {
	for _, c := range []struct {
		layout, text string
		want         time.Duration
	}{
		{clfLayout, "30/Nov/2026:10:00:01 +0000", time.Second},
		{"02/Jan/2006:15:04:05.000 -0700", "30/Nov/2026:10:00:01.250 +0000", time.Millisecond},
		{time.RFC3339Nano, "2026-11-30T10:00:01.5Z", 100 * time.Millisecond},
		{"2006-01-02 15:04", "2026-11-30 10:00", time.Minute},
	} {
		if got := LayoutPrecision(c.layout, c.text); got != c.want {
			t.Errorf("%s in %s: %v, want %v", c.text, c.layout, got, c.want)
		}
	}
}
