package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCommand declares `limitsim version` (and --version prints the
// same line).
func newVersionCommand(env *environment) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version and the Go toolchain it was built with",
		Example: "  limitsim version",
		Args:    cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(env.stdout, versionLine())
		},
	}
}

// versionLine is the module version, the commit when known, and the Go
// version: "limitsim v1.2.0 abc123 (go1.26.8)".
func versionLine() string {
	version, commit, goVersion := "(devel)", "", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = " " + s.Value
			}
		}
	}
	return fmt.Sprintf("limitsim %s%s (%s)", version, commit, goVersion)
}
