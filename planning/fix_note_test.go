package planning

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// A fix's note names the warnings it clears, as it does when it clears
// no critical finding (fail-burst-at-start's burst_at_start), also when
// it clears a critical one: fail-tenant-starvation's fix clears
// acquire_timeouts and the tenant_starvation warning.
func TestFixNoteNamesTheWarningsCleared(t *testing.T) {
	after := &metrics.Results{}
	for _, c := range []struct {
		cleared, before, after []string
		want                   string
	}{
		{[]string{"acquire_timeouts"}, []string{"tenant_starvation"}, []string{"refusals"}, "clears acquire_timeouts; clears warnings: tenant_starvation; goodput"},
		{nil, []string{"burst_at_start"}, nil, "clears warnings: burst_at_start; goodput"},
		{[]string{"sustained_429"}, []string{"refusals"}, []string{"refusals"}, "clears sustained_429; goodput"},
	} {
		fix := &metrics.VerifiedFix{Cleared: c.cleared, Before: metrics.FixFigures{Warnings: c.before}, After: &metrics.FixFigures{Warnings: c.after}}
		if note := fixNote(fix, after); !strings.HasPrefix(note, c.want) {
			t.Errorf("cleared %v, warnings %v → %v: note %q, want it to begin %q", c.cleared, c.before, c.after, note, c.want)
		}
	}
}
