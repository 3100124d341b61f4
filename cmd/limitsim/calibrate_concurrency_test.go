package main

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// concurrencyServer answers while fewer than permits requests are in
// service, each for a lognormal latency of median 200 ms, and refuses
// with 429 after 1 ms otherwise.
type concurrencyServer struct {
	permits int
	rng     *rand.Rand
}

type dueTimes []float64

func (h dueTimes) Len() int           { return len(h) }
func (h dueTimes) Less(i, j int) bool { return h[i] < h[j] }
func (h dueTimes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueTimes) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *dueTimes) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// serve runs Poisson arrivals at rate for span seconds from start and
// returns the log (latencies rounded up to 10 µs, as a log writes them
// to five decimals) and the share refused.
func (s concurrencyServer) serve(start, span, rate float64) (string, float64) {
	var b strings.Builder
	b.WriteString("time,status,request_time\n")
	var due dueTimes
	var n, refused int
	for at := start + s.rng.ExpFloat64()/rate; at < start+span; at += s.rng.ExpFloat64() / rate {
		for due.Len() > 0 && due[0] <= at {
			heap.Pop(&due)
		}
		n++
		if due.Len() >= s.permits {
			refused++
			fmt.Fprintf(&b, "%.6f,429,0.00100\n", at)
			continue
		}
		latency := 0.2 * math.Exp(0.5*s.rng.NormFloat64())
		heap.Push(&due, at+latency)
		fmt.Fprintf(&b, "%.6f,200,%.5f\n", at, math.Ceil(latency*1e5)/1e5)
	}
	return b.String(), float64(refused) / float64(n)
}

// A server that refuses beyond 8 requests in service is calibrated as a
// concurrency limit of 8, though the latencies logged, rounded up, put 9
// in service at a few admissions; a token bucket agreed with its
// refusals at 0.81 and was trusted, and at half the load it refused a
// twentieth of what the server does. The scenario written, run at half
// and at 0.8 of the log's load, refuses what the server refuses there.
func TestCalibrateFindsAConcurrencyLimit(t *testing.T) {
	start := float64(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Unix())
	log, _ := concurrencyServer{permits: 8, rng: rand.New(rand.NewPCG(5, 6))}.serve(start, 300, 40)
	path := filepath.Join(t.TempDir(), "conc.csv")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, c, dir := calibrateJSON(t, path)
	q := c.Hosts[0].Quota
	if code != exitOK || q.Kind != "concurrency" || q.Limit != 8 || !strings.Contains(q.Reason, "at 100% of the refusals exactly 8") {
		t.Fatalf("exit %d, quota %+v: %s", code, q, c.Verdict)
	}
	scenario := filepath.Join(dir, calibratedScenarioFile)
	text, err := os.ReadFile(scenario)
	if err != nil || !strings.Contains(string(text), `quota = { kind = "concurrency", permits = 8 }`) {
		t.Fatalf("the scenario's quota (%v):\n%s", err, text)
	}
	for _, rate := range []float64{20, 32} {
		_, want := concurrencyServer{permits: 8, rng: rand.New(rand.NewPCG(7, 8))}.serve(start, 3000, rate)
		res := runJSON(t, scenario, "--no-verify", "--set", fmt.Sprintf("workload.rate=%g", rate), "--set", "run.duration=30m")
		if math.Abs(res.Rate429-want) > 0.15*want {
			t.Errorf("at %g/s the scenario refuses %.4g, the server %.4g", rate, res.Rate429, want)
		}
	}
}
