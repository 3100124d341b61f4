package upstream

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"time"
)

// ErrSpec is wrapped by every error about a distribution specification.
var ErrSpec = errors.New("upstream: invalid distribution")

// Latency draws service times.
type Latency interface {
	// Sample draws one duration using r, the caller's named random stream.
	Sample(r *rand.Rand) time.Duration
	// Mean returns the distribution's mean (for sizing and reports).
	Mean() time.Duration
}

// Dist is one latency distribution: a family's parameters as a scenario
// gives them (Constant{Value}, LogNormal{Median, Sigma}, …), registered
// in the table of families. A count (a request's or a response's cost)
// takes the same types, 1 ns standing for one unit.
type Dist interface {
	Latency
	// Validate says why the parameters describe no distribution (the
	// error wraps ErrSpec).
	Validate() error
	// Keys are the keys the family reads besides dist, in docs order: a
	// count's (count true) or a latency's.
	Keys(count bool) []string
	// Decode reads the family's keys from r into a new value.
	Decode(r Reader) Dist
	// Encode writes the family's keys (besides dist) as "key = value",
	// values as e renders them.
	Encode(e Encoder) []string
}

// builder is a Dist whose parameters are worked out once, checked as they
// are, before it samples (sorted points, cumulative weights).
type builder interface {
	build() (Latency, error)
}

// Family is one line of the table of latency distribution families.
type Family struct {
	// Name is the family's `dist` value.
	Name string
	// Doc is the keys cell of the family in the scenario reference.
	Doc string
	// Count is the family's place among those a count may take, from 1
	// (0: a count cannot take it), and CountDoc its keys cell there.
	Count    int
	CountDoc string
	// Check is the key at which a count's failed Validate is reported
	// (dist when empty).
	Check string
	// Composite: its parameters hold other distributions, so a mixture's
	// component cannot take it.
	Composite bool
	zero      Dist
}

// Keys are the keys the family reads besides dist: a count's (count
// true) or a latency's.
func (f Family) Keys(count bool) []string { return f.zero.Keys(count) }

// families is the table of latency distribution families, in docs order:
// the scenario decoder and encoder, the checks, the fits and the scenario
// reference read it.
var families = []Family{
	{Name: "constant", zero: Constant{}, Count: 1, Doc: "`value`", CountDoc: "`value`"},
	{Name: "exponential", zero: Exponential{}, Count: 3, Doc: "`mean`", CountDoc: "`mean`"},
	{Name: "lognormal", zero: LogNormal{}, Count: 4, Doc: "`median` and `sigma`, or `p50` and `p99`", CountDoc: "`median` and `sigma`, or `p50` and `p99`"},
	{Name: "gamma", zero: Gamma{}, Count: 5, Doc: "`mean`, `shape`", CountDoc: "`mean`, `shape`"},
	{Name: "weibull", zero: Weibull{}, Doc: "`scale`, `shape`"},
	{Name: "pareto", zero: Pareto{}, Doc: "`scale` (the minimum), `shape` > 1"},
	{Name: "uniform", zero: Uniform{}, Count: 2, Doc: "`min`, `max`", CountDoc: "`min`, `max`"},
	{Name: "empirical", zero: Empirical{}, Count: 6, Check: "quantiles",
		Doc:      "`quantiles = [[0, \"10ms\"], [0.5, \"80ms\"], [1, \"2s\"]]` (from p = 0 to p = 1, linear between points), or `samples = \"file.csv\"` (one duration or number of seconds a line; a first line without a digit is a header; a line of several comma-separated fields is refused: cut the column out first)",
		CountDoc: "`quantiles = [[0, 50], [0.5, 400], [1, 4000]]`"},
	{Name: "mixture", zero: Mixture{}, Composite: true, Doc: "`components = [{ weight = 0.95, dist = { dist = \"lognormal\", … } }, { weight = 0.05, dist = { … } }]`"},
}

// Families returns the latency distribution families in docs order.
func Families() []Family { return slices.Clone(families) }

// CountFamilies returns the families a count may take, in docs order.
func CountFamilies() []Family {
	var out []Family
	for _, f := range families {
		if f.Count > 0 {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Family) int { return a.Count - b.Count })
	return out
}

func names(fs []Family) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// FamilyOf returns the table's line for d's type.
func FamilyOf(d Dist) (Family, bool) {
	if d == nil {
		return Family{}, false
	}
	t := reflect.TypeOf(d)
	for _, f := range families {
		if reflect.TypeOf(f.zero) == t {
			return f, true
		}
	}
	return Family{}, false
}

// Name returns the family name of d ("" for none).
func Name(d Dist) string {
	f, _ := FamilyOf(d)
	return f.Name
}

// NewLatency checks d and returns what draws from it, its parameters
// worked out once.
func NewLatency(d Dist) (Latency, error) {
	if _, ok := FamilyOf(d); !ok {
		return nil, fmt.Errorf("%w: unknown dist %q (%s)", ErrSpec, Name(d), strings.Join(names(families), ", "))
	}
	if b, ok := d.(builder); ok {
		return b.build()
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// builtValidate is Validate of a builder.
func builtValidate(b builder) error {
	_, err := b.build()
	return err
}

// builtSample is Sample of a builder (NewLatency builds it once).
func builtSample(b builder, r *rand.Rand) time.Duration {
	l, err := b.build()
	if err != nil {
		return 0
	}
	return l.Sample(r)
}

// builtMean is Mean of a builder.
func builtMean(b builder) time.Duration {
	l, err := b.build()
	if err != nil {
		return 0
	}
	return l.Mean()
}

func dur(x float64) time.Duration {
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	if x < 0 {
		return 0
	}
	return time.Duration(x)
}

// z99 is the standard normal quantile at 0.99.
const z99 = 2.3263478740408408
