package metrics

import "time"

// RequestEnd is how a request ended.
type RequestEnd uint8

// Request outcomes.
const (
	// Succeeded: the upstream answered OK.
	Succeeded RequestEnd = iota
	// Throttled: the request ended with a 429.
	Throttled
	// RejectedIngest: the ingest queue refused it.
	RejectedIngest
	// RejectedLimiter: a limiter refused it.
	RejectedLimiter
	// AcquireTimeout: an acquisition timed out.
	AcquireTimeout
	// TimedOut: its deadline passed.
	TimedOut
	// Failed: the request ended with a refusal whose status the client
	// does not treat as throttling (a 503 or 403 not in its
	// on_limit.statuses).
	Failed
)

// requestCounts counts the requests' outcomes and attempts: over the
// whole run (the requests of metrics.json), over the steady state (the
// rates of its throughput) and in the interval the next Tick closes (the
// run-wide count columns of timeseries.csv).
type requestCounts struct {
	total    Requests
	steady   steadyCounts
	interval intervalCounts
}

// steadyCounts are the steady state's counts, which its rates are read
// from.
type steadyCounts struct {
	arrived, started, succeeded int64
	responses429                int64 // 429s to attempts sent in the steady state
}

// intervalCounts are the counts of the interval the next Tick closes.
type intervalCounts struct {
	arrivals, starts, ok, throttled, rejected, timeouts, failed int64
}

// requestCountColumns name the run-wide count columns of a row, in the
// order appendInterval appends them.
var requestCountColumns = []string{"arrivals", "starts", "succeeded", "responses_429", "rejected", "timeouts", "failed"}

// Retried counts a retry.
func (r *Recorder) Retried() { r.requests.retried() }

// RetryDenied counts a retry the retry budget refused.
func (r *Recorder) RetryDenied() { r.requests.retryDenied() }

func (c *requestCounts) retried()     { c.total.Retries++ }
func (c *requestCounts) retryDenied() { c.total.RetriesDenied++ }

// arrived counts an arrival; steady: it came in the steady state.
func (c *requestCounts) arrived(steady bool) {
	c.total.Arrived++
	c.interval.arrivals++
	if steady {
		c.steady.arrived++
	}
}

// ended counts a request's outcome; steady: it ended in the steady state.
func (c *requestCounts) ended(o RequestEnd, steady bool) {
	switch o {
	case Succeeded:
		c.total.Succeeded++
		c.interval.ok++
		if steady {
			c.steady.succeeded++
		}
	case Throttled:
		c.total.Throttled429++
	case RejectedIngest:
		c.total.Rejected++
		c.total.RejectedIngest++
		c.interval.rejected++
	case RejectedLimiter:
		c.total.Rejected++
		c.total.RejectedLimiter++
		c.interval.rejected++
	case AcquireTimeout:
		c.total.AcquireTimeouts++
		c.interval.timeouts++
	case TimedOut:
		c.total.TimedOut++
		c.interval.timeouts++
	case Failed:
		c.total.Failed++
		c.interval.failed++
	}
}

// sent counts an attempt; steady: it was sent in the steady state.
func (c *requestCounts) sent(steady bool) {
	c.total.Attempts++
	c.interval.starts++
	if steady {
		c.steady.started++
	}
}

// throttled counts a 429 answer; steady: its attempt was sent in the
// steady state. The interval's count is kept by count429.
func (c *requestCounts) throttled(steady bool) {
	c.total.Responses429++
	if steady {
		c.steady.responses429++
	}
}

// open429 counts a 429 in the open interval.
func (c *requestCounts) open429() { c.interval.throttled++ }

func (c *requestCounts) appendColumns(columns []string) []string {
	return append(columns, requestCountColumns...)
}

// appendInterval appends the interval's counts to row and starts the next
// interval at zero.
func (c *requestCounts) appendInterval(row []float64) []float64 {
	counts := &c.interval
	row = append(row, float64(counts.arrivals), float64(counts.starts), float64(counts.ok),
		float64(counts.throttled), float64(counts.rejected), float64(counts.timeouts), float64(counts.failed))
	c.interval = intervalCounts{}
	return row
}

// results fills out's counts and rates: inProgress requests are still in
// the system at end; window is the steady state in ns (from warmup to
// end); the offered rate is over the steady part of the arrival window,
// which ends at arrivalsEnd, so an overload stays visible however long
// the backlog takes to drain.
func (c *requestCounts) results(out *Results, inProgress int64, end, arrivalsEnd, warmup time.Duration, window float64) {
	out.Requests = c.total
	out.Requests.InProgress = inProgress
	perSecond := 1e9 / window
	offerWindow := float64(min(arrivalsEnd, end) - warmup)
	if offerWindow <= 0 {
		offerWindow = window
	}
	steady := &c.steady
	out.Throughput = Throughput{OfferedRPS: float64(steady.arrived) * 1e9 / offerWindow, StartedRPS: float64(steady.started) * perSecond,
		GoodputRPS: float64(steady.succeeded) * perSecond, Rate429RPS: float64(steady.responses429) * perSecond, WindowS: max(0, end-warmup).Seconds()}
	out.Rate429 = Ratio(float64(steady.responses429), float64(steady.started))
	out.SuccessRatio = Ratio(float64(c.total.Succeeded), float64(c.total.Arrived)) // a request still in progress has not succeeded
}

// requestTimes are the successful requests' end-to-end times, from arrival
// to the answer: over the steady state's arrivals for metrics.json, and in
// each interval for the percentile columns of timeseries.csv.
type requestTimes struct {
	endToEnd *hist
	interval *intervalHist // nil when the series is unread
}

var requestTimeColumns = []string{"request_p50_s", "request_p95_s", "request_p99_s"}

func newRequestTimes() requestTimes {
	return requestTimes{endToEnd: newHist(), interval: newIntervalHist()}
}

// succeeded records a success after d; steady: the request arrived in the
// steady state.
func (t *requestTimes) succeeded(d time.Duration, steady bool) {
	if steady {
		t.endToEnd.add(d)
	}
	t.interval.add(d)
}

func (t *requestTimes) appendColumns(columns []string) []string {
	return append(columns, requestTimeColumns...)
}

// appendInterval appends the interval's percentiles to row and clears
// them.
func (t *requestTimes) appendInterval(row []float64) []float64 {
	p50, p95, p99 := t.interval.take()
	return append(row, p50, p95, p99)
}

// dist summarises the steady state's end-to-end times.
func (t *requestTimes) dist() Dist { return t.endToEnd.dist() }

// dropInterval stops keeping the interval percentiles (see
// Recorder.SeriesUnread).
func (t *requestTimes) dropInterval() { t.interval = nil }
