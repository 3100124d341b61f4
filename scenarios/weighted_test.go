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

// A duplicate name is found whichever decoding each of its entries took:
// a plain entry repeated by one the full decoding reads, the other way
// round, and in the [[workload.tenants]] form; a name that is not valid,
// repeated, is reported as invalid each time but not as a duplicate.
func TestPlainWeightedDuplicates(t *testing.T) {
	for _, c := range []struct {
		list, want, not string
	}{
		{`[{ name = "t1" }, { name = "t2" }, { name = "t1", weight = 2.0 }]`, `workload.tenants[2].name: duplicate name "t1"`, ""},
		{`[{ name = "t1", weight = 0.5, rate = 2.0 }, { name = "t1" }]`, `workload.tenants[1].name: duplicate name "t1"`, ""},
		{`[{ name = "t1", bogus = 1 }, { name = "t1" }]`, `workload.tenants[1].name: duplicate name "t1"`, ""},
		{`[{ name = "a b" }, { name = "a b" }]`, `workload.tenants[1].name: "a b" may use only`, "duplicate"},
	} {
		src := strings.Replace(minimalScenario, "cost = 1\n", "cost = 1\ntenants = "+c.list+"\n", 1)
		_, err := Parse("s.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) || c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%s: got %v, want %q", c.list, err, c.want)
		}
	}
	var s strings.Builder
	for i := range 50 {
		fmt.Fprintf(&s, "[[workload.tenants]]\nname = \"t%d\"\n", i)
	}
	s.WriteString("[[workload.tenants]]\nname = \"t7\"\nweight = 2.0\n")
	_, err := Parse("s.toml", []byte(minimalScenario+s.String()))
	if err == nil || !strings.Contains(err.Error(), `workload.tenants[50].name: duplicate name "t7"`) {
		t.Errorf("[[workload.tenants]]: got %v", err)
	}
}

// An entry that is no table is reported before the problems inside the
// entries on its line, as in every other list: the one-pass decoding does
// not change the order problems are listed in.
func TestWeightedNotATableFirst(t *testing.T) {
	src := strings.Replace(minimalScenario, "cost = 1\n", "cost = 1\ntenants = [{ name = \"a b\" }, 1]\n", 1)
	_, err := Parse("s.toml", []byte(src))
	if err == nil {
		t.Fatal("no problem found")
	}
	msg := err.Error()
	first, second := strings.Index(msg, "workload.tenants[1]: must be a table"), strings.Index(msg, "workload.tenants[0].name:")
	if first < 0 || second < 0 || first > second {
		t.Errorf("the entry that is no table is not reported first:\n%s", msg)
	}
}
