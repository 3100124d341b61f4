package report

import (
	"fmt"
	"math"

	"github.com/limitsim/limitsim/report/metrics"
)

// memoryGrowth: the number of requests in the system climbs while goodput stays flat, or the live-request guard stopped the run.
func memoryGrowth(a *analysis) {
	r := a.r
	if a.has("deadlock") || a.has("quota_exhausted") || stormInRun(r) { // requests pile up waiting for the quota's reset, or behind the retries
		return
	}
	var evidence, cause string
	fix := "bound what waits: an ingest queue's capacity (ingest = \"queue\", queue_capacity) or client.max_waiting at about a second of the service rate"
	guard := r.Stop.Kind == metrics.GuardTripped && r.Stop.Guard == "max_live_requests"
	grow, at, n := growth(a.s, a.from, "in_system")
	inFlightGrows, _, _ := growth(a.s, a.from, "in_flight")
	if grow && !guard && boundedWithinTimeout(r) && !inFlightGrows {
		return // a full line, not a growing one: the binding limiter's verdict says demand exceeds it
	}
	if grow {
		evidence = fmt.Sprintf("requests in the system climb to %.0f by %s while goodput stays at %s/s", n, secs(at), human(r.Throughput.GoodputRPS, 4))
		if first, last := quarterMeans(a.s, a.from, "succeeded"); last < first/2 {
			// Averaged over a collapse, the steady state's goodput hides it.
			evidence = fmt.Sprintf("requests in the system climb to %.0f by %s while goodput falls from %s/s in the first quarter of the steady state to %s/s in the last",
				n, secs(at), human(first/r.IntervalS, 4), human(last/r.IntervalS, 4))
		}
		cause = lineCause(r, n)
		if r.Requests.Rejected > 0 {
			fix = "bound the line at what the service rate clears within the acquisition timeout"
		}
	} else if guard {
		evidence, cause = r.Stop.Detail(), "a waiting line at the limiter that no bound cut before the live-request guard"
	} else {
		return
	}
	a.add(metrics.Diagnosis{Code: "memory_growth", Severity: "critical", Title: "Memory growth under load",
		Evidence: evidence, Cause: cause, Fix: metrics.Fix{Text: fmt.Sprintf("add an acquisition timeout (acquire_timeout = %q: a full limiter then fails fast and visibly); or %s", timeoutFix(r), fix),
			Set: map[string]any{"client.acquire_timeout": timeoutFix(r)}}})
}

// boundedWithinTimeout reports whether the requests in the system are
// held by a bound (arrivals refused when the line was full, or
// acquisitions that timed out) that keeps every wait within the
// acquisition timeout memoryGrowth would advise: the p99 wait of every
// limiter, each of its scopes listed and the ingest queue at most that
// long. Such a line fills under overload and stays full; memory follows
// the bound, not the arrival rate, and a bound of one second of the rate
// is what `limitsim size` advises. (memoryGrowth also asks that the
// requests in flight do not climb: a server's backlog is no line's.)
func boundedWithinTimeout(r *metrics.Results) bool {
	if q := r.Requests; q.Rejected == 0 && q.AcquireTimeouts == 0 {
		return false
	}
	// A recorded percentile is the upper edge of its histogram bucket,
	// up to 0.1% above the wait (three significant digits): a wait cut at
	// the timeout reads 1.0003s for 1s.
	limit := timeoutFixS(r) * (1 + 1e-3)
	if r.Queue.WaitS.P99 > limit { // zero without an ingest queue
		return false
	}
	for _, l := range r.Limiters {
		if l.WaitS.P99 > limit {
			return false
		}
		for _, sc := range l.Scopes {
			if sc.WaitS.P99 > limit {
				return false
			}
		}
	}
	return true
}

// lineCause names what let the line grow to peak requests: a bound that
// refused requests yet sits too high for the service rate (a long wait at
// the bound), or no bound that refused any, whether none is set or one
// above the peak.
func lineCause(r *metrics.Results, peak float64) string {
	served := r.Throughput.GoodputRPS
	if q := r.Requests; q.Rejected > 0 {
		wait := ""
		if served > 0 {
			wait = fmt.Sprintf(", a wait of %s at the bound", secs(peak/served))
		}
		return fmt.Sprintf("a waiting line that is bounded but long: %s requests were refused when it was full, yet up to %.0f were inside at once while %s/s were served%s; the bound is too large for the service rate, so memory grows with the arrival rate until the bound is reached",
			Grouped(q.Rejected), peak, human(served, 4), wait)
	}
	return fmt.Sprintf("a waiting line at the limiter that no bound cut (none is set, or it is above the %.0f reached): memory grows with the arrival rate, not the service rate", peak)
}

// burstyDispersion is the index of dispersion (variance over mean) of the
// arrivals per interval above which they come in bursts: about 1 for
// Poisson arrivals, a little more for a ramp, far more for on/off.
const burstyDispersion = 3

// bursty reports whether the steady state's arrivals, per interval up to
// the last with any, come in bursts: their dispersion about the line
// that best fits them (a ramp's trend taken out) is over
// burstyDispersion.
func bursty(s *metrics.Series, from int) bool {
	end := arrivalsEndRow(s, from)
	if end-from < 4 {
		return false
	}
	// Running means and co-moments of (row, arrivals), so that a trend
	// (a ramp) is taken out: its rising mean is no burst.
	var n, mx, my, cxx, cxy, cyy float64
	s.ScanNamed(from, []string{"arrivals"}, func(i int, arr []float64) bool {
		if i == end {
			return false
		}
		n++
		x, y := float64(i), arr[0]
		dx, dy := x-mx, y-my
		mx += dx / n
		my += dy / n
		cxx += dx * (x - mx)
		cxy += dx * (y - my)
		cyy += dy * (y - my)
		return true
	})
	residual := cyy
	if cxx > 0 {
		residual -= cxy * cxy / cxx
	}
	return my > 0 && residual/(n-2)/my > burstyDispersion
}

// quarterMeans is the mean of a column of the series per interval over
// the first and the last quarter of the steady state, up to the end of
// the arrivals (as growth reads it); zeros when that is under 8
// intervals.
func quarterMeans(s *metrics.Series, from int, column string) (first, last float64) {
	end := arrivalsEndRow(s, from)
	if end-from < 8 {
		return 0, 0
	}
	q := (end - from) / 4
	s.ScanNamed(from, []string{column}, func(i int, v []float64) bool {
		if i < from+q {
			first += v[0] / float64(q)
		} else if i >= end-q && i < end {
			last += v[0] / float64(q)
		}
		return i < end
	})
	return first, last
}

// arrivalsEndRow is the row after the last one with arrivals, from row from
// on (from when none has any).
func arrivalsEndRow(s *metrics.Series, from int) int {
	end := from
	s.ScanNamed(from, []string{"arrivals"}, func(i int, arr []float64) bool {
		if arr[0] != 0 {
			end = i + 1
		}
		return true
	})
	return end
}

// growth reports whether a column of the series (the requests in the
// system, in flight) climbs steadily through the steady state, up to the
// end of the arrivals: the last quarter's mean at least three times the
// first quarter's and over 100. It also returns the instant of the last
// row read and the column's peak.
func growth(s *metrics.Series, from int, column string) (bool, float64, float64) {
	if rowsOf(s, column)-from < 8 {
		return false, 0, 0
	}
	end := arrivalsEndRow(s, from) // after that the line drains
	if end-from < 8 {
		return false, 0, 0
	}
	q := (end - from) / 4
	var first, last, peak, at float64 // the means of the first and last quarters
	s.ScanNamed(from, []string{column, "t_s"}, func(i int, v []float64) bool {
		if i == end {
			return false
		}
		if i < from+q {
			first += v[0] / float64(q)
		}
		if i >= end-q {
			last += v[0] / float64(q)
		}
		peak, at = math.Max(peak, v[0]), v[1]
		return true
	})
	return last > 100 && last > 3*first, at, peak
}
