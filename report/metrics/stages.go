package metrics

import "time"

// requestStages are the time-weighted counts of where the requests are:
// in the system (arrived and not ended), in flight to an upstream, in the
// ingest queue, and the producers blocked on a full queue; with the
// ingest queue's waits. They fill in_flight, queue and the stages' checks
// of Little's law in metrics.json, and the level columns of
// timeseries.csv.
type requestStages struct {
	warmup    time.Duration
	ingest    string // "queue" or "tasks"
	system    stage
	inFlight  level
	queue     level
	blocked   level
	queueWait *hist // the steady state's items, from put to taken
}

// requestStageColumns name the stages' columns of a row, in the order
// appendInterval appends them.
var requestStageColumns = []string{"in_flight", "in_system", "queue_depth", "blocked_producers"}

func newRequestStages(layout Layout) requestStages {
	s := requestStages{warmup: layout.Warmup, ingest: layout.Ingest, queueWait: newHist()}
	for _, l := range s.levels() {
		l.init(layout.Warmup)
	}
	return s
}

// levels are the stages' steady-state levels.
func (s *requestStages) levels() []*level { return []*level{&s.inFlight, &s.queue, &s.blocked} }

// QueueIn records an item put in the ingest queue.
func (r *Recorder) QueueIn(now time.Duration) { r.stages.queueIn(now) }

// QueueOut records an item leaving the ingest queue; since is when the
// item was put.
func (r *Recorder) QueueOut(now, since time.Duration) { r.stages.queueOut(now, since) }

// Blocked moves the count of producers blocked on a full queue.
func (r *Recorder) Blocked(now time.Duration, delta int64) { r.stages.moveBlocked(now, delta) }

// Abandoned records an attempt whose client gave up while it was in flight.
func (r *Recorder) Abandoned(now, since time.Duration) { r.stages.answered(now, since) }

func (s *requestStages) queueIn(now time.Duration) { s.queue.enter(now, s.warmup) }

func (s *requestStages) queueOut(now, since time.Duration) {
	s.queue.leave(now, since, s.warmup)
	if since >= s.warmup {
		s.queueWait.add(now - since)
	}
}

func (s *requestStages) moveBlocked(now time.Duration, delta int64) {
	s.blocked.move(now, s.warmup, delta)
	if now >= s.warmup {
		s.blocked.max = max(s.blocked.max, s.blocked.n)
	}
}

// inSystem is how many requests are in the system: arrived, not ended.
func (s *requestStages) inSystem() int64 { return s.system.n }

// arrived and ended move the requests in the system.
func (s *requestStages) arrived(now time.Duration)      { s.system.enter(now) }
func (s *requestStages) ended(now, since time.Duration) { s.system.leave(now, since) }

// sent and answered move the attempts in flight.
func (s *requestStages) sent(now time.Duration)            { s.inFlight.enter(now, s.warmup) }
func (s *requestStages) answered(now, since time.Duration) { s.inFlight.leave(now, since, s.warmup) }

func (s *requestStages) appendColumns(columns []string) []string {
	return append(columns, requestStageColumns...)
}

// appendInterval closes the stages' areas of the interval ending at now
// (span ns long) and appends their means to row.
func (s *requestStages) appendInterval(row []float64, now time.Duration, span float64) []float64 {
	return append(row, s.inFlight.fold(now, s.warmup)/span, s.system.fold(now)/span,
		s.queue.fold(now, s.warmup)/span, s.blocked.fold(now, s.warmup)/span)
}

// refold closes the stages' integer areas at now, within an interval.
func (s *requestStages) refold(now time.Duration) {
	s.system.refold(now)
	for _, l := range s.levels() {
		l.refold(now, s.warmup)
	}
}

// fold closes the stages' areas at the run's end.
func (s *requestStages) fold(end time.Duration) {
	s.system.fold(end)
	for _, l := range s.levels() {
		l.fold(end, s.warmup)
	}
}

// results fills out's in-flight and queue figures; window is the steady
// state in ns.
func (s *requestStages) results(out *Results, window float64) {
	out.InFlight = Level{Mean: s.inFlight.area / window, Max: s.inFlight.peak()}
	out.Queue = QueueStats{Kind: s.ingest, MeanDepth: s.queue.area / window, MaxDepth: s.queue.peak(),
		MaxBlocked: s.blocked.peak(), WaitS: s.queueWait.dist()}
}

// queueLittle checks Little's law for the ingest queue, if there is one,
// over the whole run, whole ns long.
func (s *requestStages) queueLittle(whole float64) []Little {
	if s.ingest != "queue" {
		return nil
	}
	return []Little{little("ingest queue", s.queue.areaAll, s.queue.entries, s.queue.sojourns, whole)}
}

// little checks Little's law for the attempts in flight and the requests
// in the system over the whole run, whole ns long.
func (s *requestStages) little(whole float64) []Little {
	inFlight, system := &s.inFlight, &s.system
	return []Little{little("upstream in flight", inFlight.areaAll, inFlight.entries, inFlight.sojourns, whole),
		little("system", system.areaAll, system.entries, system.sojourns, whole)}
}
