package scenarios

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// plainWeighted, the one-pass decoding of a plain weighted entry, accepts
// only what the full decoding accepts without a problem, and gives what it
// gives: over names valid and not, weights of every type and sign, and
// keys beside them, for hosts and for tenants (which may bring their own
// arrivals). It takes the common entries, so that a list of ten thousand
// tenants does not fall back to the full decoding entry by entry.
func TestPlainWeightedAsTheFullDecoding(t *testing.T) {
	names := []any{"t1", "api.v2-x_y", "", "a b", ".", "..", strings.Repeat("n", 100), strings.Repeat("n", 101), int64(3), nil}
	weights := []any{nil, 1.0, 2.5, 1e-300, 0.0, -1.0, math.NaN(), math.Inf(1), int64(3), int64(0), int64(-2), "1", true}
	extras := []map[string]any{nil, {"rate": 2.0}, {"arrival": "constant", "rate": 2.0}, {"bogus": 1.0}, {"nmae": "x"}}
	fast := 0
	for _, name := range names {
		for _, weight := range weights {
			for _, extra := range extras {
				m := map[string]any{}
				if name != nil {
					m["name"] = name
				}
				if weight != nil {
					m["weight"] = weight
				}
				for k, v := range extra {
					m[k] = v
				}
				w, ok := plainWeighted(m)
				if !ok {
					continue
				}
				fast++
				for _, arrivals := range []bool{false, true} {
					d := &decoder{file: "s.toml"}
					full, own, idle := d.weightedEntry(d.tableAt("workload.tenants", 0, m), arrivals, map[string]bool{})
					if len(d.probs) > 0 || own || idle || full != w {
						t.Errorf("%v (arrivals %v): one pass %+v; full decoding %+v, own arrivals %v, idle weight %v, problems %v", m, arrivals, w, full, own, idle, d.probs)
					}
				}
			}
		}
	}
	for _, m := range []map[string]any{{"name": "t1"}, {"name": "t1", "weight": 1.0}, {"name": "h", "weight": int64(2)}} {
		if _, ok := plainWeighted(m); !ok {
			t.Errorf("%v is not decoded in one pass", m)
		}
	}
	if fast == 0 {
		t.Fatal("no entry was decoded in one pass")
	}
}

// A duplicate name after entries decoded in one pass is still found, by
// the full decoding of the entry that repeats it.
func TestPlainWeightedDuplicates(t *testing.T) {
	var s strings.Builder
	s.WriteString("tenants = [")
	for i := range 50 {
		fmt.Fprintf(&s, "{ name = \"t%d\" }, ", i)
	}
	s.WriteString("{ name = \"t7\", weight = 2.0 }]")
	src := strings.Replace(minimalScenario, "cost = 1\n", "cost = 1\n"+s.String()+"\n", 1)
	_, err := Parse("s.toml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `workload.tenants[50].name: duplicate name "t7"`) {
		t.Errorf("got %v", err)
	}
}
