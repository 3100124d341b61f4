package notebooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// names are the notebooks run.sh executes.
var names = []string{"sizing", "compare-policies", "failure-modes"}

type notebook struct {
	Cells []struct {
		Type     string          `json:"cell_type"`
		Source   json.RawMessage `json:"source"`
		Metadata struct {
			Tags []string `json:"tags"`
		} `json:"metadata"`
		Outputs []output `json:"outputs"`
	} `json:"cells"`
	Metadata struct {
		Kernelspec struct {
			Name string `json:"name"`
		} `json:"kernelspec"`
	} `json:"metadata"`
}

// output is one of a cell's saved outputs.
type output struct {
	Type  string                     `json:"output_type"`
	Name  string                     `json:"name"`
	Text  json.RawMessage            `json:"text"`
	Data  map[string]json.RawMessage `json:"data"`
	Ename string                     `json:"ename"`
}

func read(t *testing.T, path string) *notebook {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb notebook
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &nb
}

// text joins a notebook string (a string or a list of lines).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	json.Unmarshal(raw, &lines) //nolint:errcheck // absent: empty
	return strings.Join(lines, "")
}

// summaries returns what each cell tagged "summary" printed and displayed
// as text: the tables whose numbers the prose relies on.
func summaries(nb *notebook) []string {
	var out []string
	for _, c := range nb.Cells {
		if !slices.Contains(c.Metadata.Tags, "summary") {
			continue
		}
		var b strings.Builder
		for _, o := range c.Outputs {
			b.WriteString(text(o.Text))
			if md, ok := o.Data["text/markdown"]; ok {
				b.WriteString(text(md))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// mixesChannels reports whether a cell's outputs hold both a stream
// (stdout) and a display: gonb delivers the two over separate channels.
func mixesChannels(outs []output) bool {
	var stream, display bool
	for _, o := range outs {
		stream = stream || o.Type == "stream"
		display = display || o.Type == "display_data"
	}
	return stream && display
}

// failures lists what in a notebook's outputs shows a cell that failed:
// gonb prints a panic or a compile error on stderr rather than failing the
// cell, so a run that "succeeded" may still hold one.
func failures(nb *notebook) []string {
	var bad []string
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			t := text(o.Text)
			switch {
			case o.Type == "error":
				bad = append(bad, o.Ename)
			case o.Name == "stderr", strings.Contains(t, "panic:"):
				bad = append(bad, strings.TrimSpace(t))
			}
		}
	}
	return bad
}

// Each saved notebook runs on gonb, links this repository in its first
// cell and pins gonb's version for gonbui, shows every summary table, and
// holds no failed cell; its setup cell, whose output names this machine's
// paths, is saved without output.
func TestNotebooksAreSaved(t *testing.T) {
	for _, name := range names {
		nb := read(t, name+".ipynb")
		if nb.Metadata.Kernelspec.Name != "gonb" {
			t.Errorf("%s: kernel %q, want gonb", name, nb.Metadata.Kernelspec.Name)
		}
		var first string
		for _, c := range nb.Cells {
			if c.Type == "code" {
				first = text(c.Source)
				break
			}
		}
		for _, want := range []string{"go work use . \"${GONB_DIR}/..\"", "%goworkfix", "github.com/janpfeifer/gonb@v0.11.1"} {
			if !strings.Contains(first, want) {
				t.Errorf("%s: the first code cell does not link the repository (%q missing)", name, want)
			}
		}
		sums := summaries(nb)
		if len(sums) == 0 {
			t.Errorf("%s: no cell tagged summary", name)
		}
		for i, s := range sums {
			if strings.TrimSpace(s) == "" {
				t.Errorf("%s: summary %d shows nothing (outputs not saved?)", name, i)
			}
		}
		if bad := failures(nb); len(bad) > 0 {
			t.Errorf("%s: saved with failed cells: %q", name, bad)
		}
		for i, c := range nb.Cells {
			if slices.Contains(c.Metadata.Tags, "summary") && mixesChannels(c.Outputs) {
				t.Errorf("%s: summary cell %d prints to stdout and displays too: the two reach the notebook in no fixed order, so its summary would compare unequal between runs", name, i)
			}
			if slices.Contains(c.Metadata.Tags, "setup") && len(c.Outputs) > 0 {
				t.Errorf("%s: the setup cell keeps its output (a machine's paths): run notebooks/run.sh --save", name)
			}
		}
	}
}

// The saved summary tables are what a fresh execution prints: run.sh
// executes every notebook into LIMITSIM_NOTEBOOKS_FRESH and runs this
// test, which also fails on any cell that failed in the fresh run.
func TestSavedOutputsAreFresh(t *testing.T) {
	dir := os.Getenv("LIMITSIM_NOTEBOOKS_FRESH")
	if dir == "" {
		t.Skip("run notebooks/run.sh: it executes the notebooks and runs this test on the fresh copies")
	}
	for _, name := range names {
		saved, fresh := read(t, name+".ipynb"), read(t, filepath.Join(dir, name+".ipynb"))
		if bad := failures(fresh); len(bad) > 0 {
			t.Errorf("%s: cells failed in the fresh run: %q", name, bad)
			continue
		}
		s, f := summaries(saved), summaries(fresh)
		if len(s) != len(f) {
			t.Errorf("%s: %d summary tables saved, %d fresh", name, len(s), len(f))
			continue
		}
		for i := range s {
			if s[i] != f[i] {
				t.Errorf("%s: summary %d is stale (run notebooks/run.sh --save):\nsaved:\n%s\nfresh:\n%s", name, i, s[i], f[i])
			}
		}
	}
}

// A cell that panicked or failed to compile is found in the outputs, as
// gonb reports it (a stderr stream), so that run.sh fails on it.
func TestFailedCellsAreFound(t *testing.T) {
	var nb notebook
	src := `{"cells": [
	  {"cell_type": "code", "source": "%%\nfmt.Println(1)", "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]},
	  {"cell_type": "code", "source": "%%\npanic(2)", "metadata": {}, "outputs": [{"output_type": "stream", "name": "stderr", "text": ["panic: 2\n"]}]},
	  {"cell_type": "code", "source": "x", "metadata": {}, "outputs": [{"output_type": "error", "ename": "CompileError"}]}
	]}`
	if err := json.Unmarshal([]byte(src), &nb); err != nil {
		t.Fatal(err)
	}
	if got := failures(&nb); len(got) != 2 || got[0] != "panic: 2" || got[1] != "CompileError" {
		t.Fatalf("failures %q, want the panic and the compile error", got)
	}
}
