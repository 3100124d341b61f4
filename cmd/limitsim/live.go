package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/cobra"

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
	// Note says a stopped live run's counts are left out of Diff.
	Note string `json:"note,omitempty"`
}

// liveOptions are the flags of `limitsim live`.
type liveOptions struct {
	outDir, duration, redis string
	nginx                   string
	speed                   float64
	maxWall                 time.Duration
	asJSON, quiet           bool
	sets                    overrides
}

// newLiveCommand declares `limitsim live`.
func newLiveCommand(env *environment) *cobra.Command {
	var o liveOptions
	cmd := &cobra.Command{
		Use:   "live SCENARIO",
		Short: "Run a scenario for real and hold it against its simulation",
		Long: `Run a scenario for real — HTTP to a loopback server answering with the
scenario's upstream model, the same client code on the wall clock — and hold
it against its simulation.`,
		Example:           "  limitsim live seed-crawler --speed 4 -o live-out",
		Args:              exactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(o.speed >= 1 && o.speed <= 100) {
				return usageError(cmd, "--speed %v: want 1 to 100", o.speed)
			}
			if o.maxWall <= 0 {
				return usageError(cmd, "--max-wall %v: want a positive duration", o.maxWall)
			}
			return cmdLive(env, &o, args[0])
		},
	}
	fs := cmd.Flags()
	addOutputFlag(fs, &o.outDir, "the live run's outputs and its comparison (report, live.json)")
	addJSONFlag(fs, &o.asJSON, `{"simulated": ..., "live": ..., "differences": [...]}`)
	addQuietFlag(fs, &o.quiet)
	addSetFlag(fs, &o.sets, "of the scenario")
	fs.Float64Var(&o.speed, "speed", 1, "run `x` times as fast as real time: every duration of the scenario divided by x (1 to 100)")
	fs.StringVar(&o.duration, "duration", "", "stop arrivals after this scenario `time` (sets run.duration, e.g. 30s)")
	fs.DurationVar(&o.maxWall, "max-wall", client.DefaultLiveMaxWall, "stop the live run after this much wall-clock `time`, finished or not")
	fs.StringVar(&o.nginx, "nginx", "", "put a real nginx (this `path`, or auto: nginx on PATH or in /usr/sbin) in front of the loopback server, configured from the scenario's nginx quota kinds, which it then enforces in their place (config written to -o as nginx.conf)")
	fs.StringVar(&o.redis, "redis", "", "keep cluster limiters in the Redis at this `address` (host:port); without it a redis-server is started on a loopback port for the run")
	return cmd
}

// cmdLive runs a scenario for real against loopback servers and holds it
// against its simulation.
func cmdLive(env *environment, o *liveOptions, path string) error {
	stdout, stderr, st := env.stdout, env.stderr, env.session
	sets := o.sets
	if o.duration != "" {
		sets = append(sets, scenarios.Override{Key: "run.duration", Value: o.duration, Flag: "--duration"})
	}
	sc, cfg, err := loadBuilt(path, sets)
	if err != nil {
		return err
	}
	if err := checkLiveLimiters(stderr, path, cfg, o.redis); err != nil {
		return err
	}
	ng, err := liveNginx(path, cfg, o)
	if err != nil {
		return err
	}
	if o.outDir != "" {
		unlock, err := holdOutputDir(o.outDir, "live", env.args)
		if err != nil {
			return err
		}
		defer unlock()
		if err := checkOutputDir(o.outDir, sc, "scenario.toml"); err != nil {
			return invalidInput(fmt.Errorf("-o %s: %w", o.outDir, err))
		}
	}
	cfg.Run.Replications = 1
	simOut, err := client.Run(cfg, client.Options{Interrupt: &st.interrupt})
	if err != nil {
		return internalError(fmt.Errorf("%s: simulating: %w", sc.Name, err))
	}
	report.Analyze(simOut.Results, simOut.Series)
	defer simOut.Series.Close()
	if err := simOut.Series.Err(); err != nil {
		return internalError(fmt.Errorf("%s: simulating: %w", sc.Name, err))
	}
	opt := client.LiveOptions{Speed: o.speed, MaxWall: o.maxWall, Interrupt: &st.interrupt, Redis: o.redis, Nginx: ng}
	var prog *progress
	if !o.quiet {
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
	if err := liveRunError(sc.Name, err); err != nil {
		return err
	}
	report.Analyze(liveOut.Results, liveOut.Series)
	defer liveOut.Series.Close()
	if err := liveOut.Series.Err(); err != nil {
		return internalError(fmt.Errorf("%s: live run: %w", sc.Name, err))
	}
	cmp := report.CompareLive(simOut.Results, liveOut.Results, o.speed)
	if o.outDir != "" {
		nginxConf := ""
		if ng != nil {
			nginxConf = ng.Config
		}
		if err := writeOutputsLive(o.outDir, sc, liveOut, cmp, nginxConf, &st.outputs); err != nil {
			return internalError(err)
		}
	}
	name := sc.Name + " live"
	if ng != nil {
		name += " behind " + ng.Binary
	}
	if err := printLive(stdout, o, name, wall, simOut, liveOut, cmp); err != nil {
		return internalError(err)
	}
	if capped {
		return st.stopped(fmt.Errorf("%s: the live run reached --max-wall %v; its figures cover what ran (outputs marked incomplete)", sc.Name, o.maxWall))
	}
	return runExit(sc.Name, liveOut, st)
}

// checkLiveLimiters refuses limiters live mode cannot run as simulated
// (an invalid input) and warns of a --redis nothing uses.
func checkLiveLimiters(stderr io.Writer, path string, cfg *client.Config, redis string) error {
	if cfg.Retry.AttemptTimeout > 0 {
		return invalidInput(verbatim(fmt.Errorf("%s: client.retry.attempt_timeout is simulated only: live, an abandoned HTTP attempt is not modeled (remove it with --set client.retry.attempt_timeout=)", path)))
	}
	clustered := false
	for _, l := range cfg.Limiters {
		clustered = clustered || l.Scope == client.Cluster
		if l.Scope != client.Cluster || l.Store == nil {
			continue
		}
		if l.Store.SyncInterval > 0 {
			return invalidInput(verbatim(fmt.Errorf("%s: client.limiter %s: sync_interval runs in simulation only; live, every acquisition calls Redis (remove it with --set client.limiter[%s].sync_interval=)", path, l.Name, l.Name)))
		}
		if l.Store.Errors > 0 {
			return invalidInput(verbatim(fmt.Errorf("%s: client.limiter %s: store_errors fails the simulated store's calls on purpose; live calls a real Redis, which does not, so the two would not compare (remove it with --set client.limiter[%s].store_errors=)", path, l.Name, l.Name)))
		}
	}
	if redis != "" && !clustered {
		fmt.Fprintf(stderr, "warning: --redis has no effect: %s has no limiter with scope = \"cluster\", so nothing is kept in Redis\n", path)
	}
	if _, _, err := net.SplitHostPort(redis); redis != "" && err != nil {
		return invalidInput(fmt.Errorf("--redis %s: want host:port: %w", redis, err))
	}
	return nil
}

// liveNginx is the nginx --nginx names, checked before anything runs:
// nil without the flag; an invalid input when nginx is not found or the
// scenario has nothing nginx can enforce as simulated.
func liveNginx(path string, cfg *client.Config, o *liveOptions) (*client.LiveNginx, error) {
	if o.nginx == "" {
		return nil, nil
	}
	if _, err := client.NginxConfig(cfg, o.speed, "127.0.0.1:1", "127.0.0.1:2"); err != nil {
		return nil, invalidInput(fmt.Errorf("%s: --nginx: %w", path, err))
	}
	bin, err := client.FindNginx(o.nginx)
	if err != nil {
		return nil, invalidInput(fmt.Errorf("--nginx %s: %w", o.nginx, err))
	}
	return &client.LiveNginx{Binary: bin}, nil
}

// printLive prints the live run against its simulation: the JSON of
// --json, or the comparison table and the live run's headline under a
// title beginning with what (the scenario, live, and behind what).
func printLive(stdout io.Writer, o *liveOptions, what string, wall time.Duration, simOut, liveOut *client.Outcome, cmp *report.LiveComparison) error {
	if o.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(liveJSON{Speed: o.speed, WallS: wall.Seconds(), Simulated: simOut.Results, Live: liveOut.Results, Diff: cmp.Rows, Note: cmp.Note})
	}
	fmt.Fprintf(stdout, "%s at speed %s: %s simulated in %s of wall time\n\n", what, fmt.Sprint(o.speed),
		time.Duration(liveOut.Results.ElapsedS*float64(time.Second)).Round(time.Millisecond), wall.Round(time.Millisecond))
	if err := report.WriteComparison(stdout, cmp); err != nil {
		return err
	}
	h := report.Headline(liveOut.Results)
	_, err := fmt.Fprintf(stdout, "\nlive: %s\n  %s\n", h[0], h[1])
	return err
}

// liveRunError is the exit of a live run that ended with err: nil when it
// finished or reached --max-wall (its figures cover what ran), a model
// error when it stalled, invalid input when its store or its server
// cannot be used (--redis names no Redis, none is installed, --nginx
// names no working nginx) or the scenario asks what live cannot run,
// internal otherwise.
func liveRunError(name string, err error) error {
	switch {
	case err == nil || errors.Is(err, client.ErrLiveCapped):
		return nil
	case errors.Is(err, client.ErrLiveStalled):
		return &exitError{code: exitModel, err: fmt.Errorf("%s: %w", name, err)}
	case errors.Is(err, client.ErrLiveStore), errors.Is(err, client.ErrLiveServer), errors.Is(err, client.ErrConfig):
		return invalidInput(fmt.Errorf("%s: live run: %w", name, err))
	}
	return internalError(fmt.Errorf("%s: live run: %w", name, err))
}
