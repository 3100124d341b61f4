package metrics

import (
	"math"
	"slices"
	"time"

	"github.com/limitsim/limitsim/internal/prefetch"
)

// RequestEnd is how a request ended.
type RequestEnd uint8

// Request outcomes.
const (
	Succeeded RequestEnd = iota
	Throttled
	RejectedIngest
	RejectedLimiter
	AcquireTimeout
	TimedOut
)

// LimiterInfo describes one named limiter for the recorder.
type LimiterInfo struct {
	Name, Kind, Scope string
	Releases          bool
	// Scopes names the limiter's scope keys (hosts or tenants); one key,
	// "global", for a global limiter.
	Scopes []string
	// Capacity is what one limiter object allows: units per second for a
	// rate or window limiter (its rate, or limit ÷ window), permits for a
	// concurrency limiter. Each scope has one object per client instance.
	Capacity float64
	// Cost is the units one grant takes.
	Cost int64
	// Charged: the units vary by grant (a request's cost drawn from a
	// distribution, a reservation and its reconciliation) and are recorded
	// by LimiterCharged rather than counted as grants × Cost.
	Charged bool
	// Family is "rate", "window" or "concurrency".
	Family string
	// Adaptive: the limit moves during the run (aimd); timeseries.csv has
	// its NAME.limit column.
	Adaptive bool
}

// QuotaInfo describes a host's server-side quota for the recorder; the
// zero QuotaInfo is no quota.
type QuotaInfo struct {
	PerSecond float64 // requests per second a rate or window quota admits
	Permits   int64   // a concurrency quota's permits
}

// Layout is the static shape of a run: what the recorder keeps apart.
type Layout struct {
	Scenario string
	Seed     uint64
	Warmup   time.Duration
	Interval time.Duration
	Ingest   string // "queue" or "tasks"
	Limiters []LimiterInfo
	Hosts    []string
	Quotas   []QuotaInfo // by host; nil or zero entries: no quota
	// QuotaSchedules are the hosts' quota rate changes, by host.
	QuotaSchedules [][]QuotaStep
	Tenants        []string

	RequestTimeout, AcquireTimeout time.Duration
	Instances                      int
}

type limiterRec struct {
	waiting            level
	waitGranted        *hist         // granted acquisitions
	limit              float64       // adaptive: the limit per object at the last Limits
	limitArea          float64       // adaptive: ∫ limit dt over the steady state's intervals (limit·s)
	limitTime          float64       // … and their length (s)
	ivWait             *intervalHist // waits of acquisitions that ended in the interval
	waitOther          *hist         // acquisitions that gave up or were withdrawn; nil until one does
	acquired, rejected int64
	timeouts, waited   int64
	usageSum, usageMax float64
	usageN             int64
	ivAcquired         int64
	ssAcquired         int64   // grants made in the steady state
	ivUnits, ssUnits   float64 // Charged: units taken in the interval, and in the steady state
	held               gauge   // concurrency: grants holding a permit
	scopes             []scopeRec
	scopeCold          []scopeCold  // by scope, as scopes
	scopeHeld          []scopeGauge // concurrency with scopes: each scope's grants holding a permit; nil otherwise
	scoped             bool         // per host or tenant: scopes are reported
	releases           bool         // a concurrency limiter: grants hold a permit until released
}

// scopeRec is what a limiter's scope keeps: thousands of them are touched
// at random, one per request, so it holds nothing a scope may not need
// (the permits a concurrency limiter's scopes hold are in
// limiterRec.scopeHeld).
type scopeRec struct {
	acquired, ssAcquired int64
	wait                 sketch // unused for a global limiter (its scopes are not reported)
}

// scopeCold is what a limiter's scope keeps that most requests leave
// alone: kept apart, so that scopeRec fills one cache line. How many of
// a scope's acquisitions waited is not kept: its wait sketch counts them
// (its values less its zeros).
type scopeCold struct {
	rejected, timeouts int64
	ssUnits            float64 // Charged: units taken in the steady state
}

// hostRec is what a host keeps. The counters every attempt moves come
// first, together: with a thousand hosts each attempt reaches a different
// one, and its counters then share a cache line or two.
type hostRec struct {
	attempts, ok, throttled, pauses int64
	ssAttempts, ss429               int64
	iv429, ivStarts                 int64
	ssAdmitted, ivAdmitted          int64 // attempts the quota admitted: steady state, interval
	latency                         dist2 // OK responses as clients read them
	service                         dist2 // the server's service time of OK answers
	usageSum                        float64
	usageN                          int64
	permits                         bool  // the host's quota counts attempts in service
	serving                         gauge // admitted attempts in service (concurrency quota)
}

// tenantRec is what a tenant keeps, in one cache line: ten thousand
// tenants are each reached at random, on arrival and at the end.
type tenantRec struct {
	arrived, succeeded int64
	wait               sketch
}

// tenantIv is a tenant's counts in the interval Tick closes next, kept
// when the tenants are in the time series.
type tenantIv struct{ arrived, succeeded int64 }

// Recorder streams a run's measurements into histograms, time-weighted
// levels and fixed-width interval rows. Its memory depends on the layout and
// the simulated duration, never on the number of requests.
type Recorder struct {
	lay      Layout
	req      Requests
	system   stage
	inflight level
	queue    level
	blocked  level
	qwait    *hist
	e2e      *hist         // arrival to success, steady-state arrivals
	ivReq    *intervalHist // arrival to success of the requests that succeeded in the interval
	lims     []limiterRec
	hosts    []hostRec
	tenants  []tenantRec
	tenantIv []tenantIv     // by tenant, when the tenants are in the time series; nil otherwise
	sk       *sketchMapping // sharedSketchMapping(): the mapping of the recorder's sketches

	ssArrived, ssStarted, ssSucceeded, ss429 int64

	series      *Series
	host429     []int // each host's responses_429 column
	hostsUnread bool  // the series' host columns other than paused are left empty (SeriesUnread)
	iv          intervalCounts
	ivEnd       time.Duration
	foldedAt    time.Duration // the last Fold or Tick
	bins        *binQueue     // bins of the per-host sketches not yet counted
}

type intervalCounts struct {
	arrivals, starts, ok, throttled, rejected, timeouts int64
}

// NewRecorder returns a recorder for the layout.
func NewRecorder(lay Layout) *Recorder {
	if lay.Interval <= 0 {
		lay.Interval = time.Second
	}
	r := &Recorder{lay: lay, qwait: newHist(), e2e: newHist(), ivReq: newIntervalHist(), ivEnd: lay.Interval, bins: newBinQueue()}
	r.lims = make([]limiterRec, len(lay.Limiters))
	sketches := sharedSketchMapping()
	for i, l := range lay.Limiters {
		r.lims[i].waitGranted = newHist()
		r.lims[i].ivWait = newIntervalHist()
		r.lims[i].scopes = make([]scopeRec, len(l.Scopes))
		r.lims[i].scopeCold = make([]scopeCold, len(l.Scopes))
		r.lims[i].scoped = l.Scope != "global"
		r.lims[i].releases = l.Releases
		if l.Releases && (len(l.Scopes) > 1 || l.Scope != "global") {
			r.lims[i].scopeHeld = make([]scopeGauge, len(l.Scopes))
		}
	}
	r.hosts = make([]hostRec, len(lay.Hosts))
	for _, l := range r.levels() {
		l.init(lay.Warmup)
	}
	for i := range r.lims {
		r.lims[i].waiting.init(lay.Warmup)
		r.lims[i].held.init(lay.Warmup)
	}
	for i := range r.hosts {
		r.hosts[i].serving.init(lay.Warmup)
		compact := len(r.hosts) > compactAbove
		r.hosts[i].latency = newDist2(compact, sketches)
		r.hosts[i].service = newDist2(compact, sketches)
		r.hosts[i].permits = i < len(lay.Quotas) && lay.Quotas[i].Permits > 0
	}
	r.tenants = make([]tenantRec, len(lay.Tenants))
	if tenantSeries(lay) {
		r.tenantIv = make([]tenantIv, len(lay.Tenants))
	}
	r.sk = sketches
	r.series, r.host429 = newSeries(lay)
	return r
}

func (r *Recorder) steady(t time.Duration) bool { return t >= r.lay.Warmup }

// PrefetchTenant asks for the record of tenant, ahead of its next
// arrival, when there are several.
func (r *Recorder) PrefetchTenant(tenant int) {
	if len(r.tenants) > 1 {
		prefetch.Of(&r.tenants[tenant])
	}
}

// PrefetchHost asks for the record of host, ahead of an arrival to it,
// when there are several.
func (r *Recorder) PrefetchHost(host int) {
	if len(r.hosts) > 1 {
		prefetch.Of(&r.hosts[host])
	}
}

// PrefetchScope asks for the record of limiter lim's scope ahead of an
// acquisition.
func (r *Recorder) PrefetchScope(lim, scope int) {
	prefetch.Of(&r.lims[lim].scopes[scope])
}

// Arrived counts a new request of tenant.
func (r *Recorder) Arrived(now time.Duration, tenant int) {
	r.req.Arrived++
	r.tenants[tenant].arrived++
	if r.tenantIv != nil {
		r.tenantIv[tenant].arrived++
	}
	r.iv.arrivals++
	if r.steady(now) {
		r.ssArrived++
	}
	r.system.enter(now)
}

// Ended records a request's outcome; since is its arrival and waited the
// total time it spent waiting on limiters.
func (r *Recorder) Ended(now, since time.Duration, tenant int, o RequestEnd, waited time.Duration) {
	r.system.leave(now, since)
	switch o {
	case Succeeded:
		r.req.Succeeded++
		r.tenants[tenant].succeeded++
		if r.tenantIv != nil {
			r.tenantIv[tenant].succeeded++
		}
		r.iv.ok++
		if r.steady(now) {
			r.ssSucceeded++
		}
		if r.steady(since) {
			r.e2e.add(now - since)
		}
		r.ivReq.add(now - since)
	case Throttled:
		r.req.Throttled429++
	case RejectedIngest:
		r.req.Rejected++
		r.req.RejectedIngest++
		r.iv.rejected++
	case RejectedLimiter:
		r.req.Rejected++
		r.req.RejectedLimiter++
		r.iv.rejected++
	case AcquireTimeout:
		r.req.AcquireTimeouts++
		r.iv.timeouts++
	case TimedOut:
		r.req.TimedOut++
		r.iv.timeouts++
	}
	if len(r.tenants) > 1 && o != RejectedIngest && r.steady(since) { // tenants are reported when there are several
		r.tenants[tenant].wait.add(waited, r.sk)
	}
}

// QueueIn and QueueOut track the ingest queue; since is when the item was
// put.
func (r *Recorder) QueueIn(now time.Duration) { r.queue.enter(now, r.lay.Warmup) }

// QueueOut records an item leaving the ingest queue.
func (r *Recorder) QueueOut(now, since time.Duration) {
	r.queue.leave(now, since, r.lay.Warmup)
	if r.steady(since) {
		r.qwait.add(now - since)
	}
}

// Blocked moves the count of producers blocked on a full queue.
func (r *Recorder) Blocked(now time.Duration, delta int64) {
	r.blocked.move(now, r.lay.Warmup, delta)
	if r.steady(now) {
		r.blocked.max = max(r.blocked.max, r.blocked.n)
	}
}

// LimiterPassed records an acquisition granted at once.
func (r *Recorder) LimiterPassed(now time.Duration, lim, scope int) {
	l := &r.lims[lim]
	s := &l.scopes[scope]
	l.acquired++
	l.ivAcquired++
	s.acquired++
	l.waiting.entries++
	l.ivWait.add(0)
	steady := r.steady(now)
	if steady {
		l.waitGranted.addZero()
		if l.scoped {
			s.wait.add(0, r.sk)
		}
	}
	r.granted(now, steady, l, s, scope)
}

// granted counts a grant of limiter l at scope s (index scope) for
// utilisation: a grant in the steady state (steady: now is in it), and for
// a concurrency limiter a permit now held.
func (r *Recorder) granted(now time.Duration, steady bool, l *limiterRec, s *scopeRec, scope int) {
	if steady {
		l.ssAcquired++
		s.ssAcquired++
	}
	if l.releases {
		l.held.move(now, r.lay.Warmup, 1)
		if l.scopeHeld != nil {
			l.scopeHeld[scope].add(now, r.lay.Warmup, 1)
		}
	}
}

// LimiterReleased records a permit of a concurrency limiter given back.
func (r *Recorder) LimiterReleased(now time.Duration, lim, scope int) {
	l := &r.lims[lim]
	l.held.move(now, r.lay.Warmup, -1)
	if l.scopeHeld != nil {
		l.scopeHeld[scope].add(now, r.lay.Warmup, -1)
	}
}

// LimiterCharged records units limiter lim took (or, negative, gave back)
// at scope, for a limiter whose Layout marks it Charged: a grant's units,
// and a reservation's reconciliation when its answer arrives.
func (r *Recorder) LimiterCharged(now time.Duration, lim, scope int, units float64) {
	l := &r.lims[lim]
	l.ivUnits += units
	if r.steady(now) {
		l.ssUnits += units
		l.scopeCold[scope].ssUnits += units
	}
}

// LimiterParked records an acquisition that joined the waiting line.
func (r *Recorder) LimiterParked(now time.Duration, lim int) {
	r.lims[lim].waiting.enter(now, r.lay.Warmup)
}

// Leave says how a parked acquisition ended.
type Leave uint8

// How parked acquisitions end.
const (
	// Granted: the limiter granted it.
	LeftGranted Leave = iota
	// GaveUp: the acquisition timeout withdrew it.
	LeftGaveUp
	// Withdrawn: the request ended elsewhere (its deadline) and left the line.
	LeftWithdrawn
	// LeftStuck: the run stopped early (a deadlock, a guard, an interrupt)
	// with the acquisition still parked; it is counted with the time it
	// had waited.
	LeftStuck
)

// LimiterLeft records a parked acquisition that ended: granted, or given
// up (its acquisition timeout, or its request's deadline) after waiting
// now − since. Every ended acquisition is in the wait distribution; the
// granted ones are also in the granted-only one.
func (r *Recorder) LimiterLeft(now, since time.Duration, lim, scope int, how Leave) {
	l := &r.lims[lim]
	s := &l.scopes[scope]
	d := now - since
	l.ivWait.add(d)
	if r.steady(since) {
		if l.scoped {
			s.wait.add(d, r.sk)
		}
		if d > 0 {
			l.waited++
		}
		if how == LeftGranted {
			l.waitGranted.add(d)
		} else {
			if l.waitOther == nil {
				l.waitOther = newHist()
			}
			l.waitOther.add(d)
		}
	}
	switch how {
	case LeftGaveUp:
		l.timeouts++
		l.scopeCold[scope].timeouts++
	case LeftGranted:
		l.acquired++
		l.ivAcquired++
		s.acquired++
		r.granted(now, r.steady(now), l, s, scope)
	}
	l.waiting.leave(now, since, r.lay.Warmup)
}

// LimiterRejected records an acquisition refused at once (line full, too
// large, too late).
func (r *Recorder) LimiterRejected(lim, scope int) {
	r.lims[lim].rejected++
	r.lims[lim].scopeCold[scope].rejected++
}

// LimiterTimedOut records an acquisition refused at once because it could
// not be granted before its deadline; it counts as a timeout.
func (r *Recorder) LimiterTimedOut(lim, scope int) {
	r.lims[lim].timeouts++
	r.lims[lim].scopeCold[scope].timeouts++
}

// Sent records an attempt reaching host.
func (r *Recorder) Sent(now time.Duration, host int) {
	h := &r.hosts[host]
	h.attempts++
	h.ivStarts++
	r.req.Attempts++
	r.iv.starts++
	if r.steady(now) {
		r.ssStarted++
		h.ssAttempts++
	}
	r.inflight.enter(now, r.lay.Warmup)
}

// Answered records the response to an attempt sent at since.
func (r *Recorder) Answered(now, since time.Duration, host int, ok bool) {
	h := &r.hosts[host]
	r.inflight.leave(now, since, r.lay.Warmup)
	if ok {
		h.ok++
		if r.steady(since) {
			h.latency.add(now-since, r.bins)
		}
		return
	}
	h.throttled++
	r.req.Responses429++
	r.count429(since, host)
	if r.steady(since) {
		h.ss429++
		r.ss429++
	}
}

// count429 adds a 429 to the interval its attempt was sent in, so that an
// interval's 429s never exceed its starts.
func (r *Recorder) count429(sent time.Duration, host int) {
	if sent >= r.ivEnd-r.lay.Interval { // the open interval
		r.iv.throttled++
		r.hosts[host].iv429++
		return
	}
	i := int(sent / r.lay.Interval)
	r.series.Add(i, colResponses429, 1)
	if !r.hostsUnread {
		r.series.Add(i, r.host429[host], 1)
	}
}

// Served records the server's work on an attempt that started at start
// and took service (the model's service time: only OK answers, including
// those whose client had already given up). start is the instant of the
// call, or later than the last tick: the time-weighted levels never move
// back past a tick.
func (r *Recorder) Served(start time.Duration, host int, service time.Duration, ok bool) {
	if !ok {
		return
	}
	h := &r.hosts[host]
	if r.steady(start) {
		h.service.add(service, r.bins)
		h.ssAdmitted++
	}
	h.ivAdmitted++
	if h.permits {
		h.serving.move(start, r.lay.Warmup, 1)
	}
}

// ServedDone records the end of the server's work on an admitted attempt
// that started at start.
func (r *Recorder) ServedDone(now, start time.Duration, host int) {
	if h := &r.hosts[host]; h.permits {
		h.serving.move(now, r.lay.Warmup, -1)
	}
}

// Abandoned records an attempt whose client gave up while it was in flight.
func (r *Recorder) Abandoned(now, since time.Duration) { r.inflight.leave(now, since, r.lay.Warmup) }

// Retried counts a retry.
func (r *Recorder) Retried() { r.req.Retries++ }

// RetryDenied counts a retry the retry budget refused.
func (r *Recorder) RetryDenied() { r.req.RetriesDenied++ }

// Paused counts a pause episode on host: a 429 that paused a host of an
// instance that was not paused (a 429 that only extends a pause is not a
// new episode).
func (r *Recorder) Paused(host int) { r.hosts[host].pauses++ }

// Tick closes the interval ending at NextTick, sampling each limiter's
// usage and each host's quota usage. now is NextTick in a simulation. On
// the wall clock (live mode) it may be later: the row is still stamped
// with the boundary and the next one starts a whole interval on, but what
// happened between the boundary and now (counts, time-weighted areas,
// divided by the nominal interval) lands in this row.
func (r *Recorder) Tick(now time.Duration, limUsage, hostUsage, hostPaused []float64) {
	w := r.lay.Warmup
	span := float64(r.lay.Interval)
	row := r.series.Row()
	row = append(row, r.ivEnd.Seconds(), float64(r.iv.arrivals), float64(r.iv.starts), float64(r.iv.ok),
		float64(r.iv.throttled), float64(r.iv.rejected), float64(r.iv.timeouts),
		r.inflight.fold(now, w)/span, r.system.fold(now)/span, r.queue.fold(now, w)/span, r.blocked.fold(now, w)/span)
	p50, p95, p99 := r.ivReq.take()
	row = append(row, p50, p95, p99)
	for i := range r.lims {
		l := &r.lims[i]
		u := limUsage[i]
		waiting := l.waiting.fold(now, w)
		util := r.utilisation(i, r.units(i, l.ivAcquired, l.ivUnits), l.held.fold(now, w), span, r.objects(i))
		if r.lay.Limiters[i].Adaptive && r.steady(now-r.lay.Interval) {
			l.limitArea += l.limit * r.lay.Interval.Seconds()
			l.limitTime += r.lay.Interval.Seconds()
		}
		w50, w95, w99 := l.ivWait.take()
		row = append(row, waiting/span, u, float64(l.ivAcquired), util, w50, w95, w99)
		if r.lay.Limiters[i].Adaptive {
			row = append(row, l.limit)
		}
		l.ivAcquired, l.ivUnits = 0, 0
		if r.steady(now - r.lay.Interval) {
			l.usageSum += u
			l.usageN++
			l.usageMax = max(l.usageMax, u)
		}
	}
	steady := r.steady(now - r.lay.Interval)
	for i := range r.hosts {
		h := &r.hosts[i]
		var serving float64 // a count that never moves (no concurrency quota) has no area to fold
		if h.permits {
			serving = h.serving.fold(now, w)
		}
		if !r.hostsUnread { // SeriesUnread leaves these columns out of the rows

			row = append(row, float64(h.ivStarts), float64(h.iv429), hostUsage[i])
			if util, ok := r.quotaUtilisation(i, h.ivAdmitted, serving, span); ok {
				row = append(row, util)
			}
		}
		row = append(row, hostPaused[i])
		h.iv429, h.ivStarts, h.ivAdmitted = 0, 0, 0
		if steady {
			h.usageSum += hostUsage[i]
			h.usageN++
		}
	}
	for i := range r.tenantIv {
		t := &r.tenantIv[i]
		row = append(row, float64(t.arrived), float64(t.succeeded))
		*t = tenantIv{}
	}
	r.series.Append(row)
	r.iv = intervalCounts{}
	r.ivEnd += r.lay.Interval
	r.foldedAt = now
}

// Limits records each adaptive limiter's limit (per object, averaged over
// its objects) for the row the next Tick closes; other entries are unused.
func (r *Recorder) Limits(values []float64) {
	for i := range r.lims {
		if i < len(values) {
			r.lims[i].limit = values[i]
		}
	}
}

// Latest returns the column names and the last row closed by Tick (nil
// before the first).
func (r *Recorder) Latest() (columns []string, row []float64) {
	return r.series.Columns, r.series.Last()
}

// objects is how many limiter objects limiter i has: one per scope per
// client instance.
func (r *Recorder) objects(i int) float64 {
	if r.lay.Limiters[i].Scope == "cluster" { // one object in the shared store
		return 1
	}
	return float64(len(r.lay.Limiters[i].Scopes) * max(1, r.lay.Instances))
}

// units is what limiter i's grants took: the units recorded for a Charged
// limiter, otherwise grants × its cost.
func (r *Recorder) units(i int, grants int64, charged float64) float64 {
	if info := &r.lay.Limiters[i]; info.Charged {
		return charged
	}
	return float64(grants * max(1, r.lay.Limiters[i].Cost))
}

// utilisation is the share of limiter i's capacity used over span ns by
// objects limiter objects: permits held (heldArea, permit·ns) ÷ permits for
// a concurrency limiter, units taken ÷ units allowed for a rate or window
// limiter.
func (r *Recorder) utilisation(i int, units, heldArea, span, objects float64) float64 {
	info := r.lay.Limiters[i]
	capacity := info.Capacity
	if info.Adaptive { // the limit in force, not the most it could reach
		capacity = r.lims[i].limit
		if span != float64(r.lay.Interval) && r.lims[i].limitTime > 0 {
			capacity = r.lims[i].limitArea / r.lims[i].limitTime
		}
	}
	if capacity <= 0 || span <= 0 || objects <= 0 {
		return 0
	}
	if info.Releases {
		return heldArea / span / (capacity * objects)
	}
	return units / (capacity * objects * span / 1e9)
}

// quotaUtilisation is the share of host's quota used over span ns, and
// false when the host has no quota. A host with both a concurrency quota
// and a rate or window quota reports the more used of the two: the one
// that binds (a 100-permit quota in front of 5,000 requests an hour is
// barely used while the hourly window runs dry).
func (r *Recorder) quotaUtilisation(host int, admitted int64, servingArea, span float64) (float64, bool) {
	var q QuotaInfo
	if host < len(r.lay.Quotas) {
		q = r.lay.Quotas[host]
	}
	if span <= 0 {
		return 0, q != QuotaInfo{}
	}
	util, ok := 0.0, false
	if q.Permits > 0 {
		util, ok = servingArea/span/float64(q.Permits), true
	}
	if q.PerSecond > 0 {
		util, ok = max(util, float64(admitted)/(q.PerSecond*span/1e9)), true
	}
	return util, ok
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
	r.ivReq = nil
	for i := range r.lims {
		r.lims[i].ivWait = nil
	}
	r.hostsUnread = true
	var out []int
	for i, c := range r.host429 { // starts, responses_429, quota_usage[, quota_utilisation], paused
		out = append(out, c-1, c, c+1)
		if quotaColumn(&r.lay, i) {
			out = append(out, c+2)
		}
	}
	r.series.leaveOut(out)
}

// NextTick returns the instant the current interval ends.
func (r *Recorder) NextTick() time.Duration { return r.ivEnd }

// levels are the recorder's own time-weighted levels (the limiters' and
// hosts' are in their records).
func (r *Recorder) levels() []*level { return []*level{&r.inflight, &r.queue, &r.blocked} }

// NextFold is when the run must next call Fold if it falls before
// NextTick: within an interval longer than foldSpan (about 69 s), the
// time-weighted levels close their integer areas at least every foldSpan.
func (r *Recorder) NextFold() time.Duration { return r.foldedAt + foldSpan }

// Fold closes the time-weighted levels' integer areas at now, within an
// interval (see NextFold); the interval's row is still written by Tick.
func (r *Recorder) Fold(now time.Duration) {
	w := r.lay.Warmup
	r.system.refold(now)
	for _, l := range r.levels() {
		l.refold(now, w)
	}
	for i := range r.lims {
		r.lims[i].waiting.refold(now, w)
		r.lims[i].held.refold(now, w)
	}
	for i := range r.hosts {
		if r.hosts[i].permits {
			r.hosts[i].serving.refold(now, w)
		}
	}
	r.foldedAt = now
}

// Ratio returns a ÷ b, or 0 when b is 0 (a share of nothing is reported as 0).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// little checks L = λW over the whole run, from instant 0 to its end: for a
// run that drains, every request that entered a stage also left it, so a
// difference beyond rounding means the measurements disagree. areaAll is
// the stage's ∫ n dt over the whole run, entries the entries that left it
// and sojourns the ns they spent in it.
func little(stage string, areaAll float64, entries int64, sojourns, window float64) Little {
	L := areaAll / window
	lambda := float64(entries) / window * 1e9
	W := Ratio(sojourns, float64(entries)) / 1e9
	return Little{Stage: stage, L: L, Lambda: lambda, W: W, RelError: Ratio(math.Abs(L-lambda*W), L)}
}

// Finish closes the run at end (its last completion) and returns its
// results. arrivalsEnd is when arrivals stopped: the offered rate is
// arrivals over the steady part of the arrival window, so an overload stays
// visible however long the backlog takes to drain.
func (r *Recorder) Finish(end, arrivalsEnd time.Duration, events uint64, stop Stop) (*Results, *Series) {
	w := r.lay.Warmup
	r.system.fold(end)
	for _, l := range r.levels() {
		l.fold(end, w)
	}
	for i := range r.lims {
		r.lims[i].waiting.fold(end, w)
	}
	window := float64(end - w)
	if window <= 0 {
		// No steady state: the run ended at or before the warm-up's end
		// (a warning says so). Every steady-state rate, mean and share is
		// 0, as over an unbounded window, even for what happened at the
		// warm-up's very end.
		window = math.Inf(1)
	}
	res := &Results{Scenario: r.lay.Scenario, Seed: r.lay.Seed, Complete: stop.IsZero(), Stop: stop,
		ElapsedS: end.Seconds(), WarmupS: w.Seconds(), IntervalS: r.lay.Interval.Seconds(), Events: events,
		RequestTimeoutS: r.lay.RequestTimeout.Seconds(), AcquireTimeoutS: r.lay.AcquireTimeout.Seconds(),
		Instances: max(1, r.lay.Instances)}
	res.Requests = r.req
	res.Limiters, res.Upstreams, res.Little = []LimiterStats{}, []UpstreamStats{}, []Little{}
	res.Requests.InProgress = r.system.n
	perSec := 1e9 / window
	offerWindow := float64(min(arrivalsEnd, end) - w)
	if offerWindow <= 0 {
		offerWindow = window
	}
	res.Throughput = Throughput{OfferedRPS: float64(r.ssArrived) * 1e9 / offerWindow, StartedRPS: float64(r.ssStarted) * perSec,
		GoodputRPS: float64(r.ssSucceeded) * perSec, Rate429RPS: float64(r.ss429) * perSec, WindowS: max(0, end-w).Seconds()}
	res.Rate429 = Ratio(float64(r.ss429), float64(r.ssStarted))
	res.RequestS = r.e2e.dist()
	res.SuccessRatio = Ratio(float64(r.req.Succeeded), float64(r.req.Arrived)) // a request still in progress has not succeeded
	for i := range r.lay.Limiters {
		res.Limiters = append(res.Limiters, r.limiterStats(i, end, window))
	}
	res.InFlight = Level{Mean: r.inflight.area / window, Max: r.inflight.peak()}
	res.Queue = QueueStats{Kind: r.lay.Ingest, MeanDepth: r.queue.area / window, MaxDepth: r.queue.peak(),
		MaxBlocked: r.blocked.peak(), WaitS: r.qwait.dist()}
	for i := range r.lay.Hosts {
		res.Upstreams = append(res.Upstreams, r.upstreamStats(i, end, window))
	}
	if len(r.lay.Tenants) > 1 {
		res.Tenants, res.TenantJain = r.tenantStats()
		res.TenantsTotal = len(res.Tenants)
	}
	whole := float64(max(end, 1))
	if r.lay.Ingest == "queue" {
		res.Little = append(res.Little, little("ingest queue", r.queue.areaAll, r.queue.entries, r.queue.sojourns, whole))
	}
	for i, info := range r.lay.Limiters {
		w := &r.lims[i].waiting
		res.Little = append(res.Little, little("limiter "+info.Name, w.areaAll, w.entries, w.sojourns, whole))
	}
	f, sys := &r.inflight, &r.system
	res.Little = append(res.Little, little("upstream in flight", f.areaAll, f.entries, f.sojourns, whole),
		little("system", sys.areaAll, sys.entries, sys.sojourns, whole))
	return res, r.series
}

// limiterStats closes limiter i's figures at end; window is the steady
// state in ns.
func (r *Recorder) limiterStats(i int, end time.Duration, window float64) LimiterStats {
	info, l := r.lay.Limiters[i], &r.lims[i]
	l.held.fold(end, r.lay.Warmup)
	all := l.waitGranted // every acquisition that ended: granted or not
	if l.waitOther != nil {
		all = l.waitGranted.merged(l.waitOther)
	}
	out := LimiterStats{Name: info.Name, Kind: info.Kind, Scope: info.Scope, Acquired: l.acquired,
		Rejected: l.rejected, Timeouts: l.timeouts, WaitS: all.dist(), WaitGrantedS: l.waitGranted.dist(),
		MeanWaiting: l.waiting.area / window, MaxWaiting: l.waiting.peak(),
		Utilisation: r.utilisation(i, r.units(i, l.ssAcquired, l.ssUnits), l.held.area, window, r.objects(i)),
		Saturation:  Ratio(l.usageSum, float64(l.usageN)), SaturationMax: l.usageMax,
		Releases: info.Releases, WaitHist: all.buckets(), Capacity: info.Capacity, Family: info.Family}
	out.UtilisationMax = out.Utilisation
	out.PWait = Ratio(float64(l.waited), float64(out.WaitS.Count))
	if info.Adaptive {
		out.Adaptation = r.adaptation(i)
	}
	if info.Scope == "global" {
		return out
	}
	perScope := float64(max(1, r.lay.Instances)) // one object per instance
	if info.Scope == "cluster" {
		perScope = 1 // one object in the shared store, whatever the instances
	}
	out.Scopes = make([]ScopeStats, 0, len(info.Scopes))
	waits := dists(len(info.Scopes), func(j int) Dist { return l.scopes[j].wait.dist(r.sk) })
	for j, key := range info.Scopes {
		s, c := &l.scopes[j], &l.scopeCold[j]
		var heldArea float64
		if l.scopeHeld != nil {
			h := &l.scopeHeld[j]
			h.at(end, r.lay.Warmup)
			heldArea = h.area
		}
		d := waits[j]
		util := r.utilisation(i, r.units(i, s.ssAcquired, c.ssUnits), heldArea, window, perScope)
		out.UtilisationMax = max(out.UtilisationMax, util)
		out.Scopes = append(out.Scopes, ScopeStats{Key: key, Acquired: s.acquired, Rejected: c.rejected,
			Timeouts: c.timeouts, PWait: Ratio(float64(s.wait.n-s.wait.zeros), float64(d.Count)), WaitS: d, Utilisation: util})
	}
	out.ScopesTotal = len(out.Scopes)
	return out
}

// quotaAt is the hosts' quotas together at t seconds: each host's rate
// from its schedule (its initial rate before the first step).
func (r *Recorder) quotaAt(t float64) float64 {
	var sum float64
	for h, q := range r.lay.Quotas {
		rate := q.PerSecond
		if h < len(r.lay.QuotaSchedules) {
			for _, st := range r.lay.QuotaSchedules[h] {
				if st.AtS <= t {
					rate = st.RPS
				}
			}
		}
		sum += rate
	}
	return sum
}

// adaptation reads limiter i's limit column over the steady state, a
// few passes over the series and never the whole column at once (see
// orderStats).
func (r *Recorder) adaptation(i int) *Adaptation {
	col := r.series.Index(r.lay.Limiters[i].Name + ".limit")
	if col < 0 {
		return nil
	}
	objects := r.objects(i)
	iv, warm := r.lay.Interval.Seconds(), r.lay.Warmup.Seconds()
	// steady calls f with the end and the limit of each steady-state row.
	steady := func(f func(t, limit float64)) {
		r.series.Scan(0, []int{0, col}, func(_ int, v []float64) bool {
			if v[0]-iv >= warm-1e-9 {
				f(v[0], v[1]*objects)
			}
			return true
		})
	}
	all := valueSpreadOf(func(yield func(float64)) { steady(func(_, v float64) { yield(v) }) })
	if all.n == 0 {
		return nil
	}
	a := &Adaptation{LimitMean: all.sum / float64(all.n), LimitMin: all.min, LimitMax: all.max, Oscillation: all.oscillation()}
	var steps []float64
	for _, sch := range r.lay.QuotaSchedules {
		for _, st := range sch {
			if !slices.Contains(steps, st.AtS) {
				steps = append(steps, st.AtS)
			}
		}
	}
	slices.Sort(steps)
	for k, at := range steps {
		end := math.Inf(1)
		if k+1 < len(steps) {
			end = steps[k+1]
		}
		q := r.quotaAt(at)
		s := Settling{AtS: at, QuotaRPS: q}
		settled := math.Inf(1) // the end of the first row within the band
		steady(func(t, v float64) {
			if t > at && t <= end && t < settled && math.Abs(v-q) <= SettleBand*q {
				settled = t
			}
		})
		if !math.IsInf(settled, 1) {
			d := settled - at
			s.SettleS = &d
			from := valueSpreadOf(func(yield func(float64)) {
				steady(func(t, v float64) {
					if t >= settled && t <= end {
						yield(v)
					}
				})
			})
			s.LimitMean = from.sum / float64(from.n)
			s.Oscillation = from.oscillation()
		}
		a.Changes = append(a.Changes, s)
	}
	return a
}

// upstreamStats closes host i's figures at end; window is the steady
// state in ns.
func (r *Recorder) upstreamStats(i int, end time.Duration, window float64) UpstreamStats {
	r.bins.flush()
	h := &r.hosts[i]
	h.serving.fold(end, r.lay.Warmup)
	out := UpstreamStats{Host: r.lay.Hosts[i], Attempts: h.attempts, OK: h.ok,
		Throttled: h.throttled, Rate429: Ratio(float64(h.ss429), float64(h.ssAttempts)),
		PerMinute429: float64(h.ss429) / window * 1e9 * 60, Pauses: h.pauses, LatencyS: h.latency.dist(),
		ServiceS: h.service.dist(), QuotaSaturation: Ratio(h.usageSum, float64(h.usageN))}
	if util, ok := r.quotaUtilisation(i, h.ssAdmitted, h.serving.area, window); ok {
		out.QuotaUtilisation = &util
	}
	if i < len(r.lay.Quotas) && r.lay.Quotas[i].PerSecond > 0 {
		rps := r.lay.Quotas[i].PerSecond
		out.QuotaRPS = &rps
	}
	if i < len(r.lay.QuotaSchedules) {
		out.QuotaSchedule = r.lay.QuotaSchedules[i]
	}
	return out
}

// tenantStats returns each tenant's figures and Jain's index over their
// success rates.
func (r *Recorder) tenantStats() ([]TenantStats, *float64) {
	var arrived, succeeded int64
	for _, t := range r.tenants {
		arrived += t.arrived
		succeeded += t.succeeded
	}
	out := make([]TenantStats, 0, len(r.lay.Tenants))
	waits := dists(len(r.lay.Tenants), func(i int) Dist { return r.tenants[i].wait.dist(r.sk) })
	var sum, sumSq float64
	for i, name := range r.lay.Tenants {
		t := &r.tenants[i]
		rate := Ratio(float64(t.succeeded), float64(t.arrived))
		sum += rate
		sumSq += rate * rate
		out = append(out, TenantStats{Name: name, Arrived: t.arrived, Succeeded: t.succeeded,
			ArrivalShare: Ratio(float64(t.arrived), float64(arrived)), Share: Ratio(float64(t.succeeded), float64(succeeded)),
			SuccessRate: rate, WaitS: waits[i]})
	}
	jain := Ratio(sum*sum, float64(len(out))*sumSq)
	return out, &jain
}
