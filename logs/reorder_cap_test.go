package logs

import (
	"strings"
	"testing"
)

// A late line is measured from the latest record read. One within the
// reorder window that comes after a record the hold cap released early
// says so, naming the cap and what to do, rather than claim the window
// does not allow it; one beyond the window says that.
func TestLateLineNamesTheHoldCap(t *testing.T) {
	log := "time,status\n1696946110,200\n1696946111,200\n1696946112,200\n1696946113,200\n1696946114,200\n1696946115,200\n1696946110.5,200\n1696946109,200\n"
	recs, r := readAll(t, log, Options{MaxHeld: 4})
	bad, named := r.Bad()
	if len(recs) != 6 || bad != 2 {
		t.Fatalf("%d records, bad lines %v", len(recs), named)
	}
	capped, beyond := named[0].String(), named[1].String()
	for _, want := range []string{"access.log:8: out of order: 4.5s before the latest record read", "within the reorder window (5s)", "at most 4 records", "sort the log by time"} {
		if !strings.Contains(capped, want) {
			t.Errorf("%q lacks %q", capped, want)
		}
	}
	if want := "access.log:9: out of order: 6s before the latest record read, more than the reorder window (5s) allows"; capped == beyond || beyond != want {
		t.Errorf("got %q, want %q", beyond, want)
	}
}
