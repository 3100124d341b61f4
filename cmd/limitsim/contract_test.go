package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/scenarios"
)

var updateContract = flag.Bool("update-contract", false, "rewrite testdata/contract (only when an issue changes the JSON, CSV or scenario contract)")

// contractFiles are the outputs users script against; their bytes for every
// bundled scenario are pinned in testdata/contract.
var contractFiles = []string{"metrics.json", "timeseries.csv", "scenario.toml", "tenants.csv", "scopes.csv"}

// optionalContract are the contract files a run writes only when it has
// the entities they list.
var optionalContract = map[string]bool{"tenants.csv": true, "scopes.csv": true}

// TestContractUnchanged runs every bundled scenario through the command
// line and compares metrics.json (the same bytes as --json),
// timeseries.csv and the resolved scenario.toml with the pinned copies. A
// refactoring must leave them byte-identical; a deliberate change of the
// contract rewrites them with -update-contract and says so in the docs.
func TestContractUnchanged(t *testing.T) {
	exs, err := scenarios.Examples()
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) < 15 {
		t.Fatalf("only %d bundled scenarios found", len(exs))
	}
	for _, ex := range exs {
		t.Run(ex.Name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := cli("run", ex.Name, "--json", "-o", dir)
			if code != exitOK && !(ex.Name == "fail-deadlock" && code == exitModel) {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
			if err != nil || !bytes.Equal(got, []byte(stdout)) {
				t.Fatalf("metrics.json differs from --json (err %v)", err)
			}
			golden := filepath.Join("testdata", "contract", ex.Name)
			for _, f := range contractFiles {
				want := filepath.Join(golden, f)
				got, err := os.ReadFile(filepath.Join(dir, f))
				if os.IsNotExist(err) && optionalContract[f] {
					if _, err := os.Stat(want); err == nil && !*updateContract {
						t.Errorf("%s is no longer written", f)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if *updateContract {
					if err := os.MkdirAll(golden, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(want, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				exp, err := os.ReadFile(want)
				if err != nil {
					t.Fatalf("%v (go test ./cmd/limitsim -run TestContractUnchanged -update-contract creates it)", err)
				}
				if !bytes.Equal(got, exp) {
					t.Errorf("%s changed: %s", f, firstDifference(string(exp), string(got)))
				}
			}
		})
	}
}

// firstDifference names the first line where two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, a, b)
		}
	}
	return "same lines, different bytes"
}
