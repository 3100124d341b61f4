package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
)

// parseRate reads "100/s", "6000/min" or "360000/h" as a number per second.
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

// sizeFlags are the flags of `limitsim size`.
type sizeFlags struct {
	quota, memory, response, costQuota string
	instances                          int
	p50, p99, window                   time.Duration
	windowLimit, costP50, costP99      int64
	asJSON, verify                     bool
}

// newSizeCommand declares `limitsim size`.
func newSizeCommand(env *environment) *cobra.Command {
	var f sizeFlags
	cmd := &cobra.Command{
		Use:   "size --quota N/s --latency-p50 D --latency-p99 D",
		Short: "Size limiters from a published quota and a latency profile",
		Long: `Size limiters from a published quota (and a window limit or a cost quota) and
a latency profile: the article's sizing table and the scenario keys to paste.
With --verify the sized configuration is simulated, and the command exits 5
if the arithmetic does not hold, or if it could not be simulated.`,
		Example: "  limitsim size --quota 5000/h --latency-p50 250ms --latency-p99 2s --instances 3 --verify",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl := cmd.Flags(); !fl.Changed("quota") || !fl.Changed("latency-p50") || !fl.Changed("latency-p99") {
				return usageError(cmd, "limitsim size: --quota, --latency-p50 and --latency-p99 are required")
			}
			return cmdSize(env, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.quota, "quota", "", "the published quota: `N/s`, N/min or N/h (required)")
	fs.IntVar(&f.instances, "instances", 1, "client instances sharing the quota (1 to 10000)")
	fs.DurationVar(&f.p50, "latency-p50", 0, "median latency of one call (required)")
	fs.DurationVar(&f.p99, "latency-p99", 0, "p99 latency of one call (required; above the p50)")
	fs.StringVar(&f.memory, "memory-budget", "", "memory one instance may spend on responses in flight, e.g. `512MiB`")
	fs.StringVar(&f.response, "response-p99", "", "p99 response size, e.g. `2MiB` (with --memory-budget)")
	fs.Int64Var(&f.windowLimit, "window-limit", 0, "a published limit per window, e.g. `5000` (with --window)")
	fs.DurationVar(&f.window, "window", 0, "the window of --window-limit, e.g. 1h")
	fs.StringVar(&f.costQuota, "cost-quota", "", "a published cost quota (tokens, points): `N/min`, N/s or N/h (with --cost-p50 and --cost-p99)")
	fs.Int64Var(&f.costP50, "cost-p50", 0, "median cost of one request, in the cost quota's units, e.g. `1200`")
	fs.Int64Var(&f.costP99, "cost-p99", 0, "p99 cost of one request (above the p50), e.g. `8000`")
	addJSONFlag(fs, &f.asJSON, "the sizing")
	fs.BoolVar(&f.verify, "verify", false, "simulate the sized configuration and say whether the arithmetic holds (exit 5 when it does not, or when it cannot be simulated)")
	return cmd
}

// cmdSize prints the article's sizing table for a published quota.
func cmdSize(env *environment, f sizeFlags) error {
	stdout := env.stdout
	in, err := sizeInputs(f)
	if errors.Is(err, errFlagsTogether) { // flags that do not go together: usage
		return badUsage(fmt.Errorf("limitsim size: %w", err))
	}
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim size: %w", err))
	}
	s, err := scenarios.Size(in)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim size: %w", flagError(err)))
	}
	if f.verify {
		if s.Verify, err = s.Check(&env.session.interrupt); err != nil {
			return internalError(fmt.Errorf("limitsim size: --verify: %w", err))
		}
		if env.session.interrupt.Load() {
			// Stopped (SIGINT, SIGTERM): the sizing table stands, the
			// check proves nothing.
			if err := writeSizing(env.stdout, s); err != nil {
				return internalError(err)
			}
			return env.session.stopped(fmt.Errorf("limitsim size: --verify interrupted: the check proves nothing"))
		}
	}
	if f.asJSON {
		err = printJSON(stdout, s)
	} else {
		err = writeSizing(stdout, s)
	}
	if err != nil {
		return internalError(err)
	}
	return verifyExit(s.Verify)
}

// verifyExit is how `size --verify` ends: exit 5 when the simulated
// check of the sizing does not hold (as an --assert that fails), or when
// it could not be simulated, since nothing was then proven and a script
// gating on --verify must not pass; nil when it holds or was not asked
// for.
func verifyExit(v *scenarios.SizingCheck) error {
	switch {
	case v == nil || v.Simulated && v.Holds:
		return nil
	case !v.Simulated:
		return &exitError{code: exitAssert, err: fmt.Errorf("limitsim size: --verify proves nothing: %s", v.Note)}
	}
	return &exitError{code: exitAssert, err: fmt.Errorf("limitsim size: --verify: the sizing does not hold: %s", v.Note)}
}

// flagError names the flag behind an input the sizing refused.
func flagError(err error) error {
	var ie *scenarios.SizingInputError
	if !errors.As(err, &ie) {
		return err
	}
	flags := map[string]string{"window_limit": "--window-limit", "cost_quota_per_s": "--cost-quota",
		"cost_p50": "--cost-p50", "cost_p99": "--cost-p99", "quota_rps": "--quota", "instances": "--instances"}
	if name, ok := flags[ie.Input]; ok {
		return fmt.Errorf("%s: %s", name, ie.Reason)
	}
	return err
}

// errFlagsTogether is wrapped by sizeInputs' errors about flags given
// without the flag they go with (a usage error, exit 1).
var errFlagsTogether = errors.New("go together: give all or none")

// sizeInputs checks and converts the flags of `limitsim size`.
func sizeInputs(f sizeFlags) (scenarios.SizingInputs, error) {
	in := scenarios.SizingInputs{Instances: f.instances, LatencyP50: f.p50.Seconds(), LatencyP99: f.p99.Seconds(), SafetyMargin: 0.9,
		WindowLimit: f.windowLimit, WindowS: f.window.Seconds(), CostP50: f.costP50, CostP99: f.costP99}
	cost := f.costQuota != "" || f.costP50 != 0 || f.costP99 != 0
	var err error
	switch {
	case f.quota == "":
		return in, errors.New("--quota is required (e.g. 100/s)")
	case f.instances < 1 || f.instances > 10000:
		return in, errors.New("--instances must be from 1 to 10000")
	case f.p50 <= 0 || f.p99 <= f.p50:
		return in, errors.New("--latency-p50 and --latency-p99 are required, with 0 < p50 < p99")
	case (f.memory == "") != (f.response == ""):
		return in, fmt.Errorf("--memory-budget and --response-p99 %w", errFlagsTogether)
	case (f.windowLimit == 0) != (f.window == 0):
		return in, fmt.Errorf("--window-limit and --window %w", errFlagsTogether)
	case f.windowLimit < 0 || f.window < 0:
		return in, errors.New("--window-limit and --window must be positive")
	case f.windowLimit > models.MaxExactLog:
		return in, fmt.Errorf("--window-limit: %d is above %d, the most an exact sliding window holds", f.windowLimit, int64(models.MaxExactLog))
	case f.windowLimit > 0 && f.window < time.Millisecond:
		return in, errors.New("--window: at least 1ms")
	case cost && (f.costQuota == "" || f.costP50 == 0 || f.costP99 == 0):
		return in, fmt.Errorf("--cost-quota, --cost-p50 and --cost-p99 %w", errFlagsTogether)
	case cost && (f.costP50 < 1 || f.costP99 <= f.costP50):
		return in, errors.New("--cost-p50 and --cost-p99: want 1 ≤ p50 < p99")
	case f.costP99 > 1e12:
		return in, errors.New("--cost-p99: at most 10¹²")
	}
	if in.QuotaRPS, err = sizeRate("--quota", f.quota); err != nil {
		return in, err
	}
	if cost {
		if in.CostQuota, err = sizeRate("--cost-quota", f.costQuota); err != nil {
			return in, err
		}
	}
	if f.memory != "" {
		if in.MemoryBytes, err = parseBytes(f.memory); err != nil {
			return in, fmt.Errorf("--memory-budget: %w", err)
		}
		if in.ResponseP99, err = parseBytes(f.response); err != nil {
			return in, fmt.Errorf("--response-p99: %w", err)
		}
	}
	return in, nil
}

// sizeRate reads the rate of flag name, from one in about 11 days to 10⁹
// a second.
func sizeRate(name, text string) (float64, error) {
	r, err := parseRate(text)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", name, err)
	case r < 1e-6:
		return 0, fmt.Errorf("%s: %s is below one in about 11 days (10⁻⁶/s)", name, text)
	case r > 1e9:
		return 0, fmt.Errorf("%s: %s is above 10⁹/s", name, text)
	}
	return r, nil
}

// writeSizing prints the sizing table, the TOML to paste and the check.
func writeSizing(w io.Writer, s *scenarios.Sizing) error {
	in := s.Inputs
	var b strings.Builder
	fmt.Fprintf(&b, "quota %s/s shared by %d instance(s); latency p50 %s, p99 %s (lognormal mean %s)\n",
		report.Number(in.QuotaRPS, 4), in.Instances, secsText(in.LatencyP50), secsText(in.LatencyP99), secsText(s.LatencyMean))
	if in.CostQuota > 0 {
		fmt.Fprintf(&b, "cost quota %s/s; cost of a request p50 %d, p99 %d (lognormal mean %s)\n", report.Number(in.CostQuota, 4), in.CostP50, in.CostP99, report.Number(s.CostMean, 4))
	}
	b.WriteByte('\n')
	writeSizingTable(&b, s)
	fmt.Fprintf(&b, "\n%s requests in flight at the binding quota (Little's Law: quota × mean latency); the limiters are sized for %s requests/s in all.\n",
		report.Number(s.InFlight, 3), report.Number(s.SizedRPS, 4))
	if m := s.PerInstance.MemorySemaphore; m > 0 && m < s.PerInstance.Permits && float64(m) < s.PerInstance.Concurrency {
		most := float64(m) * float64(in.Instances) / s.LatencyMean
		fmt.Fprintf(&b, "Memory binds: %s in flight an instance (the budget ÷ the p99 response) at a mean latency of %s serve at most %s requests/s in all (Little's Law), under the quota's; sized at %s of that, %s/s; raise the memory budget or cut the responses to use the quota.\n",
			report.Grouped(m), secsText(s.LatencyMean), report.Number(most, 4), report.Number(in.SafetyMargin, 2), report.Number(s.SizedRPS, 4))
	}
	if s.Shared != nil {
		fmt.Fprintf(&b, "The quota's second of burst (%s) holds fewer requests than there are instances (%d): a burst of one each would\n"+
			"overrun it, so the instances share one limiter, a GCRA kept in a store such as Redis (scope = \"cluster\").\n", report.Number(math.Max(1, in.QuotaRPS), 4), in.Instances)
	}
	if in.CostQuota > 0 {
		fmt.Fprintf(&b, "Each request reserves %s (the p90 of the costs seen, this until the first) on the cost bucket, settled when its response says what it cost.\n", report.Grouped(s.CostReserve))
	}
	writeLineWait(&b, s)
	fmt.Fprintf(&b, "\nper instance, to paste under [client]:\n\n%s", s.ClientTOML())
	if v := s.Verify; v != nil {
		what := "simulated"
		if !v.Simulated {
			what = "NOT simulated"
		}
		fmt.Fprintf(&b, "\nverify (%s, %d instance(s)): %s\n", what, in.Instances, v.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lineWaitNoted is the drain time of a full waiting line past which size
// says how long a request may wait: the article's acquisition timeout
// ("asyncio.timeout(2)"), against "a request that waits 40 seconds". It
// names no timeout to set: at 1.25/s one of 2 s failed 11% of requests
// offered 90% of the sized rate, where the line alone refused none.
const lineWaitNoted = 2.0

// writeLineWait says how long a full waiting line takes to drain at the
// sized rate when that is longer than lineWaitNoted: the line is bounded
// by its length, and at a slow rate a short line is a long wait.
func writeLineWait(b *strings.Builder, s *scenarios.Sizing) {
	rate := s.SizedRPS / float64(s.Inputs.Instances)
	if rate <= 0 {
		return
	}
	if drain := float64(s.PerInstance.WaitingBound) / rate; drain > lineWaitNoted {
		fmt.Fprintf(b, "A full waiting line (%s an instance) takes %s to drain at the sized rate: a request may wait that long for its turn. "+
			"client.acquire_timeout bounds the wait instead, failing what waits longer; one under that also fails requests offered less than the sized rate, "+
			"so run the configuration with it before relying on it (--verify checks the line, not a timeout).\n",
			report.Grouped(s.PerInstance.WaitingBound), report.Number(drain, 3)+"s")
	}
}

// writeSizingTable prints the figures per instance and in total: each
// total is the sum of the instances' figures, or marked shared.
func writeSizingTable(b *strings.Builder, s *scenarios.Sizing) {
	per, tot := s.PerInstance, s.Total
	row := func(name, a, t string) { fmt.Fprintf(b, "%-42s %14s %16s\n", name, a, t) }
	row("", "per instance", "total")
	if sh := s.Shared; sh != nil {
		row("request rate (quota × 0.9)", "(shared)", report.Number(sh.Rate, 4)+"/s shared")
		row("request burst (1 s of it, whole)", "(shared)", report.Number(sh.Burst, 4)+" shared")
	} else {
		row("token bucket rate (quota × 0.9)", report.Number(per.Rate, 4)+"/s", report.Number(tot.Rate, 4)+"/s")
		row("bucket capacity (1 s of the rate, whole)", report.Number(per.Burst, 4), report.Number(tot.Burst, 4))
	}
	row("concurrency saturating the quota", report.Number(math.Round(per.Concurrency), 4), report.Number(math.Round(tot.Concurrency), 4))
	row("semaphore permits (in flight, p99.9)", report.Grouped(int64(per.Permits)), report.Grouped(int64(tot.Permits)))
	if per.MemorySemaphore > 0 {
		row("semaphore from memory", report.Grouped(int64(per.MemorySemaphore)), report.Grouped(int64(tot.MemorySemaphore)))
	}
	if per.WindowLimit > 0 {
		row(fmt.Sprintf("sliding window limit (%s − %d in flight)", report.Grouped(int64(s.Inputs.WindowLimit)), s.WindowAllowance), report.Grouped(int64(per.WindowLimit)), report.Grouped(int64(tot.WindowLimit)))
	}
	if per.CostBurst > 0 {
		row("cost bucket rate (cost quota × 0.9)", report.Number(per.CostRate, 4)+"/s", report.Number(tot.CostRate, 4)+"/s")
		row("cost bucket capacity (a minute of it)", report.Number(math.Round(per.CostBurst), 4), report.Number(math.Round(tot.CostBurst), 4))
	}
	row("waiting-line bound (1 s, or bursts' depth)", report.Grouped(int64(per.WaitingBound)), report.Grouped(int64(tot.WaitingBound)))
}

func secsText(s float64) string { return time.Duration(s * 1e9).Round(time.Microsecond).String() }
