package metrics

import (
	"slices"
	"time"

	"github.com/limitsim/limitsim/internal/prefetch"
)

// hostSet is what the modeled hosts keep: each host's attempts and
// answers, its response and service times, and its quota's use. It fills
// the upstreams of metrics.json and each host's columns of
// timeseries.csv.
type hostSet struct {
	names     []string
	quotas    []QuotaInfo   // by host; nil or zero entries: no quota
	schedules [][]QuotaStep // by host
	warmup    time.Duration
	records   []hostRecord
	bins      *binQueue // bins of the per-host sketches not yet counted
	// firstColumns and responses429Columns are where each host's columns
	// start in a row, and its responses_429 column.
	firstColumns, responses429Columns []int
	// unread: the host columns other than paused are left out of the rows
	// (Recorder.SeriesUnread).
	unread bool
}

// hostRecord is what a host keeps. The counters every attempt moves come
// first, together: with a thousand hosts each attempt reaches a different
// one, and its counters then share a cache line or two.
type hostRecord struct {
	attempts, ok, throttled, pauses  int64
	failed                           int64 // refusals not counted as 429s
	steadyAttempts, steady429        int64 // attempts sent in the steady state, and their 429s
	interval429, intervalStarts      int64
	steadyAdmitted, intervalAdmitted int64    // attempts the quota admitted: steady state, interval
	latency                          hostDist // OK responses as clients read them
	service                          hostDist // the server's service time of OK answers
	usageSum                         float64
	usageSamples                     int64
	permits                          bool  // the host's quota counts attempts in service
	serving                          gauge // admitted attempts in service (concurrency quota)
}

// hostColumnSuffixes are the suffixes of a host's columns in
// timeseries.csv, in order; quota_utilisation only for a host with a
// quota (hasQuotaColumn).
var hostColumnSuffixes = []string{".starts", ".responses_429", ".quota_usage", ".quota_utilisation", ".paused"}

func newHostSet(layout Layout, sketches *sketchMapping) hostSet {
	s := hostSet{names: layout.Hosts, quotas: layout.Quotas, schedules: layout.QuotaSchedules, warmup: layout.Warmup,
		records: make([]hostRecord, len(layout.Hosts)), bins: newBinQueue()}
	compact := len(s.records) > compactAbove
	for i := range s.records {
		h := &s.records[i]
		h.serving.init(layout.Warmup)
		h.latency = newHostDist(compact, sketches)
		h.service = newHostDist(compact, sketches)
		h.permits = i < len(layout.Quotas) && layout.Quotas[i].Permits > 0
	}
	return s
}

func (s *hostSet) steady(t time.Duration) bool { return t >= s.warmup }

// PrefetchHost asks for the record of host, ahead of an arrival to it,
// when there are several.
func (r *Recorder) PrefetchHost(host int) { r.hosts.prefetch(host) }

// Served records the server's work on an attempt that started at start
// and took service (the model's service time: only OK answers, including
// those whose client had already given up). start is the instant of the
// call, or later than the last tick: the time-weighted levels never move
// back past a tick.
func (r *Recorder) Served(start time.Duration, host int, service time.Duration, ok bool) {
	if ok {
		r.hosts.served(start, host, service)
	}
}

// ServedDone records the end of the server's work on an admitted attempt
// that started at start.
func (r *Recorder) ServedDone(now, start time.Duration, host int) { r.hosts.servedDone(now, host) }

// Paused counts a pause episode on host: a 429 that paused a host of an
// instance that was not paused (a 429 that only extends a pause is not a
// new episode).
func (r *Recorder) Paused(host int) { r.hosts.paused(host) }

// prefetch asks for host's record when there are several.
func (s *hostSet) prefetch(host int) {
	if len(s.records) > 1 {
		prefetch.Of(&s.records[host])
	}
}

// sent counts an attempt sent to host at now.
func (s *hostSet) sent(now time.Duration, host int) {
	h := &s.records[host]
	h.attempts++
	h.intervalStarts++
	if s.steady(now) {
		h.steadyAttempts++
	}
}

// answeredOK records an OK answer at now to an attempt sent at since.
func (s *hostSet) answeredOK(now, since time.Duration, host int) {
	h := &s.records[host]
	h.ok++
	if s.steady(since) {
		h.latency.add(now-since, s.bins)
	}
}

// throttled counts a 429 answer to an attempt sent at since; the
// interval's count is kept by count429.
func (s *hostSet) throttled(since time.Duration, host int) {
	h := &s.records[host]
	h.throttled++
	if s.steady(since) {
		h.steady429++
	}
}

// open429 counts a 429 in the open interval.
func (s *hostSet) open429(host int) { s.records[host].interval429++ }

// late429Column is host's responses_429 column, to count a 429 in a row
// already closed; false when the host columns are left out.
func (s *hostSet) late429Column(host int) (int, bool) {
	return s.responses429Columns[host], !s.unread
}

// paused counts a pause episode on host.
func (s *hostSet) paused(host int) { s.records[host].pauses++ }

// served records the server's work on an admitted attempt.
func (s *hostSet) served(start time.Duration, host int, service time.Duration) {
	h := &s.records[host]
	if s.steady(start) {
		h.service.add(service, s.bins)
		h.steadyAdmitted++
	}
	h.intervalAdmitted++
	if h.permits {
		h.serving.move(start, s.warmup, 1)
	}
}

// servedDone records the end of the server's work on an admitted attempt.
func (s *hostSet) servedDone(now time.Duration, host int) {
	if h := &s.records[host]; h.permits {
		h.serving.move(now, s.warmup, -1)
	}
}

// hasQuotaColumn reports whether host i's rows have a quota_utilisation
// column: whether the host has a quota.
func (s *hostSet) hasQuotaColumn(i int) bool {
	return i < len(s.quotas) && s.quotas[i] != (QuotaInfo{})
}

// columnSuffixes returns the suffixes of host i's columns, in order.
func (s *hostSet) columnSuffixes(i int) []string {
	if s.hasQuotaColumn(i) {
		return hostColumnSuffixes
	}
	return slices.DeleteFunc(slices.Clone(hostColumnSuffixes), func(suffix string) bool { return suffix == ".quota_utilisation" })
}

// appendColumns appends the names of each host's columns and notes where
// they start and where its responses_429 column is.
func (s *hostSet) appendColumns(columns []string) []string {
	s.firstColumns, s.responses429Columns = s.firstColumns[:0], s.responses429Columns[:0]
	for i, host := range s.names {
		s.firstColumns = append(s.firstColumns, len(columns))
		for _, suffix := range s.columnSuffixes(i) {
			if suffix == ".responses_429" {
				s.responses429Columns = append(s.responses429Columns, len(columns))
			}
			columns = append(columns, host+suffix)
		}
	}
	return columns
}

// leaveOut stops keeping the host columns other than paused (which the
// results, the diagnoses and a trace read) and returns their positions in
// a row (see Recorder.SeriesUnread).
func (s *hostSet) leaveOut() []int {
	s.unread = true
	var out []int
	for i, first := range s.firstColumns {
		for k, suffix := range s.columnSuffixes(i) {
			if suffix != ".paused" {
				out = append(out, first+k)
			}
		}
	}
	return out
}

// appendInterval closes each host's interval ending at now (span ns long)
// into row, with usage and paused, each host's quota usage and pause
// sampled at the tick; steady: the interval is in the steady state.
func (s *hostSet) appendInterval(row []float64, now time.Duration, span float64, usage, paused []float64, steady bool) []float64 {
	for i := range s.records {
		h := &s.records[i]
		var serving float64 // a count that never moves (no concurrency quota) has no area to fold
		if h.permits {
			serving = h.serving.fold(now, s.warmup)
		}
		if !s.unread { // SeriesUnread leaves these columns out of the rows (leaveOut)
			row = append(row, float64(h.intervalStarts), float64(h.interval429), usage[i])
			if utilisation, ok := s.quotaUtilisation(i, h.intervalAdmitted, serving, span); ok {
				row = append(row, utilisation)
			}
		}
		row = append(row, paused[i])
		h.interval429, h.intervalStarts, h.intervalAdmitted = 0, 0, 0
		if steady {
			h.usageSum += usage[i]
			h.usageSamples++
		}
	}
	return row
}

// refold closes the hosts' integer areas at now, within an interval.
func (s *hostSet) refold(now time.Duration) {
	for i := range s.records {
		if s.records[i].permits {
			s.records[i].serving.refold(now, s.warmup)
		}
	}
}

// quotaUtilisation is the share of host's quota used over span ns, and
// false when the host has no quota. A host with both a concurrency quota
// and a rate or window quota reports the more used of the two: the one
// that binds (a 100-permit quota in front of 5,000 requests an hour is
// barely used while the hourly window runs dry).
func (s *hostSet) quotaUtilisation(host int, admitted int64, servingArea, span float64) (float64, bool) {
	var quota QuotaInfo
	if host < len(s.quotas) {
		quota = s.quotas[host]
	}
	if span <= 0 {
		return 0, quota != QuotaInfo{}
	}
	utilisation, ok := 0.0, false
	if quota.Permits > 0 {
		utilisation, ok = servingArea/span/float64(quota.Permits), true
	}
	if quota.PerSecond > 0 {
		utilisation, ok = max(utilisation, float64(admitted)/(quota.PerSecond*span/1e9)), true
	}
	return utilisation, ok
}

// stats closes every host's figures at end; window is the steady state in
// ns.
func (s *hostSet) stats(end time.Duration, window float64) []UpstreamStats {
	s.bins.flush()
	out := make([]UpstreamStats, 0, len(s.names))
	for i := range s.names {
		out = append(out, s.hostStats(i, end, window))
	}
	return out
}

// hostStats closes host i's figures at end.
func (s *hostSet) hostStats(i int, end time.Duration, window float64) UpstreamStats {
	h := &s.records[i]
	h.serving.fold(end, s.warmup)
	out := UpstreamStats{Host: s.names[i], Attempts: h.attempts, OK: h.ok,
		Throttled: h.throttled, Failed: h.failed, Rate429: Ratio(float64(h.steady429), float64(h.steadyAttempts)),
		PerMinute429: float64(h.steady429) / window * 1e9 * 60, Pauses: h.pauses, LatencyS: h.latency.dist(),
		ServiceS: h.service.dist(), QuotaSaturation: Ratio(h.usageSum, float64(h.usageSamples))}
	if utilisation, ok := s.quotaUtilisation(i, h.steadyAdmitted, h.serving.area, window); ok {
		out.QuotaUtilisation = &utilisation
	}
	if i < len(s.quotas) && s.quotas[i].PerSecond > 0 {
		perSecond := s.quotas[i].PerSecond
		out.QuotaRPS = &perSecond
	}
	if i < len(s.schedules) {
		out.QuotaSchedule = s.schedules[i]
	}
	return out
}
