package planning

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// A calibration of a host answering in about a millisecond, logged to the
// millisecond as nginx logs request_time, is trusted: its quota and
// goodput match, and its latencies, compared as the log writes them, too.
// Compared unrounded, the model's p99 was 10-30% off the log's each
// minute, and the calibration not trusted.
func TestCalibrateTrustsMillisecondLatencies(t *testing.T) {
	// A host answering in about a millisecond, logged to the millisecond.
	path := writeGeneratedLog(t, 5, start, 600,
		genHost{name: "api", rate: 60, median: 0.001, sigma: 0.5, admit: genTokenBucket(40, 1)})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"request_time": ([0-9.]+)`)
	rounded := re.ReplaceAllStringFunc(string(data), func(m string) string {
		v, _ := strconv.ParseFloat(re.FindStringSubmatch(m)[1], 64)
		return fmt.Sprintf(`"request_time": %.3f`, v)
	})
	if err := os.WriteFile(path, []byte(rounded), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := calibrateLog(t, path)
	if c.Errors.LatencyP99 >= 0.05 || c.Errors.LatencyP50 >= 0.05 || !c.Trusted {
		t.Fatalf("latencies logged to the millisecond: errors %+v, verdict %q", c.Errors, c.Verdict)
	}
}
