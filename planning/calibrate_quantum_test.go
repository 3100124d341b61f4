package planning

import (
	"fmt"
	"testing"
	"time"
)

// Latencies logged to the millisecond (nginx's request_time) are compared
// with the model's as the log would write them: rounded to the
// millisecond. A model's p99 of 0.9 ms against the log's 1 ms had counted
// as 10% off and the calibration as not trusted, at 30/s, though the
// quota and the goodput matched.
func TestCalibrateComparesLatenciesInTheLogsStep(t *testing.T) {
	lg := loggedLatency{quantum: 0.001}
	for _, c := range []struct{ v, want float64 }{{0.0009, 0.001}, {0.00149, 0.001}, {0.0016, 0.002}, {0.2504, 0.25}} {
		if got := lg.as(c.v); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", c.want) {
			t.Errorf("as(%g) = %g, want %g", c.v, got, c.want)
		}
	}
	if got := (loggedLatency{resolution: 0.0015, quantum: 0.001}).as(0.0009); got != 0 {
		t.Errorf("under the resolution: %g, want 0", got)
	}
	ms := make([]time.Duration, 60)
	for i := range ms {
		ms[i] = time.Duration(i+1) * time.Millisecond
	}
	if q := latencyQuantum(ms); q != time.Millisecond {
		t.Errorf("milliseconds: step %v", q)
	}
	if q := latencyQuantum(append(ms, 1500*time.Microsecond)); q != 0 {
		t.Errorf("a finer latency among them: step %v", q)
	}
	if q := latencyQuantum(ms[:10]); q != 0 {
		t.Errorf("ten latencies: step %v, want none read", q)
	}

}
