package client

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/internal/par"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

// Outcome is one replication's result.
type Outcome struct {
	Results *metrics.Results
	Series  *metrics.Series
	// Stall is set when the run ended with work parked and nothing left to
	// wake it: a deadlock between limiters, or waiters nobody releases.
	Stall *sim.StallError
	// Guard is set when a guard stopped the run.
	Guard *sim.GuardError
	// Interrupted is set when Options.Interrupt stopped the run.
	Interrupted bool
	// Trace says what the trace holds, when Options.Trace is set.
	Trace *TraceSummary
}

// Options tune how a scenario runs.
type Options struct {
	// Interrupt, when set, stops the run at the next event boundary; the
	// outputs are then marked incomplete.
	Interrupt *atomic.Bool
	// Trace, when set, receives the first replication in the Chrome
	// trace-event format: the requests TraceSelect picks, run-wide counter
	// tracks and pause instants.
	Trace       io.Writer
	TraceSelect TraceSelect
	// Progress, when set, is updated at every interval with the work done
	// so far, summed over replications: simulated nanoseconds for a run
	// limited by run.duration, else requests arrived. ProgressTotal gives
	// the total of the same unit.
	Progress *atomic.Int64
	// Clock, when set, is updated at every interval with the simulated
	// instant of the replication running (nanoseconds): progress to report
	// once every request has arrived and the last ones are finishing.
	Clock *atomic.Int64
	// SeriesUnread is for a caller that neither writes nor charts the
	// series: it leaves empty the columns nothing else reads, the
	// interval percentiles (request_p50_s …, LIMITER.wait_p50_s …, three
	// histogram records a request) and each host's starts,
	// responses_429, quota_usage and quota_utilisation (most of the
	// series with a thousand hosts). See metrics.Recorder.SeriesUnread.
	SeriesUnread bool
	// Recorded, when set, replaces the workload's arrivals with recorded
	// ones (a replay; one replication: it is read once). Observer, when
	// set, follows every request (one replication too: Run refuses
	// more).
	Recorded Recorded
	Observer Observer
	// Workers is how many replications Run simulates at once (0: one a
	// processor, runtime.GOMAXPROCS). The outcome does not depend on it.
	Workers int
	// lastRep, set by Run, is the latest replication started: with
	// several at once, only it updates Clock (the last replication's).
	lastRep *latestRep
	// DrawAhead says whether each replication's variates are drawn
	// ahead on a goroutine of their own (package ahead): by default when
	// a processor is left over by the replications running at once and
	// each expects at least drawAheadFrom arrivals. The outcome does not
	// depend on it.
	DrawAhead DrawAhead
}

// DrawAhead is Options.DrawAhead.
type DrawAhead uint8

// The choices of Options.DrawAhead.
const (
	DrawAheadWhenSpare DrawAhead = iota // when fewer replications run at once than runtime.GOMAXPROCS, in long runs
	DrawAheadAlways
	DrawAheadNever
)

// latestRep is the latest of the replications run at once to have
// started, the one whose simulated time Options.Clock shows. Checking that
// a replication is the latest and moving the clock are one step: an
// earlier replication held up between the two could otherwise set the
// clock back after a later one had finished.
type latestRep struct {
	mu  sync.Mutex
	rep int
}

// started notes that replication rep has started.
func (l *latestRep) started(rep int) {
	l.mu.Lock()
	l.rep = max(l.rep, rep)
	l.mu.Unlock()
}

// tick sets clock to now if replication rep is the latest started (with
// l nil, one replication alone: always).
func (l *latestRep) tick(clock *atomic.Int64, rep int, now time.Duration) {
	if l == nil {
		clock.Store(int64(now))
		return
	}
	l.mu.Lock()
	if rep >= l.rep {
		clock.Store(int64(now))
	}
	l.mu.Unlock()
}

// ProgressTotal is the value Options.Progress reaches when every
// replication has run to its end.
func ProgressTotal(cfg *Config) int64 {
	reps := int64(max(1, cfg.Run.Replications))
	if cfg.Run.Duration > 0 {
		return reps * int64(cfg.Run.Duration)
	}
	return reps * cfg.Run.Requests
}

// RunReplication simulates replication rep (seed run.seed + rep). It
// draws ahead only with opt.DrawAhead = DrawAheadAlways: the default is
// decided by Run, which knows how many replications run at once.
func RunReplication(cfg *Config, rep int, opt Options) (*Outcome, error) {
	p, err := newPipeline(cfg, rep)
	if err != nil {
		return nil, err
	}
	eng := p.eng.(*sim.Engine)
	eng.SetLimits(sim.Limits{MaxEvents: uint64(cfg.Run.MaxEvents), MaxEventsPerInstant: uint64(cfg.Run.MaxEventsPerInstant)})
	eng.SetInterrupt(opt.Interrupt)
	p.progress, p.clock, p.rep, p.lastRep = opt.Progress, opt.Clock, rep, opt.lastRep
	if opt.SeriesUnread {
		p.rec.SeriesUnread()
	}
	if opt.Recorded != nil {
		p.recorded, p.lookahead = opt.Recorded, false
	}
	p.observer = opt.Observer
	if opt.Trace != nil && rep == 0 {
		p.trace = newTracer(opt.Trace, opt.TraceSelect, cfg.Instances)
	}
	if opt.DrawAhead == DrawAheadAlways {
		p.startDrawingAhead()
		defer p.stopDrawing() // also if a handler panics: the goroutine ends
		// The simulation keeps its thread, and so its core's caches: left
		// to the scheduler, it moved between threads as the drawer woke
		// and slept (7% slower, paired medians of 10 rounds).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	p.start()
	err = eng.Run()
	p.stopDrawing() // before the outcome is read: nothing draws after the run
	return p.outcome(err)
}

// stopOf is why a run that returned err stopped (the zero Stop: it ran
// to its end), with the engine's stall, guard or interrupt noted in o;
// known is false for an error that is no such stop (the run failed).
func (o *Outcome) stopOf(err error) (stop metrics.Stop, known bool) {
	var stall *sim.StallError
	var guard *sim.GuardError
	switch {
	case err == nil:
	case errors.As(err, &stall):
		o.Stall = stall
		stop = metrics.StallStop(stall.Error(), len(stall.Cycle) > 0)
	case errors.As(err, &guard):
		o.Guard = guard
		stop = metrics.GuardStop(guard.Guard, guard.Error())
	case errors.Is(err, sim.ErrInterrupted):
		o.Interrupted = true
		stop = metrics.InterruptStop()
	default:
		return stop, false
	}
	return stop, true
}

// outcome closes the recorder after the engine stopped with runErr and
// returns the replication's outcome.
func (p *pipeline) outcome(runErr error) (*Outcome, error) {
	cfg := p.cfg
	out := &Outcome{}
	stop, known := out.stopOf(runErr)
	if p.trace != nil {
		var terr error
		if out.Trace, terr = p.finishTrace(stop, known); terr != nil {
			return nil, terr
		}
	}
	if aerr := p.closeArrivals(); aerr != nil {
		return nil, fmt.Errorf("replaying the arrival trace: %w", aerr)
	}
	if !known {
		return nil, runErr
	}
	end, arrivalsEnd := p.ends(stop)
	res, series := p.rec.Finish(end, arrivalsEnd, p.eng.Events(), stop)
	if err := series.Err(); err != nil { // read back for the adaptive limiters' figures
		series.Close()
		return nil, err
	}
	res.Warnings = append(res.Warnings, cfg.Warnings...)
	if w := cfg.Run.Warmup; stop.IsZero() { // a run stopped early says why instead
		switch {
		case res.Requests.Arrived == 0:
			res.Warnings = append(res.Warnings, metrics.NoArrivalsWarning(end))
		case w > 0 && end <= w:
			res.Warnings = append(res.Warnings, metrics.NoSteadyStateWarning(w, end))
		case w > 0 && p.lastArrival < w: // an arrival at w is in the steady state
			res.Warnings = append(res.Warnings, metrics.NoSteadyArrivalsWarning(w, p.lastArrival))
		}
	}
	if w, ok := p.reserveWarning(); ok {
		res.Warnings = append(res.Warnings, w)
	}
	res.PerInstance = p.perInstance()
	res.Paths = pathStats(cfg)
	res.Quotas = p.sharedStats()
	if a := cfg.Workload.Arrivals; a.Kind == arrivals.KindOnOff && !cfg.Workload.OwnArrivals() {
		res.OnOff = &metrics.OnOff{OnS: a.On.Seconds(), OffS: a.Off.Seconds()}
	}
	for i, s := range p.servers {
		if i >= len(res.Upstreams) {
			break
		}
		if names, counts := s.Rejections(); len(names) > 1 || len(names) > len(cfg.Upstreams[i].Quotas) {
			for k := range names {
				shared, cost := s.Shared(k)
				res.Upstreams[i].RejectedBy = append(res.Upstreams[i].RejectedBy,
					metrics.QuotaRejections{Quota: names[k], Unit: unitName(cost), Count: counts[k], Shared: shared})
			}
		}
		res.Upstreams[i].Cost = p.costStats(i, end)
		p.costUtilisation(i, &res.Upstreams[i])
	}
	for li, st := range p.stores {
		if st != nil && li < len(res.Limiters) {
			calls, failed := st.Calls()
			res.Limiters[li].Store = &metrics.StoreStats{Calls: calls, Failed: failed}
		}
	}
	out.Results, out.Series = res, series
	return out, nil
}

// perInstance returns each instance's figures when there are several.
func (p *pipeline) perInstance() []metrics.InstanceStats {
	if len(p.instances) < 2 {
		return nil
	}
	w := p.cfg.InstanceWeights
	var total float64
	for _, x := range w {
		total += x
	}
	out := make([]metrics.InstanceStats, len(p.instances))
	for k, in := range p.instances {
		s := in.counts
		s.Instance, s.Weight = k, 1/float64(len(p.instances))
		if len(w) == len(p.instances) {
			s.Weight = w[k] / total
		}
		s.MeanWaitS = metrics.Ratio(s.Waited.Seconds(), float64(s.Ended))
		out[k] = s
	}
	return out
}

// countStuck records the acquisitions still parked when a run stopped
// early, with the time they had waited: a deadlock's stuck requests are in
// the wait figures, not left out of them.
func (p *pipeline) countStuck(now time.Duration) {
	p.requests.Each(func(_ uint32, r *request) {
		if r.phase == phAcquiring && r.lim >= 0 {
			p.rec.LimiterLeft(now, r.since, int(r.lim), int(r.scope), metrics.LeftStuck)
		}
	})
}

// Run simulates every replication and returns the first one's outcome
// with the spread over the replications attached (those with a steady
// state). Replications are independent (each has its own seed and
// engine), so up to Options.Workers run at once; the outcome is read from
// them in order, as if they had run one after another: the first that
// fails or stops early is the one returned, and the replications after it
// are not started. Verdicts and diagnoses are left to the caller
// (report.Analyze).
func Run(cfg *Config, opt Options) (*Outcome, error) {
	reps := max(1, cfg.Run.Replications)
	if (opt.Recorded != nil || opt.Observer != nil) && reps > 1 {
		return nil, fmt.Errorf("%w: recorded arrivals are read once, and an observer follows one run: one replication, not %d", ErrConfig, reps)
	}
	outs, errs := runReplications(cfg, reps, opt)
	first, err := outs[0], errs[0]
	if err != nil || reps == 1 || !first.Results.Complete {
		closeSeries(outs[1:]...)
		return first, err
	}
	// The spread covers the replications that had a steady state, when
	// two or more did; a warning names each later one that did not (the
	// first one's own warning says it of the first).
	var all []*metrics.Results
	if _, none := first.Results.NoSteadyState(); !none {
		all = append(all, first.Results)
	}
	var named []metrics.Warning
	for rep := 1; rep < reps; rep++ {
		o, err := outs[rep], errs[rep]
		if err != nil {
			closeSeries(outs...)
			return nil, err
		}
		if !o.Results.Complete {
			closeSeries(append(outs[:rep:rep], outs[rep+1:]...)...)
			o.Results.Warnings = append(o.Results.Warnings, named...)
			o.Results.Warnings = append(o.Results.Warnings, metrics.ReplicationWarning(rep+1, reps))
			return o, nil
		}
		if w, ok := o.Results.NoSteadyState(); ok {
			named = append(named, metrics.ReplicationNoSteadyStateWarning(rep+1, reps, w))
			continue
		}
		all = append(all, o.Results)
	}
	first.Results.Warnings = append(first.Results.Warnings, named...)
	if len(all) > 1 {
		first.Results.Replications = metrics.Summarize(all)
	}
	return first, nil
}

// runReplications runs replications 0 … reps−1 on up to opt.Workers
// goroutines, taking them in order, and returns each one's outcome and
// error at its index. Once one fails or stops early, no later one is
// started (its outcome stays nil): Run reads no further. The series of a
// later replication that completed is closed at once, only the first
// replication's being kept.
func runReplications(cfg *Config, reps int, opt Options) ([]*Outcome, []error) {
	outs, errs := make([]*Outcome, reps), make([]error, reps)
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	opt.lastRep = &latestRep{}
	if opt.DrawAhead == DrawAheadWhenSpare {
		opt.DrawAhead = DrawAheadNever
		if min(workers, reps) < runtime.GOMAXPROCS(0) && expectedArrivals(cfg) >= drawAheadFrom {
			opt.DrawAhead = DrawAheadAlways
		}
	}
	par.Run(reps, workers, func(rep int) bool {
		opt.lastRep.started(rep)
		o, err := RunReplication(cfg, rep, opt)
		outs[rep], errs[rep] = o, err
		if err != nil || !o.Results.Complete {
			return true
		}
		if rep > 0 {
			o.Series.Close() // only the first replication's series is kept
		}
		return false
	})
	return outs, errs
}

// closeSeries closes the series of outcomes (nil ones skipped).
func closeSeries(outs ...*Outcome) {
	for _, o := range outs {
		if o != nil {
			o.Series.Close()
		}
	}
}

// pathStats names the limiters each declared path takes, in order.
func pathStats(cfg *Config) []metrics.PathStats {
	var out []metrics.PathStats
	for _, path := range cfg.Paths {
		ps := metrics.PathStats{Name: path.Name, Limiters: make([]string, len(path.Limiters)), Method: path.Method}
		for i, l := range path.Limiters {
			ps.Limiters[i] = cfg.Limiters[l].Name
		}
		out = append(out, ps)
	}
	return out
}

// sharedStats counts what each shared quota admitted and refused.
func (p *pipeline) sharedStats() []metrics.SharedQuotaStats {
	var out []metrics.SharedQuotaStats
	for i, sq := range p.shared {
		c := p.cfg.SharedQuotas[i]
		st := metrics.SharedQuotaStats{Name: c.Name, Kind: c.Quota.Kind, Unit: unitName(sq.CountsCost()), Upstreams: make([]string, len(c.Hosts))}
		for j, h := range c.Hosts {
			st.Upstreams[j] = p.cfg.Workload.Hosts[h].Name
		}
		st.Admitted, st.Refused, st.Taken = sq.Counts()
		if perS, conc := c.Quota.Capacity(); !conc {
			if sq.CountsCost() {
				perS /= max(1, p.meanCostF())
			}
			st.QuotaRPS = &perS
		}
		out = append(out, st)
	}
	return out
}

// unitName names what a quota counts.
func unitName(countsCost bool) string {
	if countsCost {
		return upstream.UnitCost
	}
	return "requests"
}

// ends returns when the run ended and when its arrivals did. A run that
// stopped early ends at the stop, with its stuck requests counted. A
// complete one ends at its last completion, not its last event (a server
// may still be working on requests whose clients gave up, and the
// interval ticker rounds up to the next boundary), but no earlier than
// run.duration when that cut its arrivals: quiet at the end (an on/off
// workload's last off phase) is part of its long run, and a window ending
// at the last completion would leave it out and overstate every rate.
// Arrivals came until run.duration cut them, or until the last one when
// run.requests (or the arrival process itself) ended them first.
func (p *pipeline) ends(stop metrics.Stop) (end, arrivalsEnd time.Duration) {
	end = p.eng.Now()
	if !stop.IsZero() {
		p.countStuck(end)
	}
	d := p.cfg.Run.Duration
	cut := d > 0 && !p.cfg.Workload.Backlog && p.cutByDuration
	if stop.IsZero() {
		end = p.lastEnd
		if cut && end < d {
			end = d
		}
	}
	arrivalsEnd = p.lastArrival
	if cut && d <= end {
		arrivalsEnd = d
	}
	return end, arrivalsEnd
}
