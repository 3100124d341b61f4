package metrics

import (
	"math"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// sketchAccuracy is the relative accuracy of the quantiles of per-scope and
// per-tenant wait distributions: a reported p99 is within 1% of the true
// one.
const sketchAccuracy = 0.01

// sketch is a compact distribution of durations for the figures a run keeps
// per scope and per tenant, where thousands of them exist at once: a DDSketch
// whose bins are allocated in small pages as values arrive (zero waits cost
// nothing), with the count, sum and maximum kept exactly. Its memory grows
// with the spread of its values, never with their number.
type sketch struct {
	s     *ddsketch.DDSketch // nil until the first value
	n     int64
	zeros int64 // zeros not yet in s: most waits are zero, and counting them is cheaper than adding them
	sum   float64
	max   time.Duration
}

// binned is a sketch whose values are first counted in a two-byte bin
// array it holds, by their index in the mapping, and moved into the
// DDSketch (in one array of bins) when read or when a bin is full. A
// per-host distribution takes a value with every response, from one of a
// thousand hosts, so what each value touches decides the cost: one small
// array reached from here, against the sketch's own objects and its
// eight-byte bins (a thousand hosts run about 10% faster). The quantiles
// are the same, read from the same bins.
type binned struct {
	sketch
	m    *mapping.LogarithmicMapping // shared by a recorder's sketches
	pos  store.Store                 // the DDSketch's store of positive values
	bins []uint16                    // counts of indices lo, lo+1, … not yet in the DDSketch
	lo   int
}

// newSketchMapping returns the index mapping a recorder's sketches share.
func newSketchMapping() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(sketchAccuracy)
	if err != nil { // a constant accuracy in (0, 1) is always valid
		panic(err)
	}
	return m
}

// add adds d: its count, sum and maximum at once, and its place in the
// DDSketch through q. The sketch's record sits with a scope's or a
// tenant's counters, in cache when the value is recorded; the DDSketch's
// own objects, a chain of pointers into one of thousands, seldom are.
func (k *sketch) add(d time.Duration, q *sketchQueue) {
	if d <= 0 {
		k.zeros++
		k.n++
		return
	}
	k.n++
	k.sum += float64(d)
	k.max = max(k.max, d)
	q.q = append(q.q, sketchAdd{k, d})
	if len(q.q) == cap(q.q) {
		q.flush()
	}
}

// sketchQueue holds values counted by their sketches but not yet added to
// their DDSketches. Added in a batch, one value's chain of loads overlaps
// the next one's instead of stalling the run alone. A sketch is read only
// after the queue that feeds it is flushed.
type sketchQueue struct {
	m *mapping.LogarithmicMapping // shared by the recorder's sketches
	q []sketchAdd
}

// sketchQueueLen is the values a sketchQueue holds before it adds them:
// 8 KB.
const sketchQueueLen = 512

type sketchAdd struct {
	k *sketch
	d time.Duration
}

func newSketchQueue(m *mapping.LogarithmicMapping) *sketchQueue {
	return &sketchQueue{m: m, q: make([]sketchAdd, 0, sketchQueueLen)}
}

// flush adds the queued values to their DDSketches, in the order they
// came.
func (q *sketchQueue) flush() {
	for _, a := range q.q {
		k := a.k
		if k.s == nil {
			k.s = ddsketch.NewDDSketch(q.m, store.NewBufferedPaginatedStore(), store.NewBufferedPaginatedStore())
		}
		// A value below the mapping's smallest indexable one counts as
		// zero; durations are whole nanoseconds, far above it.
		_ = k.s.Add(float64(a.d))
	}
	clear(q.q) // no pointers kept past their use
	q.q = q.q[:0]
}

// add counts d now and queues the increment of its bin on q: the count,
// sum, maximum and the bins' bounds sit with the rest of the host's
// record, in cache when the response is recorded; the bin itself is seldom
// in cache.
func (k *binned) add(d time.Duration, q *binQueue) {
	if d <= 0 {
		k.zeros++
		k.n++
		return
	}
	k.n++
	k.sum += float64(d)
	k.max = max(k.max, d)
	i := k.m.Index(float64(d)) - k.lo
	if uint(i) >= uint(len(k.bins)) {
		q.flush() // the queue points into the bins that growing replaces
		i = k.grow(i + k.lo)
	}
	q.q = append(q.q, binInc{&k.bins[i], k})
	if len(q.q) == cap(q.q) {
		q.flush()
	}
}

// binQueue holds bin increments not yet made. With a thousand hosts the
// bin a response falls in is seldom in cache; made in a batch, the
// increments' loads overlap instead of stalling the run one at a time. A
// binned sketch is read, and its bins replaced, only after the queue that
// feeds it is flushed.
type binQueue struct{ q []binInc }

// binQueueLen is the increments a binQueue holds before it makes them:
// 16 KB.
const binQueueLen = 1024

type binInc struct {
	bin *uint16
	k   *binned
}

func newBinQueue() *binQueue { return &binQueue{q: make([]binInc, 0, binQueueLen)} }

// flush makes the queued increments in the order they came.
func (q *binQueue) flush() {
	for _, b := range q.q {
		*b.bin++
		if *b.bin == math.MaxUint16 {
			b.k.moveBins() // clears the bins in place: later increments stay valid
		}
	}
	clear(q.q) // no pointers kept past their use
	q.q = q.q[:0]
}

// grow widens the bins to hold index idx, with room to spare on that side,
// and returns idx's position in them.
func (k *binned) grow(idx int) int {
	if len(k.bins) == 0 {
		k.bins, k.lo = make([]uint16, 64), idx-32
		return idx - k.lo
	}
	lo, hi := k.lo, k.lo+len(k.bins)
	pad := max(16, len(k.bins)/2)
	if idx < lo {
		lo = idx - pad
	} else {
		hi = idx + 1 + pad
	}
	bins := make([]uint16, hi-lo)
	copy(bins[k.lo-lo:], k.bins)
	k.bins, k.lo = bins, lo
	return idx - lo
}

// moveBins adds the bins to the DDSketch and clears them.
func (k *binned) moveBins() {
	if k.s == nil {
		k.pos = store.NewDenseStore()
		k.s = ddsketch.NewDDSketch(k.m, k.pos, store.NewDenseStore())
	}
	for j, c := range k.bins {
		if c > 0 {
			k.pos.AddWithCount(k.lo+j, float64(c))
		}
	}
	clear(k.bins)
}

func (k *binned) dist() Dist {
	k.moveBins()
	return k.sketch.dist(k.m)
}

// dist summarises the sketch in seconds: count, mean and maximum exact,
// quantiles within sketchAccuracy and never above the maximum.
func (k *sketch) dist(m *mapping.LogarithmicMapping) Dist {
	if k.n == 0 {
		return Dist{}
	}
	if k.zeros > 0 {
		if k.s == nil {
			k.s = ddsketch.NewDDSketch(m, store.NewBufferedPaginatedStore(), store.NewBufferedPaginatedStore())
		}
		_ = k.s.AddWithCount(0, float64(k.zeros))
		k.zeros = 0
	}
	q := func(p float64) float64 {
		v, err := k.s.GetValueAtQuantile(p)
		if err != nil {
			return 0
		}
		return min(math.Round(max(v, 0)), float64(k.max)) / 1e9 // whole nanoseconds, as the exact figures
	}
	return Dist{Count: k.n, Mean: k.sum / float64(k.n) / 1e9, P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: float64(k.max) / 1e9}
}

// compactAbove is the number of hosts above which per-host distributions
// are sketches rather than HdrHistograms: a thousand hosts would otherwise
// hold two 327 KB histograms each.
const compactAbove = 16

// dist2 is a distribution kept by an HdrHistogram (3 significant figures)
// or, when there are too many of it for that, by a binned sketch.
type dist2 struct {
	h *hist
	k binned
}

func newDist2(compact bool, m *mapping.LogarithmicMapping) dist2 {
	if compact {
		return dist2{k: binned{m: m}}
	}
	return dist2{h: newHist()}
}

// add records v; a binned sketch queues its bin on q.
func (d *dist2) add(v time.Duration, q *binQueue) {
	if d.h != nil {
		d.h.add(v)
		return
	}
	d.k.add(v, q)
}

func (d *dist2) dist() Dist {
	if d.h != nil {
		return d.h.dist()
	}
	return d.k.dist()
}
