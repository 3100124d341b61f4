package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

const withPlans = `
[[variant]]
name = "slow"
set = ["client.limiter.bucket.rate=10", "client.instances=2"]

[[sweep]]
key = "client.limiter.bucket.rate"
from = 10
to = 20
step = 5

[[sweep]]
key = "client.instances"
values = [1, 2]
`

// Variants and sweeps declared in the file load, are validated against
// the scenario (a bad one names its key and line), and stay out of the run.
func TestVariantsAndSweeps(t *testing.T) {
	src := minimalScenario + withPlans
	sc, err := Parse(badFile, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Variants) != 1 || len(sc.Variants[0].Overrides()) != 2 || len(sc.Sweeps) != 2 {
		t.Fatalf("variants %+v sweeps %+v", sc.Variants, sc.Sweeps)
	}
	if p := sc.Sweeps[0].Points(); len(p) != 3 || p[2] != 20 {
		t.Fatalf("sweep points %v, want 10 15 20", p)
	}
	res, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Parse(badFile, []byte(res)); err != nil || len(back.Variants) != 1 || len(back.Sweeps) != 2 {
		t.Fatalf("the scenario as run does not keep its plans: %v", err)
	}
	for _, c := range []struct{ edit, want string }{
		{`"client.instances=2"`, `"client.limiter.nosuch.rate=2"`},
		{`to = 20`, `to = 5`},
		{`values = [1, 2]`, `values = ["x"]`},
		// A value listed twice would run its point twice, as --sweep
		// refuses: 2 and 2.0 are one value.
		{`values = [1, 2]`, `values = [1, 2, 2.0]`},
		{`key = "client.instances"`, `key = "client.nosuch"`},
		{"key = \"client.instances\"\nvalues = [1, 2]", "key = \"client.limiter.bucket.rate\"\nvalues = [30, 40]"},
		{`set = ["client.limiter.bucket.rate=10", "client.instances=2"]`, `set = []`},
		// A range of more points than a plan may have is refused from its
		// count, before a point is made: 10¹² of them, or 10³⁰⁰ (a count
		// no int holds), or a span that overflows.
		{`step = 5`, `step = 1e-11`},
		{`step = 5`, `step = 1e-300`},
		{"from = 10\nto = 20\nstep = 5", "step = 5\nfrom = -1e308\nto = 1.7e308"},
	} {
		bad := strings.Replace(src, c.edit, c.want, 1)
		_, err := Parse(badFile, []byte(bad))
		if err == nil {
			t.Errorf("%s accepted", c.want)
			continue
		}
		line := lineContaining(t, bad, c.want)
		if !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:", badFile, line)) || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%s: %v, want one problem at line %d", c.want, err, line)
		}
	}
}
