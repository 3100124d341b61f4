package scenarios

import (
	"fmt"
	"strconv"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// maxCostValue bounds a cost value: far beyond any provider's limit, well
// inside int64 nanoseconds.
const maxCostValue = upstream.MaxCount

// Cost is a request's or a response's cost in a scenario file: a whole
// number (`cost = 3`), or a distribution of them
// (`cost = { dist = "lognormal", median = 1500, sigma = 0.8 }`), whose
// values are counts rather than durations.
type Cost struct {
	// N is the constant cost when Dist is nil.
	N int64
	// Dist is the distribution, its durations read as counts (see
	// upstream.Count).
	Dist upstream.Dist
}

// Spec returns the cost as a count distribution.
func (c Cost) Spec() upstream.Dist {
	if c.Dist != nil {
		return c.Dist
	}
	return upstream.Constant{Value: time.Duration(c.N)}
}

// constant returns the cost when every draw is the same (a number, or a
// constant distribution).
func (c Cost) constant() (int64, bool) {
	if c.Dist == nil {
		return c.N, true
	}
	if k, ok := c.Dist.(upstream.Constant); ok {
		return max(1, int64(k.Value)), true
	}
	return 0, false
}

// countEncoder writes a count's values as a scenario file does.
var countEncoder = upstream.Encoder{Value: func(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }, Str: tomlString}

// MarshalTOML renders the cost as written: a number, or an inline table.
func (c Cost) MarshalTOML() ([]byte, error) {
	if c.Dist == nil {
		return []byte(strconv.FormatInt(c.N, 10)), nil
	}
	if !upstream.Countable(c.Dist) {
		return nil, fmt.Errorf("cost: no encoding for dist %q", upstream.Name(c.Dist))
	}
	text, err := countEncoder.Inline(c.Dist)
	return []byte(text), err
}

// cost reads key k of t as a cost: an integer of at least least, or a
// distribution table. def is the cost when k is absent.
func (d *decoder) cost(t *table, k string, least, def int64) Cost {
	v, ok := t.get(k)
	if !ok {
		return Cost{N: def}
	}
	if _, isTable := v.(map[string]any); !isTable {
		return Cost{N: t.integer(k, def, least)}
	}
	ct := t.sub(k)
	problems := len(d.probs)
	s := upstream.DecodeDist(distReader{t: ct, count: true, least: least})
	if s == nil {
		return Cost{N: def}
	}
	if len(d.probs) == problems {
		// What the keys above do not check alone (empirical quantiles
		// that fall), as the run would build it.
		if _, err := upstream.NewCount(s, 1); err != nil {
			key := "dist"
			if f, _ := upstream.FamilyOf(s); f.Check != "" {
				key = f.Check
			}
			d.problem(ct.key(key), "%v", err)
		}
	}
	return Cost{Dist: s}
}
