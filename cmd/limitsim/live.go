package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// liveJSON is what `limitsim live --json` prints.
type liveJSON struct {
	Speed     float64          `json:"speed"`
	WallS     float64          `json:"wall_s"`
	Simulated *metrics.Results `json:"simulated"`
	Live      *metrics.Results `json:"live"`
	Diff      []report.LiveRow `json:"differences"`
}

// cmdLive runs a scenario for real against loopback servers and holds it
// against its simulation.
func cmdLive(args []string, stdout, stderr io.Writer, st *session) int {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	fs.SetOutput(stderr)
	speed := fs.Float64("speed", 1, "run `x` times as fast as real time: every duration of the scenario divided by x (1 to 100)")
	duration := fs.String("duration", "", "stop arrivals after this scenario `time` (sets run.duration, e.g. 30s)")
	maxWall := fs.Duration("max-wall", client.DefaultLiveMaxWall, "stop the live run after this much wall-clock `time`, finished or not")
	outDir := fs.String("o", "", "write the live run's outputs and its comparison (report, live.json) into this `directory`")
	asJSON := fs.Bool("json", false, `print {"simulated": ..., "live": ..., "differences": [...]} instead of the table`)
	quiet := fs.Bool("quiet", false, "print no progress on stderr")
	redisAddr := fs.String("redis", "", "keep cluster limiters in the Redis at this `address` (host:port); without it a redis-server is started on a loopback port for the run")
	var sets overrides
	fs.Var(&sets, "set", "override a scenario key: `KEY=VALUE` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 || !(*speed >= 1 && *speed <= 100) || *maxWall <= 0 {
		if err == nil && !(*speed >= 1 && *speed <= 100) {
			fmt.Fprintf(stderr, "limitsim live: --speed %v: want 1 to 100\n", *speed)
		}
		fmt.Fprintln(stderr, "usage: limitsim live SCENARIO [--speed X] [--duration D] [--max-wall D] [--redis ADDR] [-o DIR] [--json] [--quiet] [--set KEY=VALUE ...]")
		return exitUsage
	}
	if *duration != "" {
		sets = append(sets, scenarios.Override{Key: "run.duration", Value: *duration})
	}
	sc, cfg, code := loadBuilt(stderr, pos[0], sets)
	if code != exitOK {
		return code
	}
	clustered := false
	for _, l := range cfg.Limiters {
		clustered = clustered || l.Scope == client.Cluster
		if l.Scope == client.Cluster && l.Store != nil && l.Store.SyncInterval > 0 {
			fmt.Fprintf(stderr, "%s: client.limiter %s: sync_interval runs in simulation only; live, every acquisition calls Redis (remove it with --set client.limiter[%s].sync_interval=)\n", pos[0], l.Name, l.Name)
			return exitInvalid
		}
	}
	if *redisAddr != "" && !clustered {
		fmt.Fprintf(stderr, "warning: --redis has no effect: %s has no limiter with scope = \"cluster\", so nothing is kept in Redis\n", pos[0])
	}
	if *outDir != "" {
		unlock, code := holdOutputDir(stderr, *outDir, "live", args)
		if code != exitOK {
			return code
		}
		defer unlock()
		if err := checkOutputDir(*outDir, sc, "scenario.toml"); err != nil {
			fmt.Fprintf(stderr, "limitsim: -o %s: %v\n", *outDir, err)
			return exitInvalid
		}
	}
	cfg.Run.Replications = 1
	simOut, err := client.Run(cfg, client.Options{Interrupt: &st.interrupt})
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %s: simulating: %v\n", sc.Name, err)
		return exitInternal
	}
	report.Analyze(simOut.Results, simOut.Series)
	defer simOut.Series.Close()
	if err := simOut.Series.Err(); err != nil {
		fmt.Fprintf(stderr, "limitsim: %s: simulating: %v\n", sc.Name, err)
		return exitInternal
	}
	opt := client.LiveOptions{Speed: *speed, MaxWall: *maxWall, Interrupt: &st.interrupt, Redis: *redisAddr}
	var prog *progress
	if !*quiet {
		prog = startRunProgress(stderr, cfg)
		opt.Progress, opt.Clock = &prog.done, prog.clock
	}
	start := time.Now()
	liveOut, err := client.RunLive(context.Background(), cfg, opt)
	wall := time.Since(start)
	if prog != nil {
		prog.finish()
	}
	capped := errors.Is(err, client.ErrLiveCapped)
	if errors.Is(err, client.ErrLiveStalled) {
		fmt.Fprintf(stderr, "limitsim: %s: %v\n", sc.Name, err)
		return exitModel
	}
	if err != nil && !capped {
		fmt.Fprintf(stderr, "limitsim: %s: live run: %v\n", sc.Name, err)
		return exitInternal
	}
	report.Analyze(liveOut.Results, liveOut.Series)
	defer liveOut.Series.Close()
	if err := liveOut.Series.Err(); err != nil {
		fmt.Fprintf(stderr, "limitsim: %s: live run: %v\n", sc.Name, err)
		return exitInternal
	}
	cmp := report.CompareLive(simOut.Results, liveOut.Results, *speed)
	if *outDir != "" {
		if err := writeOutputsLive(*outDir, sc, liveOut, cmp, &st.outputs); err != nil {
			fmt.Fprintf(stderr, "limitsim: %v\n", err)
			return exitInternal
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(liveJSON{Speed: *speed, WallS: wall.Seconds(), Simulated: simOut.Results, Live: liveOut.Results, Diff: cmp.Rows})
	} else {
		fmt.Fprintf(stdout, "%s live at speed %s: %s simulated in %s of wall time\n\n", sc.Name, fmt.Sprint(*speed),
			time.Duration(liveOut.Results.ElapsedS*float64(time.Second)).Round(time.Millisecond), wall.Round(time.Millisecond))
		if err = report.WriteComparison(stdout, cmp); err == nil {
			h := report.Headline(liveOut.Results)
			_, err = fmt.Fprintf(stdout, "\nlive: %s\n  %s\n", h[0], h[1])
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "limitsim: %v\n", err)
		return exitInternal
	}
	if capped {
		fmt.Fprintf(stderr, "limitsim: %s: the live run reached --max-wall %v; its figures cover what ran (outputs marked incomplete)\n", sc.Name, *maxWall)
		return st.signalExit()
	}
	return runExit(stderr, sc.Name, liveOut, st)
}
