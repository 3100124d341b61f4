package logs

import "testing"

// A UTF-8 byte-order mark at the start of a log (as Excel writes one) is
// not part of its first line: a JSON lines log is still JSON, and a CSV
// header's first column keeps its name.
func TestByteOrderMarkIsSkipped(t *testing.T) {
	const bom = "\uFEFF"
	for _, c := range []struct {
		log    string
		format Format
		m      Mapping
	}{
		{bom + `{"time":1696946136,"status":200}` + "\n" + `{"time":1696946137,"status":429}` + "\n", FormatJSON, Mapping{}},
		{bom + "ts,status\n1696946136,200\n1696946137,429\n", FormatCSV, Mapping{Time: "ts"}},
		{bom + `203.0.113.7 - - [10/Oct/2023:13:55:36 +0000] "GET / HTTP/1.1" 200 1` + "\n" + `203.0.113.7 - - [10/Oct/2023:13:55:37 +0000] "GET / HTTP/1.1" 429 1` + "\n", FormatCLF, Mapping{}},
	} {
		recs, r := readAll(t, c.log, Options{Mapping: c.m})
		if bad, named := r.Bad(); r.Format() != c.format || len(recs) != 2 || bad != 0 || recs[0].Time != t0 || recs[1].Status != 429 {
			t.Errorf("%v log: read as %v, records %+v, bad lines %v", c.format, r.Format(), recs, named)
		}
	}
}
