package logs

import (
	"errors"
	"testing"
	"time"
)

// A Go layout without a time zone is a valid time format (its times read
// as UTC); one with no element of a date or time in it, or too coarse to
// place a record within a day (no year, or no day), is refused.
func TestZonelessLayoutsAreTimeFormats(t *testing.T) {
	for _, f := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05.000", "02/01/2006 15:04:05", "2006-01-02", "2006-01-02 15:04:05 -0700"} {
		if err := CheckTimeFormat(f); err != nil {
			t.Errorf("%q refused: %v", f, err)
		}
	}
	for _, f := range []string{"yesterday", "hello world", "Jan _2 15:04:05", "15:04:05", "2006-01"} {
		if err := CheckTimeFormat(f); !errors.Is(err, ErrOptions) {
			t.Errorf("%q: error %v, want ErrOptions", f, err)
		}
	}
}

// A zone-less layout's times are UTC, with the precision the layout
// gives: a second, or a minute for one without seconds.
func TestZonelessLayoutReadsUTC(t *testing.T) {
	log := "ts,status\n2023-10-10 13:55:36,200\n2023-10-10 13:55:37.250,200\n"
	recs, _ := readAll(t, log, Options{Mapping: Mapping{Time: "ts", TimeFormat: "2006-01-02 15:04:05"}})
	if len(recs) != 2 || recs[0].Time != t0 || recs[0].Precision != time.Second ||
		recs[1].Time != t0+1250*int64(time.Millisecond) || recs[1].Precision != time.Millisecond {
		t.Fatalf("records %+v", recs)
	}
	recs, _ = readAll(t, "ts,status\n2023-10-10 13:55,200\n", Options{Mapping: Mapping{Time: "ts", TimeFormat: "2006-01-02 15:04"}})
	minute := time.Date(2023, 10, 10, 13, 55, 0, 0, time.UTC).UnixNano()
	if len(recs) != 1 || recs[0].Time != minute || recs[0].Precision != time.Minute {
		t.Fatalf("records %+v, want one at %d to the minute", recs, minute)
	}
}
