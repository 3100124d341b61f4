package metrics

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// sketchAccuracy is the relative accuracy of the quantiles of per-scope and
// per-tenant wait distributions: a reported p99 is within 1% of the true
// one.
const sketchAccuracy = 0.01

// tally is what a sketch keeps exactly: the count of its values, of its
// zeros (most waits are zero, and counting them is cheaper than adding
// them), their sum and their maximum.
type tally struct {
	n     int64
	zeros int64
	sum   float64
	max   time.Duration
}

// count counts d and reports whether it is above zero: the values a
// sketch's bins hold.
func (t *tally) count(d time.Duration) bool {
	t.n++
	if d <= 0 {
		t.zeros++
		return false
	}
	t.sum += float64(d)
	t.max = max(t.max, d)
	return true
}

// dist summarises the tally in seconds, with the quantiles of a
// DDSketch of the bins in positive (the values above zero) and the zeros:
// count, mean and maximum exact, quantiles within sketchAccuracy and never
// above the maximum. A quantile is read as DDSketch reads it, from the rank among
// the zeros and then the bins, without building the sketch: positive holds
// one count for each value above zero, so the total is the tally's.
func (t *tally) dist(m *mapping.LogarithmicMapping, positive ranker) Dist {
	if t.n == 0 {
		return Dist{}
	}
	count, zeros := float64(t.n), float64(t.zeros)
	q := func(p float64) float64 {
		rank := float64(p * (count - 1)) // no fused multiply-add, as in DDSketch
		if rank < zeros {
			return 0
		}
		v := m.Value(positive.KeyAtRank(rank - zeros))
		return min(math.Round(max(v, 0)), float64(t.max)) / 1e9 // whole nanoseconds, as the exact figures
	}
	return Dist{Count: t.n, Mean: t.sum / float64(t.n) / 1e9, P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: float64(t.max) / 1e9}
}

// ranker is what tally.dist reads of a sketch's bins (store.Store has it).
type ranker interface{ KeyAtRank(rank float64) int }

// sketch is a compact distribution of durations for the figures a run keeps
// per scope and per tenant, where thousands of them exist at once: the bins
// of a DDSketch, with the count, sum and maximum kept exactly. Its memory
// grows with the spread of its values, never with their number.
//
// The bin indices of up to sketchPending values wait in the sketch itself;
// the next value moves them out together, and so does a read. The sketch
// sits in a scope's or a tenant's record, in cache when a value is
// recorded; what the values move into, one of thousands, seldom is, and is
// reached about once per sketchPending values.
type sketch struct {
	positive *sketchBins // nil until the first values move out
	tally
	pending [sketchPending]uint16 // bin index + 1 of each value not yet in positive, from the front; 0: free
}

// sketchPending is how many values a sketch holds back from its bins: what
// fills a scope's or a tenant's record to one cache line.
const sketchPending = 4

// sketchBins holds a sketch's values above zero: the bin indices of the
// latest in a small array of its own, the others counted in a DDSketch
// store. Most of ten thousand tenants' or scopes' sketches take a few
// dozen values above zero in a run; they then cost one small object
// without pointers to follow, against a store's object and the buffer it
// grows by doubling (five allocations and three copies for twenty
// values). The quantiles are the same: the store is exact, and the
// array is read as the store reads its own buffer.
type sketchBins struct {
	store   *store.BufferedPaginatedStore // nil until the array first fills
	n       int                           // how many of indices are in use
	indices [sketchListLen]uint16         // bin indices of values not in store
}

// sketchListLen is how many bin indices a sketchBins holds apart from its
// store: 64 bytes, which with the store pointer and the count make an
// 80-byte object, an allocation size class.
const sketchListLen = 32

// add adds a value of bin index i.
func (b *sketchBins) add(i uint16) {
	if b.n == len(b.indices) {
		b.flush()
	}
	b.indices[b.n] = i
	b.n++
}

// flush moves the indices of the array into the store.
func (b *sketchBins) flush() {
	if b.n == 0 {
		return
	}
	if b.store == nil {
		b.store = store.NewBufferedPaginatedStore()
	}
	for _, i := range b.indices[:b.n] {
		b.store.Add(int(i))
	}
	b.n = 0
}

// KeyAtRank returns the bin index of the value at rank (from 0, in
// ascending order), as store.Store.KeyAtRank does: the least index whose
// cumulative count exceeds rank; the greatest index beyond the last rank;
// 0 if there is none.
func (b *sketchBins) KeyAtRank(rank float64) int {
	if b.store != nil {
		b.flush()
		return b.store.KeyAtRank(rank)
	}
	if b.n == 0 {
		return 0
	}
	indices := b.indices[:b.n]
	slices.Sort(indices)
	// The count up to and including indices[j] is j+1 (or more, with equal
	// indices after it, which answer the same); the first to exceed rank
	// is at j = ⌊rank⌋. None exceeds a rank at or past the count, or NaN.
	if !(rank < float64(len(indices))) {
		return int(indices[len(indices)-1])
	}
	return int(indices[int(max(rank, 0))])
}

// add adds d; m is the mapping of the recorder's sketches.
func (k *sketch) add(d time.Duration, m *sketchMapping) {
	if !k.count(d) {
		return
	}
	// Durations are whole nanoseconds, far above the mapping's smallest
	// indexable value (below it a value would count as zero), and their
	// indices far below the two bytes' limit.
	i := m.index(d)
	if uint(i) >= math.MaxUint16 {
		k.movePending()
		k.positive.flush()
		if k.positive.store == nil {
			k.positive.store = store.NewBufferedPaginatedStore()
		}
		k.positive.store.Add(i)
		return
	}
	for j := range k.pending {
		if k.pending[j] == 0 {
			k.pending[j] = uint16(i + 1)
			return
		}
	}
	k.movePending()
	k.pending[0] = uint16(i + 1)
}

// movePending moves the pending values into the bins, in the order they
// came.
func (k *sketch) movePending() {
	if k.positive == nil {
		k.positive = new(sketchBins)
	}
	for j, i := range k.pending {
		if i == 0 {
			break
		}
		k.positive.add(i - 1)
		k.pending[j] = 0
	}
}

// dist summarises the sketch in seconds (see tally.dist).
func (k *sketch) dist(m *sketchMapping) Dist {
	if k.n == 0 {
		return Dist{}
	}
	k.movePending()
	return k.tally.dist(m.LogarithmicMapping, k.positive)
}

// binned is a sketch whose values are first counted in a two-byte bin
// array it holds, by their index in the mapping, and moved into positive, a
// DDSketch store of eight-byte bins, when read or when a bin is full. A
// per-host distribution takes a value with every response, from one of a
// thousand hosts, so what each value touches decides the cost: one small
// array reached from here, against a store's own objects and its
// eight-byte bins (a thousand hosts run about 10% faster). The quantiles
// are the same, read from a DDSketch over positive.
type binned struct {
	tally
	m        *sketchMapping    // sharedSketchMapping()
	positive *store.DenseStore // the bins moved out of bins; nil until the first move
	bins     []uint16          // counts of indices low, low+1, … not yet in positive
	low      int
}

// newSketchMapping returns a new mapping of sketchAccuracy; every
// recorder's sketches share one, sharedSketchMapping.
func newSketchMapping() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(sketchAccuracy)
	if err != nil { // a constant accuracy in (0, 1) is always valid
		panic(err)
	}
	return m
}

// sketchMapping is a logarithmic mapping with a faster, exact index for
// durations. The mapping's own Index takes a logarithm: a long chain of
// dependent floating-point steps, two with every response of a thousand
// hosts. index finds the same bin from the float's exponent and top bits
// and a comparison or two with the bins' bounds.
type sketchMapping struct {
	*mapping.LogarithmicMapping
	base int // the index of 1 ns: the tables' first
	// start holds, for each 64th of an octave of the values from 1 up
	// (a float64's exponent and the top six bits of its significand),
	// the index of its lowest value minus base: edges[start] is at or
	// below every value of that 64th. Empty: index takes the logarithm.
	start []uint16
	// edges[j] is where index base+j begins, m.LowerBound(base+j), and
	// its guard band, as float64 bits.
	edges []edge
}

// edge is a bin's lower bound b and the guard band around it, as the bits
// of b, b·(1+indexGuard) and b·(1−indexGuard).
type edge struct{ at, above, below uint64 }

// indexGuard is how near (relatively) a bin's bound a value must be for
// index to leave it to the mapping's logarithm. Farther off, the index
// value, log·multiplier + offset, is at least indexGuard·multiplier
// (5·10⁻⁸ for the sketches' 1%) away from a whole number, which its
// rounding cannot cross: both ways give the same bin. That rests on two
// things: the bounds, from the exponential, are within about 10⁻¹⁵ of
// themselves, and the index values are small enough that a rounding step
// of theirs is far below the band (indexMapping builds no tables for a
// mapping whose offset makes them larger).
const indexGuard = 1e-9

// sharedSketchMapping returns the mapping every recorder's sketches use,
// with its index tables, built once. It is read-only: recorders in
// parallel sweep workers share it.
var sharedSketchMapping = sync.OnceValue(func() *sketchMapping { return indexMapping(newSketchMapping()) })

// indexMapping builds index tables for m. Durations run from 1 ns to
// below 2⁶³ ns: 63 octaves of 64 entries each, and a bound for each index
// they reach.
func indexMapping(m *mapping.LogarithmicMapping) *sketchMapping {
	indexed := &sketchMapping{LogarithmicMapping: m, base: m.Index(1)}
	span := m.Index(math.Ldexp(1, 63)) - indexed.base + 2
	if indexed.base < 0 || span > math.MaxUint16 {
		return indexed // negative indices round differently; too many to table
	}
	// The guard band in index units against a rounding step of the
	// largest index value (see indexGuard).
	a := m.RelativeAccuracy()
	band := indexGuard / math.Log1p(2*a/(1-a)) // indexGuard·multiplier
	if top := float64(indexed.base + span); band < 100*(math.Nextafter(top, math.Inf(1))-top) {
		return indexed
	}
	bound := make([]float64, span+1)
	for j := range bound {
		bound[j] = m.LowerBound(indexed.base + j)
		if j > 0 && !(bound[j] > bound[j-1]) {
			return indexed
		}
	}
	start := make([]uint16, 63<<6)
	for s := range start {
		low := math.Float64frombits(uint64(s+1023<<6) << 46)
		j := max(0, m.Index(low)-indexed.base)
		for j > 0 && bound[j] > low {
			j--
		}
		for bound[j+1] <= low {
			j++
		}
		// index steps up once at most: a 64th of an octave holds one
		// bound at most (each is about half an index wide at 1%).
		if next := math.Float64frombits(uint64(s+1+1023<<6) << 46); bound[j+2] < next {
			return indexed
		}
		start[s] = uint16(j)
	}
	edges := make([]edge, len(bound))
	for j, b := range bound {
		edges[j] = edge{math.Float64bits(b), math.Float64bits(b * (1 + indexGuard)), math.Float64bits(b * (1 - indexGuard))}
	}
	indexed.start, indexed.edges = start, edges
	return indexed
}

// index returns m.Index(float64(d)) for a duration d of at least 1 ns.
func (m *sketchMapping) index(d time.Duration) int {
	if i, ok := m.tableIndex(d); ok {
		return i
	}
	return m.Index(float64(d))
}

// tableIndex returns d's index from the tables, and false for a value in
// a guard band or out of their range. Positive float64s compare as their
// bits do. Whether the value is past the bound in its 64th of an octave
// is added as the sign of a difference rather than branched on: the
// answer varies from value to value, which a branch would often guess
// wrong.
func (m *sketchMapping) tableIndex(d time.Duration) (int, bool) {
	v := math.Float64bits(float64(d))
	if s := int(v>>46) - 1023<<6; uint(s) < uint(len(m.start)) {
		j := int(m.start[s])
		j += 1 + int((int64(v)-int64(m.edges[j+1].at))>>63) // +1 at or past the bound, else +0
		if v > m.edges[j].above && v < m.edges[j+1].below {
			return m.base + j, true
		}
	}
	return 0, false
}

// parallelDistsFrom is the number of sketches from which dists reads
// them on two goroutines: reading one (ordering its bins, walking them to
// three ranks) takes about a microsecond, and ten thousand tenants have
// two each.
const parallelDistsFrom = 1024

// dists returns dist(i) for i in [0, n): the summaries of n sketches, on
// two goroutines when there are many. Each call reads and orders only its
// own sketch's bins, so the summaries are the same however the calls
// interleave.
func dists(n int, dist func(i int) Dist) []Dist {
	out := make([]Dist, n)
	var wg sync.WaitGroup
	half := 0
	if n >= parallelDistsFrom {
		half = n / 2
		wg.Go(func() {
			for i := range half {
				out[i] = dist(i)
			}
		})
	}
	for i := half; i < n; i++ {
		out[i] = dist(i)
	}
	wg.Wait()
	return out
}

// add counts d now and queues the increment of its bin on q: the count,
// sum, maximum and the bins' bounds sit with the rest of the host's
// record, in cache when the response is recorded; the bin itself is seldom
// in cache.
func (k *binned) add(d time.Duration, q *binQueue) {
	if !k.count(d) {
		return
	}
	i := k.m.index(d) - k.low
	if uint(i) >= uint(len(k.bins)) {
		q.flush() // the queue points into the bins that growing replaces
		i = k.grow(i + k.low)
	}
	q.increments = append(q.increments, binIncrement{&k.bins[i], k})
	if len(q.increments) == cap(q.increments) {
		q.flush()
	}
}

// binQueue holds bin increments not yet made. With a thousand hosts the
// bin a response falls in is seldom in cache; made in a batch, the
// increments' loads overlap instead of stalling the run one at a time. A
// binned sketch is read, and its bins replaced, only after the queue that
// feeds it is flushed.
type binQueue struct{ increments []binIncrement }

// binQueueLen is the increments a binQueue holds before it makes them:
// 16 KB.
const binQueueLen = 1024

// binIncrement is a queued increment of bin, a bin of owner.
type binIncrement struct {
	bin   *uint16
	owner *binned
}

func newBinQueue() *binQueue { return &binQueue{increments: make([]binIncrement, 0, binQueueLen)} }

// flush makes the queued increments in the order they came.
func (q *binQueue) flush() {
	for _, b := range q.increments {
		*b.bin++
		if *b.bin == math.MaxUint16 {
			b.owner.moveBins() // clears the bins in place: later increments stay valid
		}
	}
	clear(q.increments) // no pointers kept past their use
	q.increments = q.increments[:0]
}

// grow widens the bins to hold index, with room to spare on that side,
// and returns its position in them.
func (k *binned) grow(index int) int {
	if len(k.bins) == 0 {
		k.bins, k.low = make([]uint16, 64), index-32
		return index - k.low
	}
	low, high := k.low, k.low+len(k.bins)
	pad := max(16, len(k.bins)/2)
	if index < low {
		low = index - pad
	} else {
		high = index + 1 + pad
	}
	bins := make([]uint16, high-low)
	copy(bins[k.low-low:], k.bins)
	k.bins, k.low = bins, low
	return index - low
}

// moveBins adds the bins to positive and clears them.
func (k *binned) moveBins() {
	if k.positive == nil {
		k.positive = store.NewDenseStore()
	}
	for j, c := range k.bins {
		if c > 0 {
			k.positive.AddWithCount(k.low+j, float64(c))
		}
	}
	clear(k.bins)
}

// dist summarises the binned sketch in seconds (see tally.dist). Bins
// that never moved out are ranked where they are: a DDSketch store built
// to be read three times, two for each of a thousand hosts, took longer
// than the run's own work on them.
func (k *binned) dist() Dist {
	if k.n == 0 {
		return Dist{}
	}
	if k.positive == nil {
		return k.tally.dist(k.m.LogarithmicMapping, binRanks{low: k.low, bins: k.bins})
	}
	k.moveBins()
	return k.tally.dist(k.m.LogarithmicMapping, k.positive)
}

// binRanks ranks the counts of indices low, low+1, … as a DDSketch
// DenseStore holding them ranks its own (store.DenseStore.KeyAtRank): the
// first index at which the running count exceeds rank (a negative rank
// read as 0), or the greatest index counted if none does (rank NaN, or at
// least the total). The running count is a sum of whole numbers in index
// order, as the store's, so the answer is the same to the index.
type binRanks struct {
	low  int
	bins []uint16
}

// KeyAtRank returns the index at rank.
func (b binRanks) KeyAtRank(rank float64) int {
	if rank < 0 {
		rank = 0
	}
	var n float64
	last := 0
	for j, c := range b.bins {
		if c == 0 {
			continue
		}
		n += float64(c)
		last = b.low + j
		if n > rank {
			return last
		}
	}
	return last
}

// compactAbove is the number of hosts above which per-host distributions
// are sketches rather than HdrHistograms: a thousand hosts would otherwise
// hold two 327 KB histograms each.
const compactAbove = 16

// hostDist is a per-host distribution: kept by an HdrHistogram (3
// significant figures) or, when there are too many hosts for that, by a
// binned sketch.
type hostDist struct {
	histogram *hist // nil when compact
	compact   binned
}

func newHostDist(compact bool, m *sketchMapping) hostDist {
	if compact {
		return hostDist{compact: binned{m: m}}
	}
	return hostDist{histogram: newHist()}
}

// add records v; a binned sketch queues its bin on q.
func (d *hostDist) add(v time.Duration, q *binQueue) {
	if d.histogram != nil {
		d.histogram.add(v)
		return
	}
	d.compact.add(v, q)
}

// dist summarises the distribution in seconds.
func (d *hostDist) dist() Dist {
	if d.histogram != nil {
		return d.histogram.dist()
	}
	return d.compact.dist()
}
