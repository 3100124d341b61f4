package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed examples/*.toml
var bundled embed.FS

// Example is a bundled scenario.
type Example struct {
	Name        string
	Description string
	Source      []byte
}

// Examples returns the bundled scenarios sorted by name.
func Examples() ([]Example, error) {
	entries, err := fs.ReadDir(bundled, "examples")
	if err != nil {
		return nil, err
	}
	var out []Example
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		src, err := bundled.ReadFile(path.Join("examples", e.Name()))
		if err != nil {
			return nil, err
		}
		sc, err := Parse("examples/"+e.Name(), src)
		if err != nil {
			return nil, fmt.Errorf("bundled scenario %s: %w", e.Name(), err)
		}
		out = append(out, Example{Name: strings.TrimSuffix(e.Name(), ".toml"), Description: sc.Description, Source: src})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ExampleSource returns a bundled scenario's text by name.
func ExampleSource(name string) ([]byte, error) {
	src, err := bundled.ReadFile(path.Join("examples", name+".toml"))
	if err == nil {
		return src, nil
	}
	var names []string
	if entries, derr := fs.ReadDir(bundled, "examples"); derr == nil {
		for _, e := range entries {
			names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
		}
	}
	if near, ok := nearest(name, names); ok {
		return nil, fmt.Errorf("%s: no such file or bundled scenario; did you mean %s?", name, near)
	}
	return nil, fmt.Errorf("%s: no such file or bundled scenario (see `limitsim scenarios`)", name)
}
