package logs

import (
	"strings"
	"testing"
	"time"
)

// A latency field named by the mapping that logs no value ("-" or
// empty, as nginx logs $upstream_response_time for a request it
// answered itself) leaves the record without a latency, as the default
// request_time does; it is not a bad line.
func TestNamedLatencyWithoutValue(t *testing.T) {
	log := `{"time":1696946136,"status":200,"upstream_response_time":"-"}
{"time":1696946137,"status":200,"upstream_response_time":""}
{"time":1696946138,"status":200,"upstream_response_time":"0.250"}
`
	recs, r := readAll(t, log, Options{Mapping: Mapping{Latency: "upstream_response_time"}})
	if bad, named := r.Bad(); bad != 0 || len(recs) != 3 {
		t.Fatalf("%d records, bad lines %v", len(recs), named)
	}
	if recs[0].HasLatency || recs[1].HasLatency || !recs[2].HasLatency || recs[2].Latency != 250*time.Millisecond {
		t.Errorf("records %+v", recs)
	}
}

// nginx logs the times of each upstream it tried, ", " between servers
// and " : " between internal redirects: the latency is their sum. A
// value that is no latency at all stays a bad line, named.
func TestUpstreamTimesAreSummed(t *testing.T) {
	log := `time,status,urt
1696946136,200,"0.012, 0.034"
1696946137,200,0.100 : 0.020
1696946138,502,"0.005, -"
1696946139,200,fast
1696946140,200,"0.1, fast"
`
	recs, r := readAll(t, log, Options{Mapping: Mapping{Latency: "urt"}})
	want := []time.Duration{46 * time.Millisecond, 120 * time.Millisecond, 5 * time.Millisecond}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		if !recs[i].HasLatency || recs[i].Latency != w {
			t.Errorf("record %d: latency %v (has %v), want %v", i, recs[i].Latency, recs[i].HasLatency, w)
		}
	}
	bad, named := r.Bad()
	if bad != 2 || !strings.HasPrefix(named[0].String(), `access.log:5: latency "fast"`) || !strings.HasPrefix(named[1].String(), `access.log:6: latency "0.1, fast"`) {
		t.Errorf("bad lines %d %v", bad, named)
	}
}
