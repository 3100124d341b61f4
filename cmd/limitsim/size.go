package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/scenarios"
)

// parseRate reads "100/s", "6000/min" or "360000/h" as requests per second.
func parseRate(s string) (float64, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("%q: want N/s, N/min or N/h", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q: %q is not a positive number", s, num)
	}
	per := map[string]float64{"s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}[strings.TrimSpace(unit)]
	if per == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (s, min or h)", s, unit)
	}
	return n / per, nil
}

// parseBytes reads "512MiB", "2MB", "1024" as bytes.
func parseBytes(s string) (float64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a size like 512MiB", s)
	}
	return n * mult, nil
}

// cmdSize prints the article's sizing table for a published quota.
func cmdSize(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quota := fs.String("quota", "", "the published quota: `N/s`, N/min or N/h (required)")
	instances := fs.Int("instances", 1, "client instances sharing the quota")
	p50 := fs.Duration("latency-p50", 0, "median latency of one call (required)")
	p99 := fs.Duration("latency-p99", 0, "p99 latency of one call (required; above the p50)")
	memory := fs.String("memory-budget", "", "memory one instance may spend on responses in flight, e.g. `512MiB`")
	response := fs.String("response-p99", "", "p99 response size, e.g. `2MiB` (with --memory-budget)")
	windowLimit := fs.Int64("window-limit", 0, "a published limit per window, e.g. `5000` (with --window)")
	window := fs.Duration("window", 0, "the window of --window-limit, e.g. 1h")
	asJSON := fs.Bool("json", false, "print JSON")
	doVerify := fs.Bool("verify", false, "simulate the sized configuration and say whether the arithmetic holds")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 0 {
		fmt.Fprintln(stderr, "usage: limitsim size --quota N/s --latency-p50 D --latency-p99 D [--instances N] [--memory-budget SIZE --response-p99 SIZE] [--window-limit N --window D] [--json] [--verify]")
		return exitUsage
	}
	in, err := sizeInputs(*quota, *instances, *p50, *p99, *memory, *response, *windowLimit, *window)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim size: %v\n", err)
		return exitInvalid
	}
	s, err := scenarios.Size(in)
	if err != nil {
		fmt.Fprintf(stderr, "limitsim size: %v\n", err)
		return exitInvalid
	}
	if *doVerify {
		if s.Verify, err = s.Check(); err != nil {
			fmt.Fprintf(stderr, "limitsim size: --verify: %v\n", err)
			return exitInternal
		}
	}
	if *asJSON {
		err = printJSON(stdout, s)
	} else {
		err = writeSizing(stdout, s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// sizeInputs checks and converts the flags of `limitsim size`.
func sizeInputs(quota string, instances int, p50, p99 time.Duration, memory, response string, windowLimit int64, window time.Duration) (scenarios.SizingInputs, error) {
	in := scenarios.SizingInputs{Instances: instances, LatencyP50: p50.Seconds(), LatencyP99: p99.Seconds(), SafetyMargin: 0.9,
		WindowLimit: windowLimit, WindowS: window.Seconds()}
	var err error
	switch {
	case quota == "":
		return in, errors.New("--quota is required (e.g. 100/s)")
	case instances < 1:
		return in, errors.New("--instances must be at least 1")
	case p50 <= 0 || p99 <= p50:
		return in, errors.New("--latency-p50 and --latency-p99 are required, with 0 < p50 < p99")
	case (memory == "") != (response == ""):
		return in, errors.New("--memory-budget and --response-p99 go together")
	case (windowLimit == 0) != (window == 0) || windowLimit < 0 || window < 0:
		return in, errors.New("--window-limit and --window go together, both positive")
	}
	if in.QuotaRPS, err = parseRate(quota); err != nil {
		return in, fmt.Errorf("--quota: %w", err)
	}
	if in.QuotaRPS < 1e-6 {
		return in, fmt.Errorf("--quota: %s is below one request in about 11 days (10⁻⁶/s)", quota)
	}
	if memory != "" {
		if in.MemoryBytes, err = parseBytes(memory); err != nil {
			return in, fmt.Errorf("--memory-budget: %w", err)
		}
		if in.ResponseP99, err = parseBytes(response); err != nil {
			return in, fmt.Errorf("--response-p99: %w", err)
		}
	}
	return in, nil
}

// writeSizing prints the sizing table and the TOML to paste.
func writeSizing(w io.Writer, s *scenarios.Sizing) error {
	in, per, tot := s.Inputs, s.PerInstance, s.Total
	var b strings.Builder
	fmt.Fprintf(&b, "quota %.4g/s shared by %d instance(s); latency p50 %s, p99 %s (lognormal mean %s)\n\n",
		in.QuotaRPS, in.Instances, secsText(in.LatencyP50), secsText(in.LatencyP99), secsText(s.LatencyMean))
	fmt.Fprintf(&b, "%-34s %14s %14s\n", "", "per instance", "total")
	row := func(name, a, t string) { fmt.Fprintf(&b, "%-34s %14s %14s\n", name, a, t) }
	row("token bucket rate (quota × 0.9)", fmt.Sprintf("%.4g/s", per.Rate), fmt.Sprintf("%.4g/s", tot.Rate))
	row("bucket capacity (1 s of burst)", fmt.Sprintf("%.0f", per.Burst), fmt.Sprintf("%.0f", tot.Burst))
	row("concurrency saturating the quota", fmt.Sprintf("%.0f", per.Concurrency), fmt.Sprintf("%.3g", tot.Concurrency))
	if per.MemorySemaphore > 0 {
		row("semaphore from memory", fmt.Sprint(per.MemorySemaphore), fmt.Sprint(tot.MemorySemaphore))
	}
	if per.WindowLimit > 0 {
		row("sliding window limit", fmt.Sprint(per.WindowLimit), fmt.Sprint(tot.WindowLimit))
	}
	row("waiting-line bound", fmt.Sprint(per.WaitingBound), fmt.Sprint(tot.WaitingBound))
	conc := int64(per.Concurrency)
	if per.MemorySemaphore > 0 {
		conc = min(conc, per.MemorySemaphore)
	}
	fmt.Fprintf(&b, "\nper instance, to paste into [client]:\n\n[[client.limiter]]\nname = \"bucket\"\nkind = \"token_bucket\"\nrate = %.4g\nburst = %.0f\nmax_waiting = %d\n\n[[client.limiter]]\nname = \"conns\"\nkind = \"semaphore\"\npermits = %d\n",
		per.Rate, per.Burst, per.WaitingBound, max(1, conc))
	if v := s.Verify; v != nil {
		fmt.Fprintf(&b, "\nverify (simulated, %d instance(s) offered the full quota): %s\n", in.Instances, v.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func secsText(s float64) string { return time.Duration(s * 1e9).Round(time.Microsecond).String() }
