package metrics

import (
	"time"

	"github.com/limitsim/limitsim/internal/prefetch"
)

// limiterSet is what the run's limiters keep: each limiter's counts, wait
// distributions and time-weighted levels, and each of its scopes' own
// records. It fills the limiters of metrics.json and each limiter's
// columns of timeseries.csv.
type limiterSet struct {
	info      []LimiterInfo
	warmup    time.Duration
	interval  time.Duration
	instances int
	sketches  *sketchMapping // sharedSketchMapping(): the mapping of the scopes' sketches
	records   []limiterRecord
}

// limiterRecord is what one limiter keeps.
type limiterRecord struct {
	waiting            level
	waitGranted        *hist         // granted acquisitions
	limit              float64       // adaptive: the limit per object at the last Limits
	limitArea          float64       // adaptive: ∫ limit dt over the steady state's intervals (limit·s)
	limitTime          float64       // … and their length (s)
	intervalWaits      *intervalHist // waits of acquisitions that ended in the interval; nil when the series is unread
	waitNotGranted     *hist         // acquisitions that gave up or were withdrawn; nil until one does
	acquired, rejected int64         // whole run
	timeouts, waited   int64         // whole run; waited: steady-state acquisitions that waited a positive time
	usageSum, usageMax float64       // the usage sampled at the steady state's ticks
	usageSamples       int64         // … and how many samples
	intervalAcquired   int64         // grants made in the interval
	steadyAcquired     int64         // grants made in the steady state
	intervalUnits      float64       // Charged: units taken in the interval
	steadyUnits        float64       // Charged: units taken in the steady state
	held               gauge         // concurrency: grants holding a permit
	scopes             []scopeRecord // by scope key
	scopeCold          []scopeCold   // by scope, as scopes
	scopeHeld          []scopeGauge  // concurrency with scopes: each scope's grants holding a permit; nil otherwise
	scoped             bool          // per host or tenant: scopes are reported
	releases           bool          // a concurrency limiter: grants hold a permit until released
}

// scopeRecord is what a limiter's scope keeps: thousands of them are
// touched at random, one per request, so it holds nothing a scope may not
// need (the permits a concurrency limiter's scopes hold are in
// limiterRecord.scopeHeld).
type scopeRecord struct {
	acquired, steadyAcquired int64
	wait                     sketch // unused for a global limiter (its scopes are not reported)
}

// scopeCold is what a limiter's scope keeps that most requests leave
// alone: kept apart, so that scopeRecord fills one cache line. How many
// of a scope's acquisitions waited is not kept: its wait sketch counts
// them (its values less its zeros).
type scopeCold struct {
	rejected, timeouts int64
	steadyUnits        float64 // Charged: units taken in the steady state
}

func newLimiterSet(layout Layout, sketches *sketchMapping) limiterSet {
	s := limiterSet{info: layout.Limiters, warmup: layout.Warmup, interval: layout.Interval,
		instances: layout.Instances, sketches: sketches, records: make([]limiterRecord, len(layout.Limiters))}
	for i, info := range layout.Limiters {
		l := &s.records[i]
		l.waitGranted = newHist()
		l.intervalWaits = newIntervalHist()
		l.scopes = make([]scopeRecord, len(info.Scopes))
		l.scopeCold = make([]scopeCold, len(info.Scopes))
		l.scoped = info.Scope != "global"
		l.releases = info.Releases
		if info.Releases && (len(info.Scopes) > 1 || info.Scope != "global") {
			l.scopeHeld = make([]scopeGauge, len(info.Scopes))
		}
		l.waiting.init(layout.Warmup)
		l.held.init(layout.Warmup)
	}
	return s
}

func (s *limiterSet) steady(t time.Duration) bool { return t >= s.warmup }

// Leave says how a parked acquisition ended.
type Leave uint8

// How parked acquisitions end.
const (
	// LeftGranted: the limiter granted it.
	LeftGranted Leave = iota
	// LeftGaveUp: the acquisition timeout withdrew it.
	LeftGaveUp
	// LeftWithdrawn: the request ended elsewhere (its deadline) and left
	// the line.
	LeftWithdrawn
	// LeftStuck: the run stopped early (a deadlock, a guard, an interrupt)
	// with the acquisition still parked; it is counted with the time it
	// had waited.
	LeftStuck
)

// PrefetchScope asks for the record of limiter's scope ahead of an
// acquisition.
func (r *Recorder) PrefetchScope(limiter, scope int) {
	r.limiters.prefetch(limiter, scope)
}

// LimiterPassed records an acquisition granted at once.
func (r *Recorder) LimiterPassed(now time.Duration, limiter, scope int) {
	r.limiters.passed(now, limiter, scope)
}

// LimiterReleased records a permit of a concurrency limiter given back.
func (r *Recorder) LimiterReleased(now time.Duration, limiter, scope int) {
	r.limiters.released(now, limiter, scope)
}

// LimiterCharged records units limiter took (or, negative, gave back)
// at scope, for a limiter whose Layout marks it Charged: a grant's units,
// and a reservation's reconciliation when its answer arrives.
func (r *Recorder) LimiterCharged(now time.Duration, limiter, scope int, units float64) {
	r.limiters.charged(now, limiter, scope, units)
}

// LimiterParked records an acquisition that joined the waiting line.
func (r *Recorder) LimiterParked(now time.Duration, limiter int) {
	r.limiters.parked(now, limiter)
}

// LimiterLeft records a parked acquisition that ended: granted, or given
// up (its acquisition timeout, or its request's deadline) after waiting
// now − since. Every ended acquisition is in the wait distribution; the
// granted ones are also in the granted-only one.
func (r *Recorder) LimiterLeft(now, since time.Duration, limiter, scope int, how Leave) {
	r.limiters.left(now, since, limiter, scope, how)
}

// LimiterRejected records an acquisition refused at once (line full, too
// large, too late).
func (r *Recorder) LimiterRejected(limiter, scope int) {
	r.limiters.rejected(limiter, scope)
}

// LimiterTimedOut records an acquisition refused at once because it could
// not be granted before its deadline; it counts as a timeout.
func (r *Recorder) LimiterTimedOut(limiter, scope int) {
	r.limiters.timedOut(limiter, scope)
}

// Limits records each adaptive limiter's limit (per object, averaged over
// its objects) for the row the next Tick closes; other entries are unused.
func (r *Recorder) Limits(values []float64) { r.limiters.setLimits(values) }

// prefetch asks for the record of limiter's scope.
func (s *limiterSet) prefetch(limiter, scope int) { prefetch.Of(&s.records[limiter].scopes[scope]) }

// parked records an acquisition that joined limiter's waiting line.
func (s *limiterSet) parked(now time.Duration, limiter int) {
	s.records[limiter].waiting.enter(now, s.warmup)
}

// rejected counts an acquisition refused at once.
func (s *limiterSet) rejected(limiter, scope int) {
	s.records[limiter].rejected++
	s.records[limiter].scopeCold[scope].rejected++
}

// timedOut counts an acquisition refused at once for its deadline.
func (s *limiterSet) timedOut(limiter, scope int) {
	s.records[limiter].timeouts++
	s.records[limiter].scopeCold[scope].timeouts++
}

// setLimits records each adaptive limiter's limit per object.
func (s *limiterSet) setLimits(values []float64) {
	for i := range s.records {
		if i < len(values) {
			s.records[i].limit = values[i]
		}
	}
}

// passed records an acquisition granted at once.
func (s *limiterSet) passed(now time.Duration, limiter, scope int) {
	l := &s.records[limiter]
	scopeState := &l.scopes[scope]
	l.acquired++
	l.intervalAcquired++
	scopeState.acquired++
	l.waiting.entries++
	l.intervalWaits.add(0)
	steady := s.steady(now)
	if steady {
		l.waitGranted.addZero()
		if l.scoped {
			scopeState.wait.add(0, s.sketches)
		}
	}
	s.granted(now, steady, l, scopeState, scope)
}

// granted counts a grant of limiter l at a scope (scopeState, index scope) for
// utilisation: a grant in the steady state (steady: now is in it), and for
// a concurrency limiter a permit now held.
func (s *limiterSet) granted(now time.Duration, steady bool, l *limiterRecord, scopeState *scopeRecord, scope int) {
	if steady {
		l.steadyAcquired++
		scopeState.steadyAcquired++
	}
	if l.releases {
		l.held.move(now, s.warmup, 1)
		if l.scopeHeld != nil {
			l.scopeHeld[scope].add(now, s.warmup, 1)
		}
	}
}

// released records a permit of a concurrency limiter given back.
func (s *limiterSet) released(now time.Duration, limiter, scope int) {
	l := &s.records[limiter]
	l.held.move(now, s.warmup, -1)
	if l.scopeHeld != nil {
		l.scopeHeld[scope].add(now, s.warmup, -1)
	}
}

// charged records units taken (or given back) by a Charged limiter.
func (s *limiterSet) charged(now time.Duration, limiter, scope int, units float64) {
	l := &s.records[limiter]
	l.intervalUnits += units
	if s.steady(now) {
		l.steadyUnits += units
		l.scopeCold[scope].steadyUnits += units
	}
}

// left records a parked acquisition that ended after waiting now − since.
func (s *limiterSet) left(now, since time.Duration, limiter, scope int, how Leave) {
	l := &s.records[limiter]
	scopeState := &l.scopes[scope]
	wait := now - since
	l.intervalWaits.add(wait)
	if s.steady(since) {
		if l.scoped {
			scopeState.wait.add(wait, s.sketches)
		}
		if wait > 0 {
			l.waited++
		}
		if how == LeftGranted {
			l.waitGranted.add(wait)
		} else {
			if l.waitNotGranted == nil {
				l.waitNotGranted = newHist()
			}
			l.waitNotGranted.add(wait)
		}
	}
	switch how {
	case LeftGaveUp:
		l.timeouts++
		l.scopeCold[scope].timeouts++
	case LeftGranted:
		l.acquired++
		l.intervalAcquired++
		scopeState.acquired++
		s.granted(now, s.steady(now), l, scopeState, scope)
	}
	l.waiting.leave(now, since, s.warmup)
}

// limiterColumnSuffixes are the suffixes of a limiter's columns in
// timeseries.csv, in order; an adaptive one has limitColumnSuffix too.
var limiterColumnSuffixes = []string{".waiting", ".usage", ".acquired", ".utilisation", ".wait_p50_s", ".wait_p95_s", ".wait_p99_s"}

// limitColumnSuffix is the suffix of an adaptive limiter's limit column.
const limitColumnSuffix = ".limit"

// appendColumns appends the names of each limiter's columns: seven, and
// the limit of an adaptive one.
func (s *limiterSet) appendColumns(columns []string) []string {
	for _, l := range s.info {
		for _, suffix := range limiterColumnSuffixes {
			columns = append(columns, l.Name+suffix)
		}
		if l.Adaptive {
			columns = append(columns, l.Name+limitColumnSuffix)
		}
	}
	return columns
}

// appendInterval closes each limiter's interval ending at now (span ns
// long) into row, with usage, each limiter's usage sampled at the tick.
func (s *limiterSet) appendInterval(row []float64, now time.Duration, span float64, usage []float64) []float64 {
	steady := s.steady(now - s.interval)
	for i := range s.records {
		l := &s.records[i]
		sampled := usage[i]
		waiting := l.waiting.fold(now, s.warmup)
		utilisation := s.utilisation(i, s.units(i, l.intervalAcquired, l.intervalUnits), l.held.fold(now, s.warmup), span, s.objects(i))
		if s.info[i].Adaptive && steady {
			l.limitArea += l.limit * s.interval.Seconds()
			l.limitTime += s.interval.Seconds()
		}
		p50, p95, p99 := l.intervalWaits.take()
		row = append(row, waiting/span, sampled, float64(l.intervalAcquired), utilisation, p50, p95, p99)
		if s.info[i].Adaptive {
			row = append(row, l.limit)
		}
		l.intervalAcquired, l.intervalUnits = 0, 0
		if steady {
			l.usageSum += sampled
			l.usageSamples++
			l.usageMax = max(l.usageMax, sampled)
		}
	}
	return row
}

// dropIntervalWaits stops keeping the interval percentiles of the waits
// (see Recorder.SeriesUnread).
func (s *limiterSet) dropIntervalWaits() {
	for i := range s.records {
		s.records[i].intervalWaits = nil
	}
}

// refold closes the limiters' integer areas at now, within an interval.
func (s *limiterSet) refold(now time.Duration) {
	for i := range s.records {
		s.records[i].waiting.refold(now, s.warmup)
		s.records[i].held.refold(now, s.warmup)
	}
}

// foldWaiting closes the waiting lines' areas at the run's end.
func (s *limiterSet) foldWaiting(end time.Duration) {
	for i := range s.records {
		s.records[i].waiting.fold(end, s.warmup)
	}
}

// objects is how many limiter objects limiter i has: one per scope per
// client instance.
func (s *limiterSet) objects(i int) float64 {
	if s.info[i].Scope == "cluster" { // one object in the shared store
		return 1
	}
	return float64(len(s.info[i].Scopes) * max(1, s.instances))
}

// units is what limiter i's grants took: the units recorded for a Charged
// limiter, otherwise grants × its cost.
func (s *limiterSet) units(i int, grants int64, charged float64) float64 {
	if info := &s.info[i]; info.Charged {
		return charged
	}
	return float64(grants * max(1, s.info[i].Cost))
}

// utilisation is the share of limiter i's capacity used over span ns by
// objects limiter objects: permits held (heldArea, permit·ns) ÷ permits for
// a concurrency limiter, units taken ÷ units allowed for a rate or window
// limiter.
func (s *limiterSet) utilisation(i int, units, heldArea, span, objects float64) float64 {
	info := s.info[i]
	capacity := info.Capacity
	if info.Adaptive { // the limit in force, not the most it could reach
		l := &s.records[i]
		capacity = l.limit
		if span != float64(s.interval) && l.limitTime > 0 {
			capacity = l.limitArea / l.limitTime
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

// stats closes limiter i's figures at end, but its adaptation; window is
// the steady state in ns.
func (s *limiterSet) stats(i int, end time.Duration, window float64) LimiterStats {
	info, l := s.info[i], &s.records[i]
	l.held.fold(end, s.warmup)
	all := l.waitGranted // every acquisition that ended: granted or not
	if l.waitNotGranted != nil {
		all = l.waitGranted.merged(l.waitNotGranted)
	}
	out := LimiterStats{Name: info.Name, Kind: info.Kind, Scope: info.Scope, Acquired: l.acquired,
		Rejected: l.rejected, Timeouts: l.timeouts, WaitS: all.dist(), WaitGrantedS: l.waitGranted.dist(),
		MeanWaiting: l.waiting.area / window, MaxWaiting: l.waiting.peak(),
		Utilisation: s.utilisation(i, s.units(i, l.steadyAcquired, l.steadyUnits), l.held.area, window, s.objects(i)),
		Saturation:  Ratio(l.usageSum, float64(l.usageSamples)), SaturationMax: l.usageMax,
		Releases: info.Releases, WaitHist: all.buckets(), Capacity: info.Capacity, Family: info.Family, Unit: info.Unit}
	out.UtilisationMax = out.Utilisation
	out.PWait = Ratio(float64(l.waited), float64(out.WaitS.Count))
	if info.Scope != "global" {
		s.scopeStats(i, end, window, &out)
	}
	return out
}

// scopeStats adds the figures of each scope of limiter i to out, and the
// busiest scope's utilisation.
func (s *limiterSet) scopeStats(i int, end time.Duration, window float64, out *LimiterStats) {
	info, l := s.info[i], &s.records[i]
	perScope := float64(max(1, s.instances)) // one object per instance
	if info.Scope == "cluster" {
		perScope = 1 // one object in the shared store, whatever the instances
	}
	out.Scopes = make([]ScopeStats, 0, len(info.Scopes))
	waits := dists(len(info.Scopes), func(j int) Dist { return l.scopes[j].wait.dist(s.sketches) })
	for j, key := range info.Scopes {
		scopeState, cold := &l.scopes[j], &l.scopeCold[j]
		var heldArea float64
		if l.scopeHeld != nil {
			held := &l.scopeHeld[j]
			held.at(end, s.warmup)
			heldArea = held.area
		}
		wait := waits[j]
		utilisation := s.utilisation(i, s.units(i, scopeState.steadyAcquired, cold.steadyUnits), heldArea, window, perScope)
		out.UtilisationMax = max(out.UtilisationMax, utilisation)
		out.Scopes = append(out.Scopes, ScopeStats{Key: key, Acquired: scopeState.acquired, Rejected: cold.rejected,
			Timeouts: cold.timeouts, PWait: Ratio(float64(scopeState.wait.n-scopeState.wait.zeros), float64(wait.Count)), WaitS: wait, Utilisation: utilisation})
	}
	out.ScopesTotal = len(out.Scopes)
}

// little checks Little's law for each limiter's waiting line over the
// whole run, whole ns long.
func (s *limiterSet) little(whole float64) []Little {
	var out []Little
	for i, info := range s.info {
		w := &s.records[i].waiting
		out = append(out, little("limiter "+info.Name, w.areaAll, w.entries, w.sojourns, whole))
	}
	return out
}
