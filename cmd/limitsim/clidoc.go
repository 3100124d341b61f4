package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cliReference writes docs/cli.md: every command with its usage, what it
// does, an example and a table of its flags, drawn from the declarations
// of newRootCommand (a test keeps the file in step).
func cliReference(w io.Writer, root *cobra.Command) error {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("Generated from the commands' declarations by `go test ./cmd/limitsim -run TestCLIReference -update-cli`; do not edit.\n")
	b.WriteString("Flags are GNU-style: `--name value` or `--name=value`, and may come before or after the arguments.\n")
	b.WriteString("Exit codes, output files and the `--set` and `--assert` syntax are in [commands.md](commands.md).\n\n")
	commands := referencedCommands(root)
	for _, c := range commands {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	for _, c := range commands {
		writeCommandReference(&b, c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// referencedCommands is every command of the tree in the order a reader
// meets them, the root's own help and completion's shells left out.
func referencedCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Parent().Name() == "completion" {
				continue
			}
			out = append(out, sub)
			walk(sub)
		}
	}
	walk(root)
	return out
}

// writeCommandReference writes one command's section.
func writeCommandReference(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n", c.CommandPath())
	fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	long := c.Long
	if long == "" {
		long = c.Short + "."
	}
	fmt.Fprintf(b, "%s\n", strings.TrimSpace(long))
	if c.Example != "" {
		fmt.Fprintf(b, "\nExample:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
	}
	var rows []string
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		rows = append(rows, flagRow(f))
	})
	if len(rows) > 0 {
		b.WriteString("\n| flag | value | default | meaning |\n| --- | --- | --- | --- |\n")
		b.WriteString(strings.Join(rows, ""))
	}
}

// flagRow is a flag's row in a command's table.
func flagRow(f *pflag.Flag) string {
	name := "`--" + f.Name + "`"
	if f.Shorthand != "" {
		name = "`-" + f.Shorthand + "`, " + name
	}
	valueName, usage := pflag.UnquoteUsage(f)
	if f.Value.Type() == "bool" {
		valueName = ""
	}
	def := f.DefValue
	switch def {
	case "", "false", "[]":
		def = ""
	default:
		def = "`" + def + "`"
	}
	if f.Name == "workers" {
		def = "the processors" // runtime.GOMAXPROCS: not the machine's that wrote the file
	}
	if strings.Contains(usage, "(repeatable") {
		def = ""
	}
	return fmt.Sprintf("| %s | %s | %s | %s |\n", name, valueName, def, strings.ReplaceAll(usage, "|", `\|`))
}

// anchor is the GitHub anchor of a heading.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}
