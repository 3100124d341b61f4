package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim/client"
)

// benchOptions are the flags of `limitsim bench`.
type benchOptions struct {
	requests, rounds  int
	seed              uint64
	scenario, compare string
	reports           bool
}

// newBenchCommand declares `limitsim bench`.
func newBenchCommand(env *environment) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time 'limitsim run' on a scenario, optionally against the reference implementations",
		Long: `Time what users run — a scenario through 'limitsim run''s own path: load,
build, simulate, analyse, summarise, and with --reports every output file —
and optionally the bespoke reference implementations of the same model,
alternating, with ratios.`,
		Example: "  limitsim bench -n 1000000 --compare ../shared/bench/reference-model",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.requests < 1 || o.rounds < 1 {
				return usageError(cmd, "--requests and --rounds must be at least 1")
			}
			return cmdBench(env, &o)
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&o.requests, "requests", "n", 1_000_000, "requests to simulate")
	fs.Uint64Var(&o.seed, "seed", 1, "the scenario's seed")
	fs.StringVar(&o.scenario, "scenario", "reference-model", "the scenario to time (a file or a bundled name)")
	fs.BoolVar(&o.reports, "reports", false, "also write every output of -o (charts, reports, CSV) into a temporary folder")
	fs.StringVar(&o.compare, "compare", "", "also run the reference implementations in this `folder` (go_baseline/, simpy_model.py) and print ratios")
	fs.IntVar(&o.rounds, "rounds", 3, "with --compare: rounds, each running every implementation once; medians are reported")
	return cmd
}

// cmdBench times what users run and, with --compare, the reference
// implementations of the same model.
func cmdBench(env *environment, o *benchOptions) error {
	stdout := env.stdout
	n, seed, scenario, reports, compare, rounds := &o.requests, &o.seed, &o.scenario, &o.reports, &o.compare, &o.rounds
	sets := overrides{{Key: "run.requests", Value: int64(*n)}, {Key: "run.seed", Value: int64(*seed)}, {Key: "run.duration"}}
	if _, err := load(*scenario, sets); err != nil {
		return loadError(err)
	}
	var baseline, simpy string
	if *compare != "" {
		// The bespoke loop is built into a folder of this invocation's
		// own: two benches at once do not overwrite each other's binary.
		work, err := os.MkdirTemp("", "limitsim-bench-*")
		if err != nil {
			return internalError(fmt.Errorf("limitsim bench: %w", err))
		}
		defer os.RemoveAll(work)
		if baseline, simpy, err = prepareReferences(*compare, work); err != nil {
			return invalidInput(fmt.Errorf("limitsim bench: --compare: %w", err))
		}
	}
	var ours, bespoke, sp []float64
	for range *rounds {
		line, rate, err := benchProduct(*scenario, sets, *reports, &env.session.interrupt)
		if env.session.interrupt.Load() {
			return env.session.stopped(fmt.Errorf("limitsim bench: interrupted: a round cut short times nothing"))
		}
		if err != nil {
			if ee := (*exitError)(nil); errors.As(err, &ee) {
				return &exitError{code: ee.code, err: fmt.Errorf("limitsim bench: %w", ee.err)}
			}
			return internalError(fmt.Errorf("limitsim bench: %w", err))
		}
		fmt.Fprintln(stdout, line)
		ours = append(ours, rate)
		if *compare == "" {
			break
		}
		for _, ref := range []struct {
			cmd   []string
			rates *[]float64
		}{{[]string{baseline, "-n", strconv.Itoa(*n), "-seed", strconv.FormatUint(*seed, 10)}, &bespoke},
			{[]string{simpy, filepath.Join(*compare, "simpy_model.py"), "-n", strconv.Itoa(max(1, *n/10))}, &sp}} {
			if ref.cmd[0] == "" {
				continue
			}
			line, rate, err := runReference(ref.cmd)
			if err != nil {
				return internalError(fmt.Errorf("limitsim bench: %s: %w", filepath.Base(ref.cmd[0]), err))
			}
			fmt.Fprintln(stdout, line)
			*ref.rates = append(*ref.rates, rate)
		}
	}
	if *compare != "" {
		m := median(ours)
		fmt.Fprintf(stdout, "limitsim %.3g req/s (median of %d)", m, len(ours))
		if len(bespoke) > 0 {
			fmt.Fprintf(stdout, "; bespoke loop %.3g req/s: limitsim at %.2f×", median(bespoke), m/median(bespoke))
			if len(ours) > 1 {
				lo, hi := ratioRange(ours, bespoke)
				fmt.Fprintf(stdout, " (single rounds %.2f–%.2f×)", lo, hi)
			}
		}
		if len(sp) > 0 {
			fmt.Fprintf(stdout, "; SimPy %.3g req/s: limitsim at %.0f×", median(sp), m/median(sp))
		} else if _, err := os.Stat(filepath.Join(*compare, "simpy_model.py")); err != nil {
			fmt.Fprintf(stdout, "; SimPy not run (%s has no simpy_model.py)", *compare)
		} else {
			fmt.Fprint(stdout, "; SimPy not run (python3 with the simpy module is missing: Debian's python3-simpy3)")
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// ratioRange returns the least and the greatest of the rounds' own ratios
// a[i] ÷ b[i]: on a shared machine the two sides of one round run under
// the same conditions, and the spread says how far to trust the median.
func ratioRange(a, b []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range min(len(a), len(b)) {
		r := a[i] / b[i]
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

// benchProduct runs the scenario the way `limitsim run` does and returns
// its line and its requests per wall second.
func benchProduct(scenario string, sets overrides, reports bool, interrupt *atomic.Bool) (string, float64, error) {
	runtime.GC()
	start := time.Now()
	sc, err := load(scenario, sets)
	if err != nil {
		return "", 0, err
	}
	cfg, err := sc.Build()
	if err != nil {
		return "", 0, err
	}
	out, err := client.Run(cfg, client.Options{SeriesUnread: !reports, Interrupt: interrupt})
	if err != nil {
		return "", 0, err
	}
	// A run that stalled or that a guard stopped did not do the work it
	// was timed for: its rate is no measure.
	switch {
	case out.Stall != nil:
		return "", 0, &exitError{code: exitModel, err: fmt.Errorf("%s: %w: a run stopped early times nothing", sc.Name, out.Stall)}
	case out.Guard != nil:
		return "", 0, &exitError{code: exitGuard, err: fmt.Errorf("%s: %w: a run stopped early times nothing", sc.Name, out.Guard)}
	}
	report.Analyze(out.Results, out.Series)
	defer out.Series.Close()
	if err := report.WriteText(io.Discard, out.Results); err != nil {
		return "", 0, err
	}
	if err := out.Series.Err(); err != nil {
		return "", 0, err
	}
	if reports {
		dir, err := os.MkdirTemp("", "limitsim-bench-*")
		if err != nil {
			return "", 0, err
		}
		defer os.RemoveAll(dir)
		if err := writeOutputs(dir, sc, out, new(atomic.Pointer[outputState])); err != nil {
			return "", 0, err
		}
	}
	wall := time.Since(start).Seconds()
	r := out.Results
	q := r.Requests
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rate := float64(q.Arrived) / wall
	var meanWait float64
	for _, l := range r.Limiters {
		meanWait += l.WaitGrantedS.Mean
	}
	line := fmt.Sprintf("impl=limitsim scenario=%s n=%d seed=%d completed=%d rejected=%d http429=%d mean_wait_s=%.6f "+
		"mean_inflight=%.6f sim_time_s=%.3f events=%d events_per_req=%.2f run_wall_s=%.3f req_per_s=%.0f events_per_s=%.0f peak_rss_kib=%d reports=%v",
		r.Scenario, q.Arrived, r.Seed, q.Succeeded, q.Rejected, q.Responses429, meanWait, r.InFlight.Mean, r.ElapsedS, r.Events,
		float64(r.Events)/float64(max(1, q.Arrived)), wall, rate, float64(r.Events)/wall, ru.Maxrss, reports)
	return line, rate, nil
}

// prepareReferences builds the bespoke Go loop of dir into the folder work
// and, if dir has simpy_model.py, finds a python3 with SimPy to run it; an
// implementation that cannot run is left out ("").
func prepareReferences(dir, work string) (baseline, simpy string, err error) {
	if _, err := os.Stat(filepath.Join(dir, "go_baseline")); err != nil {
		return "", "", fmt.Errorf("%s has no go_baseline/: %w", dir, err)
	}
	bin := filepath.Join(work, "go-baseline")
	build := exec.Command("go", "build", "-o", bin, "./go_baseline")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building go_baseline: %v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "simpy_model.py")); err != nil {
		return bin, "", nil
	}
	// The first python3 on the PATH that has SimPy (Debian's python3-simpy3
	// installs it for /usr/bin/python3, which another python3 may shadow).
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		py := filepath.Join(dir, "python3")
		if _, err := os.Stat(py); err == nil && exec.Command(py, "-c", "import simpy").Run() == nil {
			simpy = py
			break
		}
	}
	return bin, simpy, nil
}

var reqPerS = regexp.MustCompile(`req_per_s=([0-9.e+]+)`)

// runReference runs one reference implementation and reads its speed.
func runReference(cmd []string) (string, float64, error) {
	var out bytes.Buffer
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return "", 0, fmt.Errorf("%v: %s", err, out.String())
	}
	line := string(bytes.TrimSpace(out.Bytes()))
	m := reqPerS.FindStringSubmatch(line)
	if m == nil {
		return "", 0, fmt.Errorf("no req_per_s in %q", line)
	}
	rate, err := strconv.ParseFloat(m[1], 64)
	return line, rate, err
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
