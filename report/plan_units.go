package report

import (
	"math"
	"strings"

	"gonum.org/v1/plot"
)

// planUnit is how a figure of a plan reads for people: a share as a
// percentage, a time in seconds, a count with its thousands grouped, a
// rate per second.
type planUnit int

const (
	plainUnit planUnit = iota
	shareUnit
	secondsUnit
	countUnit
	rateUnit
)

// shareFields, countFields: the last field of a metrics path that is a
// share of 1 or a count of requests.
var (
	shareFields = map[string]bool{"rate_429": true, "p_wait": true, "success_rate": true, "success_ratio": true,
		"saturation": true, "saturation_max": true, "utilisation": true, "utilisation_max": true, "arrival_share": true,
		"admitted_share": true, "quota_saturation": true, "quota_utilisation": true}
	countFields = map[string]bool{"arrived": true, "succeeded": true, "acquire_timeouts": true, "timed_out": true,
		"timeouts": true, "rejected": true, "rejected_ingest": true, "rejected_limiter": true, "attempts": true,
		"retries": true, "retries_denied": true, "pauses": true, "throttled_429": true, "responses_429": true,
		"in_progress": true, "ok": true, "failed": true}
)

// unitOf is the unit of a metrics path (or a health column), read from
// its field names: `rate_429` a share, `limiters[b].wait_s.p99` seconds,
// `goodput_rps` a rate.
func unitOf(path string) planUnit {
	fields := strings.Split(stripSelectors(path), ".")
	last := fields[len(fields)-1]
	switch {
	case shareFields[last]:
		return shareUnit
	case countFields[last]:
		return countUnit
	case strings.HasSuffix(last, "rps") || strings.HasSuffix(last, "per_s"):
		return rateUnit
	case strings.HasSuffix(last, "_s"):
		return secondsUnit
	case len(fields) > 1 && strings.HasSuffix(fields[len(fields)-2], "_s"):
		return secondsUnit // wait_s.p99, latency_s.max
	}
	return plainUnit
}

// stripSelectors drops the [name] parts of a path: a tenant's or a
// host's name says nothing of the unit.
func stripSelectors(path string) string {
	var b strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth = max(0, depth-1)
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// suffix is what a column or an axis of the unit adds to its name; a
// share or a time carries its unit in every figure instead.
func (u planUnit) suffix() string {
	if u == rateUnit {
		return " (/s)"
	}
	return ""
}

// text is a figure of the unit: four significant digits, a share as a
// percentage, a count with its thousands grouped.
func (u planUnit) text(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case u == shareUnit:
		return share(v)
	case u == secondsUnit:
		return secs(v)
	case u == countUnit && math.Abs(v) < 1e15:
		return Grouped(int64(math.Round(v)))
	}
	return human(v, 4)
}

// halfWidth is a 95% half-width of the unit, to two significant digits.
func (u planUnit) halfWidth(ci float64) string {
	switch u {
	case shareUnit:
		return share(ci)
	case secondsUnit:
		return secs(ci)
	}
	return human(ci, 2)
}

// share is a share of 1 as a percentage to three significant digits, so
// that a 429 rate of 0.9989% next to a constraint of 1% reads 0.999%, not
// 1.0%, and one tenant of 10,000 has 0.01%, not 0.0%.
func share(x float64) string {
	return human(100*x, 3) + "%"
}

// tick is the label of an axis tick at v.
func (u planUnit) tick(v float64) string {
	switch u {
	case shareUnit:
		return human(100*v, 4) + "%"
	case secondsUnit:
		return secs(v)
	}
	return human(v, 6)
}

// unitTicks are an axis's default ticks labelled in a unit.
type unitTicks struct{ unit planUnit }

// Ticks returns the default ticks between lo and hi, labelled in the unit.
func (t unitTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.unit.tick(ticks[i].Value)
		}
	}
	return ticks
}

// Share is a share of 1 as a percentage, as every table writes it
// (three significant digits: 0.999%, 12.9%).
func Share(x float64) string { return share(x) }
