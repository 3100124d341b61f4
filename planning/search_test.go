package planning

import (
	"strings"
	"testing"
)

// KeyTakes fits a search to its key: a key of whole numbers is refused
// with a fractional tolerance or bound, and searched on whole values
// otherwise; a key of any number between whole bounds under 16 apart is
// searched to a 64th of the range, from 16 apart on to 1, and a written
// tolerance is kept.
func TestBisectionFitsWhatItsKeyTakes(t *testing.T) {
	for _, c := range []struct {
		spec      string
		whole     bool
		refused   bool
		tolerance float64
		integer   bool
	}{
		{"k=5:40:0.5", true, true, 0, false},
		{"k=5.5:40", true, true, 0, false},
		{"k=5:40", true, false, 1, true},
		{"k=5:40:2", true, false, 2, true},
		{"k=0:1", false, false, 1.0 / 64, false},
		{"k=0:15", false, false, 15.0 / 64, false},
		{"k=0:16", false, false, 1, true},
		{"k=50:150", false, false, 1, true},
		{"k=0:1:0.1", false, false, 0.1, false},
		{"k=0.5:1.5", false, false, 1.0 / 64, false},
	} {
		b, err := ParseBisection(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		err = b.KeyTakes(c.whole)
		if (err != nil) != c.refused {
			t.Errorf("%s (whole %v): %v", c.spec, c.whole, err)
			continue
		}
		if c.refused {
			if !strings.Contains(err.Error(), "k takes whole numbers") {
				t.Errorf("%s: %v", c.spec, err)
			}
			continue
		}
		if b.Tolerance != c.tolerance || b.integerBoundary != c.integer {
			t.Errorf("%s (whole %v): tolerance %v, whole values %v; want %v, %v", c.spec, c.whole, b.Tolerance, b.integerBoundary, c.tolerance, c.integer)
		}
	}
}
