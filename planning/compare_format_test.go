package planning

import "testing"

// A comparison's cells are written as the reports write numbers: counts
// grouped, times in the unit that reads, rates to four significant digits.
func TestHeadlineMetricsFormatForPeople(t *testing.T) {
	want := map[string]map[float64]string{
		"succeeded":     {9568: "9,568", 202.4: "202"},
		"request_p99_s": {0.6489: "649ms", 0.003979: "3.98ms", 3.207: "3.21s"},
		"goodput_rps":   {79.44: "79.44/s", 2666.666667: "2,667/s"},
		"rate_429":      {0.0123: "1.23%"},
	}
	for _, m := range HeadlineMetrics() {
		for v, s := range want[m.Name] {
			if got := m.Format(v); got != s {
				t.Errorf("%s %v: %q, want %q", m.Name, v, got, s)
			}
		}
	}
}
