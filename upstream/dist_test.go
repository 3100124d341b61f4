package upstream

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every family of the table is unique, has examples (given by its own
// test file) that are valid, sample the same as the distribution
// NewLatency builds, and read back as written; every key it lists decodes.
func TestEveryFamily(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Families() {
		if seen[f.Name] || f.Name == "" || f.Doc == "" || (f.Count > 0) != (f.CountDoc != "") {
			t.Errorf("family %+v: a name, once, and a doc for each use", f)
		}
		seen[f.Name] = true
		var n int
		for _, d := range examples {
			if reflect.TypeOf(d) != reflect.TypeOf(f.zero) {
				continue
			}
			n++
			if Name(d) != f.Name {
				t.Errorf("%+v: named %q, want %q", d, Name(d), f.Name)
			}
			l, err := NewLatency(d)
			if err != nil {
				t.Errorf("%s example %+v: %v", f.Name, d, err)
				continue
			}
			r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			for range 100 {
				if a, b := d.Sample(r1), l.Sample(r2); a != b {
					t.Fatalf("%s example %+v: Sample %v, built %v", f.Name, d, a, b)
				}
			}
			if d.Mean() != l.Mean() {
				t.Errorf("%s example %+v: Mean %v, built %v", f.Name, d, d.Mean(), l.Mean())
			}
			roundTrip(t, d)
		}
		if n == 0 {
			t.Errorf("family %s has no example in its test file", f.Name)
		}
		for _, count := range []bool{false, true} {
			if count && f.Count == 0 {
				continue
			}
			for _, key := range f.zero.Keys(count) {
				r := newMapReader(map[string]any{"dist": f.Name, key: int64(1)}, count)
				DecodeDist(r)
				for _, p := range *r.probs {
					if strings.Contains(p, "unknown key") {
						t.Errorf("%s (count %v) lists %s but does not read it: %s", f.Name, count, key, p)
					}
				}
			}
		}
	}
	if got := names(CountFamilies()); !slices.Equal(got, []string{"constant", "uniform", "exponential", "lognormal", "gamma", "empirical"}) {
		t.Errorf("count families %v", got)
	}
}

// A count takes only the families marked for it, and an empirical count
// takes quantiles, not samples.
func TestCountFamilies(t *testing.T) {
	for _, f := range Families() {
		if _, err := NewCount(f.zero, 1); f.Count == 0 && err == nil {
			t.Errorf("a count took %s", f.Name)
		}
	}
	if _, err := NewCount(Empirical{Samples: []time.Duration{1, 2}}, 1); err == nil {
		t.Error("a count took samples")
	}
}
