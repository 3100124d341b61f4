package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
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
		"planning":          {module + "cmd"},
		"internal/eventq":   {module + "sim", module + "models"},
		"internal/slab":     {module},
		"internal/prefetch": {module},
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
