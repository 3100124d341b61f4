package main

import (
	"flag"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/limitsim/limitsim/internal/refmodel"
)

// cmdBench runs the reference scenario (Poisson 150/s → FIFO bucket 90/s →
// semaphore of 20 → lognormal upstream with a 100/s quota, at most 500
// waiting) for n requests and reports the speed and the peak memory.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1_000_000, "requests to simulate")
	seed := fs.Uint64("seed", 1, "seed")
	if _, err := parse(fs, args); err != nil || *n < 1 {
		fmt.Fprintln(stderr, "usage: limitsim bench [-n REQUESTS] [-seed N]")
		return exitUsage
	}
	cfg := refmodel.Default(*n)
	cfg.Seed = *seed
	start := time.Now()
	r := refmodel.Run(cfg)
	wall := time.Since(start).Seconds()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Fprintf(stdout, "impl=limitsim n=%d seed=%d completed=%d rejected=%d http429=%d mean_wait_s=%.6f p99_wait_s=%.3f "+
		"mean_inflight=%.6f lambdaW=%.6f sim_time_s=%.3f events=%d run_wall_s=%.3f req_per_s=%.0f events_per_s=%.0f peak_rss_kib=%d\n",
		*n, *seed, r.Completed, r.Rejected, r.Throttled, r.MeanWait.Seconds(), r.P99Wait.Seconds(), r.MeanInFlight, r.LambdaW,
		r.Elapsed.Seconds(), r.Events, wall, float64(*n)/wall, float64(r.Events)/wall, ru.Maxrss)
	return exitOK
}
