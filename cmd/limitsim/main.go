package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Exit codes.
const (
	exitOK        = 0
	exitUsage     = 1
	exitInvalid   = 2
	exitModel     = 3
	exitGuard     = 4
	exitAssert    = 5
	exitUntrusted = 6 // calibrate's verdict: not trusted for planning
	exitInternal  = 70
	// exitSignal and exitTerminated: stopped by SIGINT (Ctrl-C) or by
	// SIGTERM (what Kubernetes and CI runners send), as shells report
	// them (128 + the signal's number).
	exitSignal     = 130
	exitTerminated = 143
)

func main() {
	// A first Ctrl-C stops the run at the next event boundary (outputs are
	// written, marked incomplete); a second exits at once and says what is
	// on disk.
	var st session
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := (<-sigs).(syscall.Signal); ok {
			st.signal.Store(int32(sig))
		}
		st.interrupt.Store(true)
		<-sigs
		if msg := st.secondInterrupt(); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(st.signalExit())
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, &st))
}

// session is what the signal handler shares with the command: the
// interrupt flag, and how far the outputs of -o have been written.
type session struct {
	interrupt atomic.Bool
	// signal is the number of the first signal received (0 before one).
	signal  atomic.Int32
	outputs atomic.Pointer[outputState]
	// fsys is the file system output folders are written to: nil for
	// the operating system's (a test's fails on demand).
	fsys report.FS
}

// signalExit is the exit code of a command the first signal stopped:
// 143 for SIGTERM, 130 for SIGINT (and for a stop with no signal named).
func (s *session) signalExit() int {
	if s.signal.Load() == int32(syscall.SIGTERM) {
		return exitTerminated
	}
	return exitSignal
}

// stopped is the error of a command the first signal stopped (exit 130,
// or 143 for SIGTERM): err says how far it got.
func (s *session) stopped(err error) error {
	return &exitError{code: s.signalExit(), err: err}
}

// secondInterrupt is what a second Ctrl-C prints before exiting at once.
func (s *session) secondInterrupt() string {
	o := s.outputs.Load()
	switch {
	case o == nil:
		return "limitsim: second interrupt: exiting at once; no output was written"
	case o.stage == writingData:
		return fmt.Sprintf("limitsim: second interrupt: exiting at once; %s is incomplete (%s marks it) and holds no results of this run", o.dir, incompleteMarker)
	case o.stage == planJournaled:
		return fmt.Sprintf("limitsim: second interrupt: exiting at once; %s is incomplete (%s marks it), its finished runs journaled: '%s' continues the plan", o.dir, incompleteMarker, resumeCommand(o.dir))
	case o.stage == dataWritten:
		return fmt.Sprintf("limitsim: second interrupt: report not written; metrics.json and timeseries.csv in %s are complete up to t=%.3fs simulated (%s marks the folder)", o.dir, o.elapsedS, incompleteMarker)
	}
	return ""
}

// run is the whole command, testable without a process.
func run(args []string, stdout, stderr io.Writer, st *session) (code int) {
	scenario := ""
	if len(args) > 1 {
		scenario = args[1]
	}
	defer func() {
		if v := recover(); v != nil {
			code = exitCodeOf(internalError(fmt.Errorf("internal error while running %q: %v (please report it with the scenario)", scenario, v)), stderr)
			if os.Getenv("LIMITSIM_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
		}
	}()
	root := newRootCommand(&environment{stdout: stdout, stderr: stderr, session: st, args: args})
	root.SetArgs(args)
	return exitCodeOf(root.Execute(), stderr)
}

// load reads a scenario file, or a bundled example by name, with the
// overrides of --set applied.
func load(arg string, sets overrides) (*scenarios.Scenario, error) { return loadWith(nil, arg, sets) }

// loadWith is load reading through ld (see scenarios.Loader; nil reads
// every file afresh).
func loadWith(ld *scenarios.Loader, arg string, sets overrides) (*scenarios.Scenario, error) {
	return ld.Open(arg, sets)
}

// loadError is the error of a scenario that does not load or build
// (exit 2): each of its problems as it is, then how many there are.
func loadError(err error) error {
	var probs scenarios.Problems
	if !errors.As(err, &probs) {
		return invalidInput(err)
	}
	msgs := make(messageList, 0, len(probs)+1)
	for _, p := range probs {
		msgs = append(msgs, verbatim(errors.New(p.String())))
	}
	msgs = append(msgs, fmt.Errorf("%d %s; nothing was run", len(probs), map[bool]string{true: "problem", false: "problems"}[len(probs) == 1]))
	return invalidInput(msgs)
}

// loadBuilt loads a scenario and builds its client configuration.
func loadBuilt(name string, sets overrides) (*scenarios.Scenario, *client.Config, error) {
	sc, err := load(name, sets)
	if err != nil {
		return nil, nil, loadError(err)
	}
	cfg, err := sc.Build()
	if err != nil {
		return nil, nil, loadError(err)
	}
	return sc, cfg, nil
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
