package client

import (
	"math"
	mathbits "math/bits"
	"time"

	"github.com/limitsim/limitsim/internal/prefetch"
	"github.com/limitsim/limitsim/models"
)

// sampling is the pipeline's part that reads the limiters' and the
// quotas' usage a few times an interval.
type sampling struct {
	limUsage, hostUsage, hostPaused []float64 // sample sums, then interval means
	samples                         int       // quota readings this interval
	hostReads                       int       // sample instants that read the quotas (hostRounds)
	limSamples, limRounds           []int     // readings this interval, and sample instants that read, per limiter
	limStride, limPhase             []int     // per limiter: readings that take each scope once, and the next reading's first scope (scopeStride)
	toRead                          []int     // the scopes a usage reading reads (sampleLimiter), kept for the next
}

// samplesPerInterval is how many times per interval the limiters' usage is
// sampled; saturation is the mean of the samples, a time average.
const samplesPerInterval = 8

// sampleOffsets places the samples inside an interval at fractions of a
// low-discrepancy sequence (multiples of the golden ratio, modulo 1), so
// they never line up with window boundaries or periodic arrivals.
var sampleOffsets = func() [samplesPerInterval]float64 {
	var o [samplesPerInterval]float64
	for k := range o {
		_, f := math.Modf(float64(k+1) * 0.6180339887498949)
		o[k] = f
	}
	return o
}()

// scheduleSamples schedules the usage samples of the interval [from, to).
func (p *pipeline) scheduleSamples(from, to time.Duration) {
	for k, f := range sampleOffsets {
		p.eng.Post(from+time.Duration(f*float64(to-from)), (*hSample)(p), uint64(k))
	}
}

// allScopes returns a bit set with the first n bits set.
func allScopes(n int) []uint64 {
	set := make([]uint64, (n+63)/64)
	for i := range set {
		set[i] = ^uint64(0)
	}
	if n%64 != 0 {
		set[len(set)-1] = 1<<(n%64) - 1
	}
	return set
}

// activate puts scope s of limiter li in the set the usage readings read:
// whatever changes a scope's state (an acquisition, a reservation settled)
// may take it out of rest.
func (in *instance) activate(li, s int) { in.active[li][s>>6] |= 1 << (s & 63) }

// scopeReadBudget bounds the scope readings of one limiter per interval:
// a limiter with n scopes in all (over instances) is read at the first
// min(8, max(1, scopeReadBudget/n)) sample instants of each interval. Up
// to 128 scopes that is all eight; a thousand hosts' buckets are read once
// per interval, their mean over scopes already averaging a thousand
// objects (and ten thousand tenants' a share at a time, see scopeStride).
// Each reading reaches a different object, seldom in cache: with a
// thousand hosts, four readings an interval took a sixth of the run's
// instructions.
const scopeReadBudget = samplesPerInterval * 128

// sampleRounds returns how many of an interval's sample instants read
// limiter li.
func (p *pipeline) sampleRounds(li int) int {
	n := 0
	for _, in := range p.instances {
		n += len(in.limiters[li])
	}
	return min(samplesPerInterval, max(1, scopeReadBudget/max(1, n)))
}

// scopeStride returns how many readings of limiter li it takes to read
// each of its scopes once: 1 up to scopeReadBudget scopes in all (over
// instances), more beyond, so that a reading costs at most about the
// budget. Ten thousand tenants read once per interval would cost ten
// reads per request at 1,000 requests/s and 1-second intervals; a tenth
// of them, taken in turn, is as good an estimate of the mean over scopes,
// every scope being read every tenth interval.
func (p *pipeline) scopeStride(li int) int {
	n := 0
	for _, in := range p.instances {
		n += len(in.limiters[li])
	}
	return max(1, (n+scopeReadBudget-1)/scopeReadBudget)
}

// hostRounds returns how many of an interval's sample instants read the
// hosts' quotas: all eight up to 512 hosts, fewer beyond (the same budget
// as a limiter's scopes).
func (p *pipeline) hostRounds() int {
	return min(samplesPerInterval, max(1, scopeReadBudget/max(1, len(p.servers))))
}

// hSample adds sample k of the interval: every quota's usage and the
// usage of each limiter, when read at this instant (see scopeReadBudget).
func (h *hSample) Fire(now time.Duration, k uint64) {
	p := (*pipeline)(h)
	for li := range p.cfg.Limiters {
		if int(k) < p.limRounds[li] {
			p.sampleLimiter(li, now)
		}
	}
	if int(k) >= p.hostReads {
		return
	}
	for hi, s := range p.servers {
		p.hostUsage[hi] += s.Usage(now)
	}
	p.samples++
}

// sampleLimiter adds one reading of limiter li's usage: the mean over its
// scopes. Scopes at rest (usage 0, nobody waiting) add nothing and stay at
// rest until their next acquisition, so only the scopes in the active set
// are read, in scope order (the sum is the same as over every scope), and
// a scope found at rest leaves the set. With ten thousand tenants of which
// a few are busy, a reading costs the busy ones.
//
// A limiter with more scopes than scopeReadBudget is read a share at a
// time: each reading takes every stride-th scope, from an offset that
// moves on by one each reading, and is the mean over those (see
// scopeStride).
//
// The scopes to read are listed first, then read in order (readScopes),
// which lets thousands of scopes' cache misses overlap.
func (p *pipeline) sampleLimiter(li int, now time.Duration) {
	var sum float64
	var n int
	// Never at rest: an adaptive limiter's usage moves by itself (see
	// models.Limiter.Usage), and a cluster limiter's moves with the other
	// instances' traffic.
	restless := p.cfg.Limiters[li].Kind.Adaptive || p.cfg.Limiters[li].Scope == Cluster
	stride := p.limStride[li]
	from := p.limPhase[li]
	p.limPhase[li] = (from + 1) % stride
	for _, in := range p.instances {
		lims, set := in.limiters[li], in.active[li]
		read := p.toRead[:0]
		if stride > 1 {
			for s := from; s < len(lims); s += stride {
				n++
				if set[s>>6]&(1<<(s&63)) != 0 {
					read = append(read, s)
				}
			}
		} else {
			n += len(lims)
			for w, bits := range set {
				for bits != 0 {
					b := bits & -bits
					bits ^= b
					read = append(read, w<<6|mathbits.TrailingZeros64(b))
				}
			}
		}
		p.toRead = read
		if len(lims) > lookaheadAbove { // the scopes are seldom in cache
			sum = readFarScopes(sum, lims, set, read, now, restless)
		} else {
			sum = readScopes(sum, lims, set, read, now, restless)
		}
	}
	p.limUsage[li] += sum / float64(max(1, n))
	p.limSamples[li]++
}

// readScopes adds the usage of the scopes read of lims to sum, in order,
// and takes a scope found at rest out of set.
func readScopes(sum float64, lims []models.Limiter, set []uint64, read []int, now time.Duration, restless bool) float64 {
	for _, s := range read {
		sum = readScope(sum, lims[s], set, s, now, restless)
	}
	return sum
}

// readScope adds scope s's usage (l) to sum, and takes the scope out of
// set if it is at rest.
func readScope(sum float64, l models.Limiter, set []uint64, s int, now time.Duration, restless bool) float64 {
	u := l.Usage(now)
	sum += u
	if u == 0 && !restless && l.Waiting() == 0 {
		set[s>>6] &^= 1 << (s & 63)
	}
	return sum
}

// readAhead is how many scopes ahead of the one being read readFarScopes
// asks for a scope's object, and twice that for its table entry.
const readAhead = 16

// readFarScopes is readScopes for scopes seldom in cache (each a different
// object, thousands of them): while one scope is read, the object of the
// scope readAhead places on is asked for, and the table entry pointing to
// it readAhead places before that, so that the misses of a reading
// overlap rather than following one another, and each is answered by the
// time it is read. The sum is the same, taken in the same order.
func readFarScopes(sum float64, lims []models.Limiter, set []uint64, read []int, now time.Duration, restless bool) float64 {
	for j := range min(len(read), 2*readAhead) {
		prefetch.Of(&lims[read[j]])
	}
	for j := range min(len(read), readAhead) {
		if l, ok := lims[read[j]].(*models.Line); ok {
			prefetch.Of(l)
		}
	}
	for j, s := range read {
		if k := j + 2*readAhead; k < len(read) {
			prefetch.Of(&lims[read[k]])
		}
		if k := j + readAhead; k < len(read) {
			if l, ok := lims[read[k]].(*models.Line); ok {
				prefetch.Of(l)
			}
		}
		sum = readScope(sum, lims[s], set, s, now, restless)
	}
	return sum
}

// hTick closes an interval and schedules the next while work remains.
func (h *hTick) Fire(now time.Duration, _ uint64) {
	p := (*pipeline)(h)
	if p.samples == 0 { // no sample fell in the interval: take one now
		(*hSample)(p).Fire(now, 0)
	}
	for li := range p.limUsage {
		if p.limSamples[li] == 0 {
			p.sampleLimiter(li, now)
		}
		p.limUsage[li] /= float64(p.limSamples[li])
	}
	for hi := range p.servers {
		p.hostUsage[hi] /= float64(p.samples)
		paused := 0
		for _, in := range p.instances {
			if in.pausedUntil[hi] > now {
				paused++
			}
		}
		p.hostPaused[hi] = float64(paused) / float64(len(p.instances))
	}
	if p.adaptive {
		p.rec.Limits(p.limits(now))
	}
	p.rec.Tick(now, p.limUsage, p.hostUsage, p.hostPaused)
	if p.trace != nil {
		cols, row := p.rec.Latest()
		p.trace.counters(now-p.cfg.Run.Interval, cols, row, counterTrack)
	}
	if p.clock != nil {
		p.lastRep.tick(p.clock, p.rep, now)
	}
	if p.progress != nil {
		// What this replication adds to the sum over replications, which
		// may run at once.
		done := p.arrived
		if p.cfg.Run.Duration > 0 {
			done = int64(min(now, p.cfg.Run.Duration))
		}
		p.progress.Add(done - p.progressDone)
		p.progressDone = done
	}
	clear(p.limUsage)
	clear(p.limSamples)
	clear(p.hostUsage)
	p.samples = 0
	if p.noMore && p.inSystem == 0 && !p.tickingToDuration(now) {
		return
	}
	if p.eng.Pending() == 0 && p.inSystem > 0 {
		return // nothing else can happen: let the engine report the stall
	}
	next := p.rec.NextTick()
	p.scheduleSamples(now, next)
	p.eng.Post(next, h, 0)
	p.scheduleFold()
}

// tickingToDuration reports whether the intervals go on after the last
// request, up to run.duration: a run its duration cut ends there (its
// elapsed_s), so its series and time charts reach it even when the
// arrivals stopped long before.
func (p *pipeline) tickingToDuration(now time.Duration) bool {
	d := p.cfg.Run.Duration
	return d > 0 && !p.cfg.Workload.Backlog && p.cutByDuration && now < d
}

// scheduleFold schedules the recorder's next fold if it falls before the
// interval's tick: only intervals longer than its fold span have folds.
func (p *pipeline) scheduleFold() {
	if at := p.rec.NextFold(); at < p.rec.NextTick() {
		p.eng.Post(at, (*hFold)(p), 0)
	}
}

// hFold lets the recorder close its levels' integer areas within a long
// interval (see metrics.Recorder.NextFold).
func (h *hFold) Fire(now time.Duration, _ uint64) {
	p := (*pipeline)(h)
	p.rec.Fold(now)
	p.scheduleFold()
}

// limits returns each adaptive limiter's limit at now, averaged over its
// objects (scopes and instances); 0 for the others.
func (p *pipeline) limits(now time.Duration) []float64 {
	out := make([]float64, len(p.cfg.Limiters))
	for li, l := range p.cfg.Limiters {
		if !l.Kind.Adaptive {
			continue
		}
		var sum float64
		var n int
		for _, in := range p.instances {
			for _, lim := range in.limiters[li] {
				sum += lim.(models.Adaptive).Limit(now)
				n++
			}
		}
		out[li] = sum / float64(max(1, n))
	}
	return out
}
