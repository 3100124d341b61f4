package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var updateCLI = flag.Bool("update-cli", false, "rewrite docs/cli.md from the commands' declarations")

// docs/cli.md is generated from the commands' declarations and must be in
// step with them: a flag added, renamed or re-explained changes it.
func TestCLIReference(t *testing.T) {
	var b bytes.Buffer
	root := newRootCommand(&environment{stdout: io.Discard, stderr: io.Discard, session: new(session)})
	if err := cliReference(&b, root); err != nil {
		t.Fatal(err)
	}
	const path = "../../docs/cli.md"
	if *updateCLI {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("docs/cli.md is out of step with the commands: go test ./cmd/limitsim -run TestCLIReference -update-cli\n%s", firstDifference(string(want), b.String()))
	}
	// Every command and every flag of every command is in it.
	for _, c := range referencedCommands(root) {
		if !strings.Contains(b.String(), "\n## "+c.CommandPath()+"\n") {
			t.Errorf("no section for %s", c.CommandPath())
		}
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(b.String(), "`--"+f.Name+"`") {
				t.Errorf("%s: no row for --%s", c.CommandPath(), f.Name)
			}
		})
	}
	// The table of run names the value and the default of a flag.
	if !strings.Contains(b.String(), "| `--trace-requests` | n | `2000` |") {
		t.Errorf("run's --trace-requests row lacks its value name or default")
	}
}
