package metrics

import (
	"slices"
	"time"
)

// timeline is the run's time series (timeseries.csv) and the clock of its
// intervals: each Tick closes the open interval into a row, each concern
// appending its columns in the order of Recorder.columns.
type timeline struct {
	interval time.Duration
	series   *Series
	end      time.Duration // the instant the open interval ends
	foldedAt time.Duration // the last Fold or Tick
	// responses429Column is the position of the run's 429s in a row.
	responses429Column int
}

func newTimeline(interval time.Duration, columns []string) timeline {
	return timeline{interval: interval, series: &Series{Columns: columns}, end: interval,
		responses429Column: slices.Index(columns, "responses_429")}
}

// columns names the columns of a run's rows: the interval's end, the
// run-wide counts, levels and percentiles, then each limiter's, each
// host's and each tenant's columns (see the appendColumns of each). Tick
// appends the values in the same order.
func (r *Recorder) columns() []string {
	columns := []string{"t_s"}
	columns = r.requests.appendColumns(columns)
	columns = r.stages.appendColumns(columns)
	columns = r.times.appendColumns(columns)
	columns = r.limiters.appendColumns(columns)
	columns = r.hosts.appendColumns(columns)
	return r.tenants.appendColumns(columns)
}

// Tick closes the interval ending at NextTick, sampling each limiter's
// usage and each host's quota usage. now is NextTick in a simulation. On
// the wall clock (live mode) it may be later: the row is still stamped
// with the boundary and the next one starts a whole interval on, but what
// happened between the boundary and now (counts, time-weighted areas,
// divided by the nominal interval) lands in this row.
func (r *Recorder) Tick(now time.Duration, limiterUsage, hostUsage, hostPaused []float64) {
	span := float64(r.timeline.interval)
	row := r.timeline.openRow()
	row = r.requests.appendInterval(row)
	row = r.stages.appendInterval(row, now, span)
	row = r.times.appendInterval(row)
	row = r.limiters.appendInterval(row, now, span, limiterUsage)
	row = r.hosts.appendInterval(row, now, span, hostUsage, hostPaused, r.steady(now-r.timeline.interval))
	row = r.tenants.appendInterval(row)
	r.timeline.closeRow(row, now)
}

// count429 adds a 429 to the interval its attempt was sent in, so that an
// interval's 429s never exceed its starts.
func (r *Recorder) count429(sent time.Duration, host int) {
	row, open := r.timeline.rowOf(sent)
	if open {
		r.requests.open429()
		r.hosts.open429(host)
		return
	}
	r.timeline.series.Add(row, r.timeline.responses429Column, 1)
	if column, ok := r.hosts.late429Column(host); ok {
		r.timeline.series.Add(row, column, 1)
	}
}

// openRow returns a row for the open interval, stamped with its end.
func (t *timeline) openRow() []float64 { return append(t.series.Row(), t.end.Seconds()) }

// closeRow appends row, the open interval's, at the tick now, and opens
// the next interval.
func (t *timeline) closeRow(row []float64, now time.Duration) {
	t.series.Append(row)
	t.end += t.interval
	t.foldedAt = now
}

// rowOf returns the row of the interval that holds instant at, and
// whether it is the open interval.
func (t *timeline) rowOf(at time.Duration) (row int, open bool) {
	return int(at / t.interval), at >= t.end-t.interval
}

// Latest returns the column names and the last row closed by Tick (nil
// before the first).
func (r *Recorder) Latest() (columns []string, row []float64) {
	return r.timeline.series.Columns, r.timeline.series.Last()
}

// SeriesUnread stops recording what only a written or charted series
// reads, for a caller that does neither: the interval percentiles
// (request_p50_s … and each limiter's wait_p50_s …) and each host's
// starts, responses_429, quota_usage and quota_utilisation columns. Their
// columns stay in the series, empty (NaN); the host columns are left out
// of the stored rows altogether (Series.leaveOut). The results, the
// diagnoses and a trace read none of them (HOST.paused, which they read,
// is kept). The percentiles cost three histogram records a request; the
// host columns, with a thousand hosts, most of the series and of closing
// each interval. Call it before the first record.
func (r *Recorder) SeriesUnread() {
	r.times.dropInterval()
	r.limiters.dropIntervalWaits()
	r.timeline.series.leaveOut(r.hosts.leaveOut())
}

// NextTick returns the instant the current interval ends.
func (r *Recorder) NextTick() time.Duration { return r.timeline.end }

// NextFold is when the run must next call Fold if it falls before
// NextTick: within an interval longer than foldSpan (about 69 s), the
// time-weighted levels close their integer areas at least every foldSpan.
func (r *Recorder) NextFold() time.Duration { return r.timeline.foldedAt + foldSpan }

// Fold closes the time-weighted levels' integer areas at now, within an
// interval (see NextFold); the interval's row is still written by Tick.
func (r *Recorder) Fold(now time.Duration) {
	r.stages.refold(now)
	r.limiters.refold(now)
	r.hosts.refold(now)
	r.timeline.foldedAt = now
}
