package arch

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/limitsim/limitsim/"

// imports returns the non-test imports of the package in dir.
func imports(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range pf.Imports {
			out[strings.Trim(im.Path.Value, `"`)] = true
		}
	}
	return out
}

// deps returns every package pkg imports, directly or not, within the
// module and outside it (outside packages are not followed).
func deps(t *testing.T, pkg string, seen map[string]bool) {
	for im := range imports(t, filepath.Join("..", "..", pkg)) {
		if seen[im] {
			continue
		}
		seen[im] = true
		if rest, ok := strings.CutPrefix(im, module); ok {
			deps(t, rest, seen)
		}
	}
}

// Each package's forbidden imports, direct or transitive: the hot path
// never reaches rendering or the file format, the limiters never reach the
// engine, the engine never reaches limiters.
func TestImportsPointOneWay(t *testing.T) {
	forbidden := map[string][]string{
		"clock":             {module, "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"sim":               {module + "models", module + "sim/client", module + "upstream", module + "report", module + "scenarios", "gonum.org", "github.com/BurntSushi/toml"},
		"models":            {module + "sim", module + "upstream", module + "report", module + "scenarios", "gonum.org", "github.com/BurntSushi/toml"},
		"models/arrivals":   {module, "gonum.org", "github.com/BurntSushi/toml"},
		"models/arrivalfit": {module + "sim", module + "upstream", module + "report", module + "scenarios", "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"models/retry":      {module + "sim", module + "upstream", module + "report", module + "scenarios", "gonum.org", "github.com/BurntSushi/toml"},
		"upstream":          {module + "sim", module + "report", module + "scenarios", "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"report/metrics":    {module + "sim", module + "models", module + "report\x00", module + "scenarios", "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"sim/client":        {module + "report\x00", module + "scenarios", "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"scenarios":         {module + "report\x00", "gonum.org/v1/plot"},
		"report":            {module + "sim", module + "scenarios", module + "models", module + "planning"},
		"internal/eventq":   {module + "sim", module + "models"},
		"internal/slab":     {module},
		"internal/kindname": {module},
		"internal/prefetch": {module},
		"internal/ahead":    {module},
		"internal/par":      {module},
		"internal/refmodel": {module + "sim/client", module + "report", module + "scenarios", "gonum.org/v1/plot", "github.com/BurntSushi/toml"},
		"clock/wallclock":   {module + "sim\x00", module + "models", module + "report", module + "scenarios", "gonum.org", "github.com/BurntSushi/toml"},
		"planning":          {module + "cmd"},
		"notebooks":         {module + "cmd"},
		"internal/arch":     {module},
		"logs":              {module, "gonum.org", "github.com/BurntSushi/toml"},
		"cmd/limitsim":      {},
	}
	if missing := uncovered(t, forbidden); len(missing) > 0 {
		t.Errorf("packages with no rule here (add one, even an empty list): %v", missing)
	}
	for pkg, bad := range forbidden {
		if _, err := os.Stat(filepath.Join("..", "..", pkg)); err != nil {
			t.Fatalf("package %s: %v", pkg, err)
		}
		seen := map[string]bool{}
		deps(t, pkg, seen)
		for im := range seen {
			for _, b := range bad {
				exact, isExact := strings.CutSuffix(b, "\x00")
				if (isExact && im == exact) || (!isExact && strings.HasPrefix(im, b) && !allowed(pkg, im)) {
					t.Errorf("%s depends on %s", pkg, im)
				}
			}
		}
	}
}

// allowed lists the imports a prefix rule would otherwise catch by mistake.
func allowed(pkg, im string) bool {
	switch {
	case pkg == "clock" && im == module+"clock":
		return true
	case pkg == "sim" && im == module+"sim":
		return true
	case strings.HasPrefix(pkg, "report") && im == module+"report/metrics":
		return true
	case pkg == "upstream" && im == module+"models":
		return true
	}
	return false
}

// packages lists the module's packages with Go files other than tests
// (and fidelity, whose files are all tests), as paths from the module's
// root.
func packages(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		if p != "." && p != "fidelity" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// uncovered lists the packages the rules do not name.
func uncovered(t *testing.T, rules map[string][]string) []string {
	var out []string
	for _, p := range packages(t) {
		if _, ok := rules[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

var updateGraph = flag.Bool("update", false, "rewrite the package graph in docs/architecture.md")

// graph is the module's import graph, one line a package: its direct
// imports within the module, in order.
func graph(t *testing.T) string {
	var b strings.Builder
	for _, p := range packages(t) {
		var deps []string
		for im := range imports(t, filepath.Join("..", "..", p)) {
			if rest, ok := strings.CutPrefix(im, module); ok {
				deps = append(deps, rest)
			}
		}
		sort.Strings(deps)
		if len(deps) == 0 {
			deps = []string{"(nothing of the module)"}
		}
		fmt.Fprintf(&b, "%-18s → %s\n", p, strings.Join(deps, ", "))
	}
	return b.String()
}

// The package graph in docs/architecture.md is the one the code has:
// each package's direct imports within the module, read from the
// sources. go test ./internal/arch -update rewrites it.
func TestArchitectureDocGraph(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "architecture.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- graph:begin -->\n```\n", "```\n<!-- graph:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no graph between %q and %q", path, begin, end)
	}
	want := graph(t)
	if got := doc[i+len(begin) : j]; got != want {
		if !*updateGraph {
			t.Fatalf("the package graph in %s is not the code's (go test ./internal/arch -update):\n%s", path, want)
		}
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
