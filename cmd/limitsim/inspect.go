package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// newValidateCommand declares `limitsim validate`.
func newValidateCommand(env *environment) *cobra.Command {
	var sets overrides
	cmd := &cobra.Command{
		Use:               "validate SCENARIO",
		Short:             "Check a scenario without simulating it",
		Long:              "Check a scenario file without simulating: every problem with its file, line and key.",
		Example:           "  limitsim validate mine.toml",
		Args:              exactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			sc, err := load(args[0], sets)
			if err != nil {
				return loadError(err)
			}
			fmt.Fprintf(env.stdout, "%s: ok (%s)\n", args[0], sc.Name)
			for _, w := range sc.Warnings {
				fmt.Fprintf(env.stdout, "warning: %s\n", w)
			}
			return nil
		},
	}
	addSetFlag(cmd.Flags(), &sets, "of the scenario")
	return cmd
}

// newScenariosCommand declares `limitsim scenarios` and `scenarios show`.
func newScenariosCommand(env *environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "scenarios",
		Short:   "List the bundled example scenarios",
		Long:    "List the bundled example scenarios with the first sentence of each one's description; 'scenarios show NAME' prints one.",
		Example: "  limitsim scenarios\n  limitsim scenarios show seed-crawler",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			exs, err := scenarios.Examples()
			if err != nil {
				return internalError(err)
			}
			for _, e := range exs {
				fmt.Fprintf(env.stdout, "%-28s %s\n", e.Name, firstSentence(e.Description))
			}
			return nil
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:               "show NAME",
		Short:             "Print a bundled scenario's TOML",
		Example:           "  limitsim scenarios show seed-crawler > mine.toml",
		Args:              exactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(_ *cobra.Command, args []string) error {
			src, err := scenarios.ExampleSource(args[0])
			if err != nil {
				return invalidInput(err)
			}
			env.stdout.Write(src)
			return nil
		},
	})
	return cmd
}

// sentenceEnd is a full stop that ends a sentence: followed by white space
// or the end, so "0.5" and "queue.put" do not end one.
var sentenceEnd = regexp.MustCompile(`\.(\s|$)`)

// firstSentence is the first sentence of a description, on one line.
func firstSentence(description string) string {
	text := strings.Join(strings.Fields(description), " ")
	if loc := sentenceEnd.FindStringIndex(text); loc != nil {
		text = text[:loc[0]]
	}
	return text
}

// newReportCommand declares `limitsim report`.
func newReportCommand(env *environment) *cobra.Command {
	return &cobra.Command{
		Use:     "report DIR",
		Short:   "Redraw a finished run's charts and reports",
		Long:    "Redraw the charts and reports of a finished run from its output folder (metrics.json and timeseries.csv), without simulating again.",
		Example: "  limitsim report out",
		Args:    exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdReport(env, args[0])
		},
	}
}

// cmdReport redraws the charts and reports of a finished run from its
// metrics.json and timeseries.csv, without simulating again.
func cmdReport(env *environment, dir string) error {
	stdout, stderr := env.stdout, env.stderr
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() { // else ReadRun says what is wrong
		unlock, err := holdOutputDir(dir, "report", env.args)
		if err != nil {
			return err
		}
		defer unlock()
	}
	r, s, scenario, err := report.ReadRun(dir)
	if err != nil {
		return invalidInput(err)
	}
	_, err = os.Stat(filepath.Join(dir, incompleteMarker))
	incomplete := err == nil
	switch {
	case incomplete && r.Stop.Kind == metrics.Interrupted:
		fmt.Fprintf(stderr, "limitsim: %s carries %s: the run that wrote it was interrupted; the report covers it up to t=%.3fs simulated\n", dir, incompleteMarker, r.ElapsedS)
	case incomplete:
		fmt.Fprintf(stderr, "limitsim: %s carries %s: the run that wrote it stopped before every output was in place; the report is drawn from the data files as they are\n", dir, incompleteMarker)
	}
	live, replay, err := report.ReadSidecars(dir)
	if err != nil {
		return invalidInput(err)
	}
	report.Analyze(r, s)
	doc, err := report.Build(r, s, scenario)
	if err != nil {
		return internalError(err)
	}
	// A live run's or a replay's section stays, with the replay's chart.
	doc.Live, doc.Replay = live, replay
	if replay != nil {
		c, err := report.ReplayChart(replay)
		if err != nil {
			return internalError(err)
		}
		doc.Charts = append(doc.Charts, c)
	}
	f := report.Folder{Dir: dir, FS: env.session.fsys}
	redraw := func() error {
		if err := doc.WriteFilesTo(f, nil); err != nil {
			return err
		}
		return report.PruneRedrawn(dir, doc)
	}
	if err := writeMarked(f, incomplete, redraw); err != nil {
		return outputsFailed("", dir, err)
	}
	fmt.Fprintf(stdout, "wrote %s and %s with %d charts\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"), len(doc.Charts))
	return nil
}
