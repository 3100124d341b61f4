package logs

import "testing"

// A log with nothing usable says how many lines it held, in words that
// agree with the count ("1 bad line", not "1 bad lines").
func TestNoRecordsCounts(t *testing.T) {
	for _, c := range []struct {
		r    Reader
		want string
	}{
		{Reader{name: "a.csv", line: 1}, "a.csv: " + ErrNoRecords.Error() + " (1 line, none a record)"},
		{Reader{name: "a.csv", line: 3}, "a.csv: " + ErrNoRecords.Error() + " (3 lines, none a record)"},
		{Reader{name: "a.csv", bad: 1, named: []BadLine{{File: "a.csv", Line: 2, Reason: "time"}}}, "a.csv: " + ErrNoRecords.Error() + ": 1 bad line, a.csv:2: time"},
		{Reader{name: "a.csv", bad: 2, named: []BadLine{{File: "a.csv", Line: 2, Reason: "time"}}}, "a.csv: " + ErrNoRecords.Error() + ": 2 bad lines, first a.csv:2: time"},
	} {
		if got := c.r.noRecords().Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
