package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// environment is what every command runs with: where it prints, the
// session the signal handler shares, and the command line as given.
type environment struct {
	stdout, stderr io.Writer
	session        *session
	// args is the command line after the program's name, recorded in the
	// lock of an output folder.
	args []string
}

// usageError is a mistake in how a command was called (exit 1): the
// message, then the command's usage line and where its flags are listed.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &exitError{code: exitUsage, err: fmt.Errorf("%s\n%s", msg, usageHint(cmd))}
}

// usageHint is the line printed under a usage error.
func usageHint(cmd *cobra.Command) string {
	return fmt.Sprintf("usage: %s\nRun '%s --help' for its flags and an example.", cmd.UseLine(), cmd.CommandPath())
}

// prefixed is msg as limitsim prints it: after "limitsim: ", unless it
// already names the command ("limitsim run: ...").
func prefixed(msg string) string {
	if strings.HasPrefix(msg, "limitsim ") {
		return msg
	}
	return "limitsim: " + msg
}

// newRootCommand declares the command line: every command once, with its
// use, help, example and flags, from which help, usage, completion and
// docs/cli.md are all drawn.
func newRootCommand(env *environment) *cobra.Command {
	root := &cobra.Command{
		Use:   "limitsim",
		Short: "Simulate rate limiters, queues and 429 policies against modeled upstreams",
		Long: `limitsim simulates rate limiters, queues and 429 policies against modeled upstreams.

SCENARIO is a TOML file, or the name of a bundled example (see 'limitsim scenarios').
docs/scenario.md is the scenario reference, docs/metrics.md the metric catalogue,
and docs/cli.md lists every command's flags.`,
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// No command: the usage, on stderr, as a usage error.
			cmd.SetOut(env.stderr)
			cmd.Usage()
			return &exitError{code: exitUsage}
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if name := emptyTextFlag(cmd.Flags()); name != "" {
				return usageError(cmd, "%s is given an empty value", name)
			}
			return nil
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(flagUsageError)
	root.AddGroup(
		&cobra.Group{ID: "simulate", Title: "Simulate:"},
		&cobra.Group{ID: "plan", Title: "Size and plan:"},
		&cobra.Group{ID: "inspect", Title: "Inspect and fit:"},
	)
	for _, c := range []*cobra.Command{newRunCommand(env), newLiveCommand(env), newCompareCommand(env), newReplayCommand(env)} {
		c.GroupID = "simulate"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newSizeCommand(env), newPlanCommand(env), newMergeCommand(env), newCalibrateCommand(env)} {
		c.GroupID = "plan"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newValidateCommand(env), newScenariosCommand(env), newReportCommand(env), newFitCommand(env)} {
		c.GroupID = "inspect"
		root.AddCommand(c)
	}
	root.AddCommand(newBenchCommand(env), newVersionCommand(env))
	root.SetHelpCommand(newHelpCommand())
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	// Declared now rather than at Execute, so that help, the generated
	// docs and the tests see every command.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = "  source <(limitsim completion bash)"
			c.Args, c.RunE = cobra.ArbitraryArgs, needsSubcommand
		}
	}
	return root
}

// newHelpCommand is `limitsim help [COMMAND]`: an unknown command is a
// usage error with the nearest names, not a help page.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Help about any command",
		Long:  "Help about any command: what it does, its usage, its flags and an example.",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				names := strings.Join(args, " ")
				msg := fmt.Sprintf("no command %q", names)
				if s := suggestionsFor(target, lastArg(args)); len(s) > 0 {
					msg += "; did you mean " + strings.Join(s, " or ") + "?"
				}
				return usageError(cmd, "%s", msg)
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			target, _, err := cmd.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, c := range target.Commands() {
				if c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					names = append(names, c.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// lastArg is the last of args, or "".
func lastArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[len(args)-1]
}

// flagUsageError turns pflag's complaint about a flag into a usage error
// that names the nearest flag the command has.
func flagUsageError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := unknownFlagName(msg); ok {
		if near := nearestFlag(cmd.Flags(), name); near != "" {
			msg += "; did you mean " + near + "?"
		}
	}
	return usageError(cmd, "%s: %s", cmd.CommandPath(), msg)
}

// unknownFlagName reads the flag's name out of pflag's "unknown flag:
// --name" and "unknown shorthand flag: 'x' in -xyz".
func unknownFlagName(msg string) (string, bool) {
	const long = "unknown flag: --"
	if i := strings.Index(msg, long); i >= 0 {
		return strings.Fields(msg[i+len(long):] + " ")[0], true
	}
	const short = "unknown shorthand flag: '"
	if i := strings.Index(msg, short); i >= 0 {
		// A long flag with one dash (-json) reads as shorthands: suggest
		// from the whole word after "in -".
		if j := strings.Index(msg, " in -"); j >= 0 {
			return strings.TrimLeft(msg[j+len(" in -"):], "-"), true
		}
	}
	return "", false
}

// nearestFlag is the flag of fs closest to name in edit distance, spelt
// --name, or "" when none is within a third of the name's length.
func nearestFlag(fs *pflag.FlagSet, name string) string {
	limit := len(name)/3 + 1
	best, bestDistance := "", limit+1
	fs.VisitAll(func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestDistance {
			best, bestDistance = "--"+f.Name, d
		}
	})
	if bestDistance > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	previous := make([]int, len(b)+1)
	current := make([]int, len(b)+1)
	for j := range previous {
		previous[j] = j
	}
	for i := 1; i <= len(a); i++ {
		current[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			current[j] = min(previous[j]+1, current[j-1]+1, previous[j-1]+cost)
		}
		previous, current = current, previous
	}
	return previous[len(b)]
}

// emptyTextFlag names a text flag given an empty value (-o "", --trace
// ""): taken as not given, it would be silently ignored.
func emptyTextFlag(fs *pflag.FlagSet) string {
	name := ""
	fs.Visit(func(f *pflag.Flag) {
		if name == "" && f.Value.Type() == "string" && strings.TrimSpace(f.Value.String()) == "" {
			name = "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand + "/--" + f.Name
			}
		}
	})
	return name
}

// exactArgs wants n positional arguments, with a usage error naming the
// command otherwise.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError(cmd, "%s takes %d argument%s, got %d", cmd.CommandPath(), n, map[bool]string{true: "", false: "s"}[n == 1], len(args))
		}
		return nil
	}
}

// minArgs wants at least n positional arguments, with a usage error
// naming the command otherwise.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError(cmd, "%s takes at least %d argument%s, got %d", cmd.CommandPath(), n, map[bool]string{true: "", false: "s"}[n == 1], len(args))
		}
		return nil
	}
}

// needsSubcommand is the RunE of a command that only groups others: called
// alone or with an unknown word, it is a usage error naming the nearest.
func needsSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if len(args) == 0 {
		return usageError(cmd, "%s needs a command: %s", cmd.CommandPath(), strings.Join(names, " or "))
	}
	msg := fmt.Sprintf("%s: unknown command %q", cmd.CommandPath(), args[0])
	if s := suggestionsFor(cmd, args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageError(cmd, "%s (%s)", msg, strings.Join(names, ", "))
}

// suggestionsFor is cmd's subcommands near name: within two edits, or
// starting with it (cobra sets the distance on the root only).
func suggestionsFor(cmd *cobra.Command, name string) []string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	return cmd.SuggestionsFor(name)
}
