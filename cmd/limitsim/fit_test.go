package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fit latency ranks the generating family first on its samples, prints
// the line to paste (which loads in a scenario), and names the file and
// line of bad input.
func TestFitLatency(t *testing.T) {
	dir := t.TempDir()
	src := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("latency_s\n")
	for range 5000 {
		fmt.Fprintf(&b, "%.6f\n", 0.2*math.Exp(0.5*src.NormFloat64()))
	}
	samples := filepath.Join(dir, "lat.csv")
	if err := os.WriteFile(samples, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli("fit", "latency", samples, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Samples int `json:"samples"`
		Fits    []struct {
			Dist      string             `json:"dist"`
			Latency   string             `json:"latency"`
			Quantiles map[string]float64 `json:"quantiles_s"`
		} `json:"fits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Samples != 5000 || res.Fits[0].Dist != "lognormal" || res.Fits[len(res.Fits)-1].Dist != "empirical" {
		t.Fatalf("samples %d, fits %+v", res.Samples, res.Fits)
	}
	if p50 := res.Fits[0].Quantiles["p50"]; math.Abs(p50-0.2) > 0.01 {
		t.Errorf("fitted p50 %v, want about 0.2 s", p50)
	}
	validateLatency(t, dir, res.Fits[0].Latency)
	// The samples line names the file alone: pasted into a scenario beside
	// it, it loads (an absolute path, as given, would be refused).
	validateLatency(t, dir, res.Fits[len(res.Fits)-1].Latency)
	for content, want := range map[string]string{
		"0.1\n0.2\nfast\n": "bad.csv:3: \"fast\" is not a latency",
		"0.1\n-0.2\n":      "bad.csv:2: latency",
		"0.1\nNaN\n":       "bad.csv:2: latency NaN must be positive seconds",
		"0.1\n1e300\n":     "bad.csv:2: latency 1e300 must be positive seconds",
		"1e400\n0.1\n":     "bad.csv:1: latency 1e400 must be positive seconds", // a number out of range, not a header
		"0.1\n3000000h\n":  "bad.csv:2: latency 3000000h must be positive seconds",
		"0.1\n-5ms\n":      "bad.csv:2: latency -5ms must be positive",
		"# nothing\n":      "0 samples",
	} {
		bad := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := cli("fit", "latency", bad); code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d: %s", content, code, errOut)
		}
	}
}

// fitArrivalsJSON runs fit arrivals with --json and decodes the result.
func fitArrivalsJSON(t *testing.T, args ...string) (process, workload string, rate float64) {
	t.Helper()
	code, out, errOut := cli(append([]string{"fit", "arrivals", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Process  string  `json:"process"`
		Workload string  `json:"workload"`
		Rate     float64 `json:"rate"`
		Reason   string  `json:"reason"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", res.Process, res.Reason)
	return res.Process, res.Workload, res.Rate
}

// validateWorkload checks that pasted [workload] keys load in a scenario.
func validateWorkload(t *testing.T, dir, workload string) {
	t.Helper()
	sc := filepath.Join(dir, "fitted.toml")
	scenario := "name = \"fitted\"\n[run]\nduration = \"60s\"\n[workload]\n" + workload + "\n[[upstream]]\nhost = \"*\"\nlatency = { dist = \"constant\", value = \"10ms\" }\n"
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("validate", sc); code != exitOK {
		t.Fatalf("the fitted keys do not load:\n%s\n%s", workload, errOut)
	}
}

// fit arrivals names the process behind recorded timestamps (plain
// seconds, or a column of an access log), prints keys that load in a
// scenario, writes a replayable trace when none of the processes fits,
// and names the file and line of bad input.
func TestFitArrivals(t *testing.T) {
	dir := t.TempDir()
	src := rand.New(rand.NewPCG(8, 9))
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// Bursts of 100/s for 5 s every 15 s, as seconds with a header.
	var b strings.Builder
	b.WriteString("t\n")
	for at := 0.0; at < 300; {
		at += src.ExpFloat64() / 100
		if math.Mod(at, 15) < 5 {
			fmt.Fprintf(&b, "%.6f\n", at)
		} else {
			at += 15 - math.Mod(at, 15)
		}
	}
	chart := filepath.Join(dir, "rate.svg")
	process, workload, _ := fitArrivalsJSON(t, write("onoff.csv", b.String()), "--chart", chart)
	if svg, err := os.ReadFile(chart); err != nil || !strings.Contains(string(svg), "fitted: onoff") {
		t.Errorf("--chart drew no rate chart with the fitted process: %v", err)
	}
	if process != "onoff" || !strings.Contains(workload, `on = "5`) && !strings.Contains(workload, `on = "4.9`) {
		t.Errorf("bursts judged %s:\n%s", process, workload)
	}
	validateWorkload(t, dir, workload)

	// Poisson at 20/s in an access log's fourth and fifth fields.
	b.Reset()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := start
	for i := range 4000 {
		at = at.Add(time.Duration(src.ExpFloat64() / 20 * 1e9))
		fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET / HTTP/1.1\" 200 12\n", i%250, at.Format("02/Jan/2006:15:04:05.000 -0700"))
	}
	process, workload, rate := fitArrivalsJSON(t, write("access.log", b.String()), "--column", "4", "--time-format", "02/Jan/2006:15:04:05.000 -0700")
	if process != "poisson" || math.Abs(rate-20) > 1 {
		t.Errorf("Poisson at 20/s judged %s at %v/s", process, rate)
	}
	validateWorkload(t, dir, workload)

	// Batches of 1 to 8 at once: overdispersed, so the trace is replayed.
	b.Reset()
	var now float64
	for range 2000 {
		now += src.ExpFloat64() / 10
		for range 1 + src.IntN(8) {
			fmt.Fprintf(&b, "%.6f\n", now)
		}
	}
	trace := filepath.Join(dir, "replay.csv")
	process, workload, _ = fitArrivalsJSON(t, write("batched.csv", b.String()), "--trace-out", trace)
	if process != "trace" || !strings.Contains(workload, `trace = "replay.csv"`) {
		t.Errorf("batches judged %s:\n%s", process, workload)
	}
	validateWorkload(t, dir, workload)

	for content, want := range map[string]string{
		"":                         "no timestamps",
		"1\n2\nsoon\n":             "bad.csv:3: \"soon\" is not a number",
		"1\n-2\n":                  "bad.csv:2: timestamp -2 is out of range",
		"-1\n2\n":                  "bad.csv:1: timestamp -1 is out of range", // a number, not a header
		"t\n1\nnan\n":              "bad.csv:3: timestamp nan is out of range",
		"1\n3\n2\n":                "bad.csv:3: timestamp 2 is earlier than line 2's",
		"1\n2\n3\n":                "3 arrivals; judging a process needs at least 50",
		"# comment\n\n1\n2\nx y\n": "bad.csv:5",
	} {
		if code, _, errOut := cli("fit", "arrivals", write("bad.csv", content)); code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d: %s", content, code, errOut)
		}
	}
}

// fit latency also reads a table of percentiles (with a header), ranks
// the generating family first, and names the line of a bad table.
func TestFitLatencyPercentiles(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		path := filepath.Join(dir, "p.csv")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The lognormal of median 200 ms and sigma 0.5.
	table := "percentile,latency\np50,0.2\np90 = 379.6ms\np99: 0.6395\np999,0.9352\n"
	code, out, errOut := cli("fit", "latency", write(table), "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Percentiles int `json:"percentiles"`
		Fits        []struct {
			Dist        string  `json:"dist"`
			QuantileErr float64 `json:"quantile_err"`
			Latency     string  `json:"latency"`
		} `json:"fits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Percentiles != 4 || res.Fits[0].Dist != "lognormal" || res.Fits[0].QuantileErr > 0.002 ||
		!strings.Contains(res.Fits[0].Latency, `median = "200.`) && !strings.Contains(res.Fits[0].Latency, `median = "199.`) {
		t.Fatalf("fits %+v", res.Fits)
	}
	validateLatency(t, dir, res.Fits[0].Latency)
	// The samples line names the file alone: pasted into a scenario beside
	// it, it loads (an absolute path, as given, would be refused).
	validateLatency(t, dir, res.Fits[len(res.Fits)-1].Latency)
	chart := filepath.Join(dir, "fit.png")
	if code, _, errOut := cli("fit", "latency", write(table), "--chart", chart); code != exitOK {
		t.Fatalf("--chart: exit %d: %s", code, errOut)
	}
	if png, err := os.ReadFile(chart); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("--chart wrote no PNG: %v", err)
	}
	if code, _, errOut := cli("fit", "latency", write(table), "--chart", filepath.Join(dir, "fit.txt")); code != exitInvalid || !strings.Contains(errOut, "must end in .png or .svg") {
		t.Errorf("--chart fit.txt: exit %d: %s", code, errOut)
	}
	for content, want := range map[string]string{
		"p50,0.1\np90,slow\n":  "p.csv:2: \"slow\" is not a latency",
		"p90,0.3\np50,0.1\n":   "p.csv:2: \"p50,0.1\": percentiles must rise",
		"p50,0.3\np90,0.1\n":   "latencies must not fall",
		"p50,0.1\n0.3\n":       "p.csv:2: \"0.3\" is not a percentile",
		"p50,0.1\n":            "1 percentiles; a fit needs at least two",
		"p50,0.1\np100,0.2\n":  "p.csv:2",
		"p50,0.1\np90,0.2,x\n": "want a percentile and a latency",
	} {
		if code, _, errOut := cli("fit", "latency", write(content)); code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d: %s", content, code, errOut)
		}
	}
}

// validateLatency checks that a pasted latency line loads in a scenario.
func validateLatency(t *testing.T, dir, latency string) {
	t.Helper()
	sc := filepath.Join(dir, "s.toml")
	scenario := "name = \"fitted\"\n[run]\nrequests = 100\n[workload]\nrate = 10.0\n[[upstream]]\nhost = \"*\"\n" + latency + "\n"
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("validate", sc); code != exitOK {
		t.Fatalf("the fitted line does not load: %s", errOut)
	}
}
