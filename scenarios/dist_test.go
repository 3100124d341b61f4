package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/upstream"
)

// The scenario reference lists exactly the latency and count families of
// upstream's table, with their keys: a family added to the table shows up
// in the docs or fails here.
func TestReferenceListsEveryDist(t *testing.T) {
	const path = "../docs/scenario.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	latency, count := DistReference()
	for _, block := range []struct{ name, want string }{{"dists", latency}, {"count-dists", count}} {
		begin := strings.Index(s, "<!-- "+block.name+":begin")
		end := strings.Index(s, "<!-- "+block.name+":end -->")
		if begin < 0 || end < begin {
			t.Fatalf("%s lacks the %s:begin/%s:end markers", path, block.name, block.name)
		}
		begin += strings.Index(s[begin:], "-->\n") + len("-->\n")
		if *updateDocs {
			s = s[:begin] + block.want + s[end:]
			continue
		}
		if got := s[begin:end]; got != block.want {
			t.Errorf("the %s table in %s is stale (go test ./scenarios -run TestReferenceListsEveryDist -update-docs):\n%s", block.name, path, block.want)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range upstream.Families() {
		if !strings.Contains(latency, "| `"+f.Name+"` |") {
			t.Errorf("family %s missing from the reference", f.Name)
		}
	}
}

// Every key a family lists decodes in a scenario, as a latency and, for
// the families a count takes, as a cost: a key listed without a decoder
// would be reported to users as unknown.
func TestEveryDistKeyDecodes(t *testing.T) {
	for _, f := range upstream.Families() {
		for _, count := range []bool{false, true} {
			if count && f.Count == 0 {
				continue
			}
			for _, key := range f.Keys(count) {
				d := &decoder{file: "t.toml", lines: keyIndex{}}
				tb := d.table("upstream[0].latency", map[string]any{"dist": f.Name, key: "1"})
				upstream.DecodeDist(distReader{t: tb, count: count, least: 1})
				for _, p := range d.probs {
					if strings.Contains(p.Msg, "unknown key") || strings.Contains(p.Msg, "does not apply") {
						t.Errorf("%s (count %v), key %s: %s", f.Name, count, key, p.Msg)
					}
				}
			}
		}
	}
}
